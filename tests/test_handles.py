"""The handles as Python sees them: every public method documented, with its real signature
(no ``*args``), blocking on ``Emulator`` and ``async`` on ``AsyncEmulator``; both offer the
same methods. (What type checkers see is tests/typing/emulator_usage.py.)"""

from __future__ import annotations

import inspect

import pytest

from kafka_emu.testing import AsyncEmulator, Emulator


def _public(cls: type) -> dict[str, object]:
    return {name: getattr(cls, name) for name in dir(cls)
            if not name.startswith("_") and callable(getattr(cls, name))}


def test_both_handles_offer_the_same_documented_methods():
    sync, awaited = _public(Emulator), _public(AsyncEmulator)
    assert sorted(sync) == sorted(awaited)
    undocumented = [name for name, fn in sync.items() if not inspect.getdoc(fn)]
    assert undocumented == []


@pytest.mark.parametrize("name", sorted(_public(Emulator)))
def test_each_method_has_its_real_signature_and_kind(name):
    sync, awaited = getattr(Emulator, name), getattr(AsyncEmulator, name)
    assert not inspect.iscoroutinefunction(sync)
    assert inspect.iscoroutinefunction(awaited)
    signature = inspect.signature(sync)
    assert list(signature.parameters)[0] == "self"
    assert not any(p.kind is p.VAR_POSITIONAL for p in signature.parameters.values())
    if name != "wait_for":  # the only method each handle writes itself
        assert inspect.signature(awaited) == signature


async def test_the_untyped_helpers_still_run_operations_on_both_handles():
    from kafka_emu.testing import make_config, open_emulator, run_in_thread
    with run_in_thread(make_config(clock="manual")) as emu:
        assert emu._op("advance", ms=5)["advanced_ms"] == 5
        assert emu._run(lambda: emu.broker.now_ms()) == emu.clock()["now_ms"]
    async with open_emulator(make_config(clock="manual")) as async_emu:
        assert (await async_emu._op("advance", ms=7))["advanced_ms"] == 7
        assert await async_emu._run(lambda: 3) == 3


def _flat(error: BaseException) -> list[BaseException]:
    """``error`` and what its exception groups hold, at any depth."""
    return [error, *(e for inner in getattr(error, "exceptions", ()) for e in _flat(inner))]


def test_a_call_after_the_loop_ended_on_an_error_says_which_error():
    # a task of the server's nursery that fails ends the emulator's loop; the next call through
    # the handle must name that failure, not only trio's "run() has exited" (a conformance
    # scenario once failed with nothing else to go on)
    import trio

    from kafka_emu.testing import make_config, run_in_thread

    class Boom(Exception):
        pass

    async def fail() -> None:
        raise Boom("a server task failed")

    with pytest.raises(BaseException) as raised:  # noqa: PT011 -- the loop's own error, below
        with run_in_thread(make_config(clock="manual")) as emu:
            emu._run(lambda: emu.broker.cluster_moves.nursery.start_soon(fail))
            for _ in range(200):  # (the loop ends at its next scheduling round)
                try:
                    emu.clock()
                except trio.RunFinishedError:
                    raise AssertionError("the call said only that the loop had ended") from None
                except RuntimeError as exc:
                    assert "ended on an error" in str(exc)
                    assert isinstance(exc.__cause__, BaseException)
                    assert any(isinstance(e, Boom) for e in _flat(exc.__cause__)), exc.__cause__
                    raise
                import time
                time.sleep(0.01)
            raise AssertionError("the loop did not end")
    assert "ended on an error" in str(raised.value)
