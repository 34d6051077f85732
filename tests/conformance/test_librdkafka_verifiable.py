"""librdkafka's own ``kafkatest_verifiable_client`` against the kit, live (issue 37 item 2).

The program is built from Debian's source package of the installed librdkafka
(``kafka_emu/conformance/librdkafka_build.py``: ``apt-get source`` through a ``deb-src`` entry,
compiled against ``librdkafka-dev``) into kafka-emu's cache, once per machine. Where it cannot
be built these tests are skipped with the reason, except under ``CI=true`` where they fail: CI
is expected to provide the deb-src entry, librdkafka-dev and g++ (see .ci/run).

The program is run as it is: the profile is detected from its ``--help``, the kit's settings
(acks, group.instance.id, ...) reach it through the contract's properties file.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_emu.conformance import librdkafka_build, replay, verdicts

RECORDED = Path(__file__).with_name("streams") / "runs"

# Scenarios whose outcome says most about the program's dialect: the producer (acks=all from
# the properties file), consumers bouncing (records_consumed ranges, eager revocations), static
# membership (group.instance.id from the properties file; the program has no flag for it),
# auto-commit (its late report of the commit made inside unassign()).
MUST_PASS = ["produce_consume_validate", "consumer_bounce_hard_rolling",
             "static_consumer_bounce_rolling", "fencing_static_consumer_all",
             "consumer_failure_autocommit"]
RESULT = re.compile(r"^(PASS|FAIL|SKIP)  (\S+)\s+[0-9.]+s(?: -- (.*))?$")


@pytest.fixture(scope="module")
def verifiable_client() -> str:
    try:
        return str(librdkafka_build.client())
    except librdkafka_build.BuildUnavailable as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"kafkatest_verifiable_client unavailable: {exc}; CI must provide a "
                        "deb-src entry, librdkafka-dev and g++ (see .ci/run)", pytrace=False)
        pytest.skip(f"kafkatest_verifiable_client unavailable: {exc}")


def test_the_build_helper_prints_the_programs_path(verifiable_client):
    proc = subprocess.run([sys.executable, "-m", "kafka_emu.conformance.librdkafka_build"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == verifiable_client
    help_ = subprocess.run([verifiable_client, "--help"], capture_output=True, text=True,
                           timeout=60, check=False)
    assert "librdkafka version" in help_.stdout + help_.stderr


def test_a_source_version_apt_does_not_have_is_one_line_naming_apt(tmp_path,
                                                                   verifiable_client):
    with pytest.raises(librdkafka_build.BuildUnavailable) as caught:
        librdkafka_build.build("0.0.0-0", tmp_path)
    assert "apt-get source librdkafka=0.0.0-0 failed: E: " in str(caught.value)
    assert "\n" not in str(caught.value)


def test_without_the_dev_package_it_says_what_to_install(monkeypatch):
    if not librdkafka_build.shutil.which("dpkg-query"):
        pytest.skip("not a Debian-like system")
    monkeypatch.setattr(librdkafka_build, "DEV_PACKAGE", "kafka-emu-no-such-package")
    with pytest.raises(librdkafka_build.BuildUnavailable,
                       match="needs kafka-emu-no-such-package, which is not installed "
                       r"\(apt-get install librdkafka-dev g\+\+\)"):
        librdkafka_build.installed_version()
    assert librdkafka_build.find() is None


def test_without_dpkg_source_the_example_read_from_the_upstream_tarball_is_debians(
        verifiable_client):
    # Debian 2.0.2-1 patches only a Makefile: both ways give the same program
    where = librdkafka_build.build_dir(librdkafka_build.installed_version())
    assert librdkafka_build._from_tarball(where) == \
        (where / f"{librdkafka_build.PROGRAM}.cpp").read_text(encoding="utf-8")


def _catalogue(program: str, *scenarios: str) -> tuple[dict[str, tuple[str, str]], str]:
    argv = [sys.executable, "-m", "kafka_emu", "conformance", "--name", "librdkafka",
            "--consumer", f"{program} --consumer", "--producer", f"{program} --producer"]
    for name in scenarios:
        argv += ["--scenario", name]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False)
    results = {m[2]: (m[1], m[3] or "") for m in map(RESULT.match, proc.stdout.splitlines())
               if m}
    return results, proc.stdout + proc.stderr


def test_librdkafka_runs_the_whole_catalogue_as_it_is(verifiable_client):
    """Issue 37's done-when: every scenario passes, or is skipped naming what the program
    lacks, or fails only for a bug of the program the profile names with its evidence
    (about 2 minutes).

    One more bug of the program is a race: a records_consumed line printed twice within the
    millisecond after its SIGTERM handler ran (``_totcount`` unchanged, so no record was read in
    between). The likeliest cause: the handler writes to std::cerr, which is not
    async-signal-safe and is tied to std::cout, so it flushes std::cout's pending line from
    inside the signal while the main thread is flushing the same line. It was judged
    consumed-out-of-order ("consumed from 255, expected 305") in about one catalogue run of two
    in CI, twice in a row once; the tracker now leaves such a line out (record.py, counted as
    ``repeated_lines``). A scenario failing for another reason still runs once more and must
    pass then (a fault of the kit or the emulator fails both times)."""
    from kafka_emu.conformance.scenarios import CATALOGUE

    results, out = _catalogue(verifiable_client)
    assert "profile librdkafka (detected: its --help output says 'librdkafka version')" in out
    assert set(results) == set(CATALOGUE), out
    raced = [name for name, (verdict, reason) in results.items()
             if verdict == "FAIL" and not reason.startswith("known librdkafka bug: ")]
    if raced:
        again, out = _catalogue(verifiable_client, *raced)
        results.update({name: again.get(name, ("FAIL", out)) for name in raced})
    for name in MUST_PASS:
        assert results[name][0] == "PASS", (name, results[name])
    assert results["cooperative_valid_assignment"][0] == "SKIP"
    assert "eager-only rebalance callback" in results["cooperative_valid_assignment"][1]
    for name, (verdict, reason) in results.items():
        assert verdict != "FAIL" or reason.startswith("known librdkafka bug: "), (name, reason)


def test_the_recorded_producer_had_every_send_acknowledged():
    """Recorded from the real program (no build needed): acks=all reached it through its
    properties file (issue 37: it read ``--acks -1`` as a missing value and got 0 acks)."""
    rec = replay.load(RECORDED / "librdkafka_real_produce_consume_validate.stream")
    log_end = {replay._tp(k): v for k, v in rec.params["log_end"].items()}
    assert sum(log_end.values()) == 300
    assert verdicts.producer_delivery(rec.log.snapshot(), "p1", 300, log_end) == []
    assert verdicts.producer_delivery(rec.log.snapshot(), "p1", 301, log_end) != []


def test_the_consumer_protocol_is_refused_for_it_naming_why(verifiable_client):
    """Its rebalance callback assigns with assign()/unassign(), which librdkafka refuses for
    the consumer protocol's incremental assignments; run anyway it failed every scenario with
    'No such configuration property: "group.protocol"' (2.0.2)."""
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_emu", "conformance", "--name", "librdkafka",
         "--consumer", f"{verifiable_client} --consumer", "--group-protocol", "consumer"],
        capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "librdkafka cannot run on the consumer protocol: librdkafka's " \
           "kafkatest_verifiable_client assigns with assign()/unassign()" in proc.stderr
