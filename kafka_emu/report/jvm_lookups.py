"""Classes and methods of the driver's JVM looked up once per process, not on every call.

Theory of operation. Every ``pyspark.sql.functions`` call (``F.col``, ``F.when``, ...) on a
classic session is three round trips to the driver's JVM through py4j: one to find the class
``org.apache.spark.sql.functions`` by name (``JVMView.__getattr__``), one to find the method on
it by reflection (``JavaClass.__getattr__``), and the call. py4j keeps neither answer. A small
report makes about a thousand such calls per planning thread, and the lookups were two thirds
of its round trips (4,625 of a small report's planning threads' round trips, 2,560 without
them). On the two-core machine, eight rounds interleaved with the tree before, a 309-event
report's job took a median 7.26 s against 7.57 s (the driver JVM's CPU 10.9 s against 11.2 s):
a small gain, and the same on every report.

``install()`` keeps, per JVM view and per class, what a lookup found when it found a class or a
method: both are facts of a running JVM that do not change (a loaded class stays loaded, and
its methods with it). Anything else is asked every time, as before: a static field's value
(it may change), a name that is not yet a class (a package, or nothing: a jar added later may
make it one), an error. One caveat, deliberate: a short name (``jvm.PythonUtils``) resolves
through the view's imports, and a ``java_import`` made after the first lookup that brings a
different class of the same short name would not be seen; pyspark makes its imports as the
session starts, and the report makes none.

Spark Connect sessions do not use py4j; for them this changes nothing.
"""

from __future__ import annotations

from typing import Any, Callable

_CACHE = "_kafka_emu_lookups"  # (the attribute each view and class keeps its finds in)


def _caching(lookup: Callable[[Any, str], Any], keep: Callable[[Any], bool]
             ) -> Callable[[Any, str], Any]:
    def cached(self: Any, name: str) -> Any:
        found_before = self.__dict__.get(_CACHE)
        if found_before is None:
            found_before = self.__dict__[_CACHE] = {}
        found = found_before.get(name)
        if found is None:
            found = lookup(self, name)
            if keep(found):
                found_before[name] = found
        return found
    cached.uncached = lookup  # type: ignore[attr-defined]
    return cached


def install() -> None:
    """Cache class and method lookups in this process (idempotent; every thread shares it)."""
    from py4j import java_gateway as gateway
    if getattr(gateway.JVMView.__getattr__, "uncached", None) is not None:
        return
    gateway.JVMView.__getattr__ = _caching(  # type: ignore[method-assign]
        gateway.JVMView.__getattr__, lambda found: type(found) is gateway.JavaClass)
    gateway.JavaClass.__getattr__ = _caching(  # type: ignore[method-assign]
        gateway.JavaClass.__getattr__,
        lambda found: type(found) in (gateway.JavaMember, gateway.JavaClass))


def installed() -> bool:
    from py4j import java_gateway as gateway
    return getattr(gateway.JVMView.__getattr__, "uncached", None) is not None
