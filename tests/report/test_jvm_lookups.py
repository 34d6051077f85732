"""The driver JVM's classes and methods looked up once (kafka_emu/report/jvm_lookups.py), on the
report tests' real SparkSession: the round trips py4j sends, counted on its client."""

from __future__ import annotations

import threading

import pytest

from kafka_emu.report import jvm_lookups


@pytest.fixture
def commands(spark, monkeypatch):
    """Every command this process sends the JVM during the test (its first line: the kind)."""
    client = spark.sparkContext._gateway._gateway_client
    sent: list[str] = []
    send = type(client).send_command

    def counting(self, command, *args, **kwargs):
        # (not py4j's "m" commands: its finalizers release Java objects whenever Python's
        # garbage collector runs, from any test, and one landing inside a count made it 41)
        if not command.startswith("m\n"):
            sent.append(command)
        return send(self, command, *args, **kwargs)
    monkeypatch.setattr(type(client), "send_command", counting)
    return sent


def _reflections(sent: list[str]) -> list[str]:
    return [c for c in sent if c.startswith("r\n")]  # (py4j's REFLECTION_COMMAND_NAME)


def test_a_function_call_is_one_round_trip_once_looked_up(spark, commands):
    from pyspark.sql import functions as F
    jvm_lookups.install()
    F.col("warm")  # (the first call may look up the class and the method)
    commands.clear()
    columns = [F.col(f"c{i}") for i in range(40)]
    assert _reflections(commands) == []
    assert len(commands) == 40
    # and the columns are Spark's own: they resolve against a DataFrame
    df = spark.range(1).select(*(F.lit(1).alias(f"c{i}") for i in range(40)))
    assert df.select(*columns).first() == tuple([1] * 40)


def test_without_the_cache_each_call_looks_up_class_and_method(spark, commands, monkeypatch):
    """The control: what the cache saves, measured the same way (this fails if install() ever
    became a no-op that the first test could not tell from py4j's own behaviour)."""
    from py4j import java_gateway as gateway
    from pyspark.sql import functions as F
    jvm_lookups.install()
    monkeypatch.setattr(gateway.JVMView, "__getattr__", gateway.JVMView.__getattr__.uncached)
    monkeypatch.setattr(gateway.JavaClass, "__getattr__",
                        gateway.JavaClass.__getattr__.uncached)
    commands.clear()
    for i in range(10):
        F.col(f"c{i}")
    assert len(_reflections(commands)) == 20
    assert len(commands) == 30


def test_only_classes_and_methods_are_kept(spark, commands):
    from py4j.protocol import Py4JError
    jvm_lookups.install()
    jvm = spark.sparkContext._jvm
    integer = jvm.java.lang.Integer
    assert integer.MAX_VALUE == 2**31 - 1 and integer.MAX_VALUE == 2**31 - 1
    assert integer.parseInt("42") == 42 and integer.parseInt("7") == 7
    commands.clear()
    assert integer.MAX_VALUE == 2**31 - 1  # a static field's value: asked every time
    assert integer.parseInt("5") == 5  # a method: found before, only called
    assert len(_reflections(commands)) == 1
    for _ in range(2):  # a name that is no member: asked (and an error) every time
        with pytest.raises(Py4JError):
            getattr(integer, "noSuchMemberAnywhere")
    assert len(_reflections(commands)) == 3
    # packages (a jar added later may put a class of such a name there): each of the two
    # steps, java and java.lang, asked again
    assert getattr(jvm.java, "lang") is not getattr(jvm.java, "lang")
    assert len(_reflections(commands)) == 7


def test_a_looked_up_method_serves_every_thread(spark):
    """py4j gives each Python thread its own connection to the JVM; a method found on one
    thread is called on another's."""
    from pyspark.sql import functions as F
    jvm_lookups.install()
    F.upper(F.col("warm"))
    found: list = []

    def other() -> None:
        found.append(spark.range(1).select(F.upper(F.lit("abc")).alias("u")).first()["u"])
    thread = threading.Thread(target=other)
    thread.start()
    thread.join(60)
    assert found == ["ABC"]
