"""Produce's and Fetch's answers are built in their classes' mutable twins (frozen.mutable_twin);
where a class grew something a twin cannot reproduce the twin is None and the answer is built by
the class itself. Both ways must give equal answers (the fallback is otherwise never taken)."""

from __future__ import annotations

import pytest

from kafka_emu.broker.handlers import fetch, produce


@pytest.mark.parametrize("module", [fetch, produce], ids=["fetch", "produce"])
def test_the_response_fallback_builds_the_same_answer(module, monkeypatch):
    built = module._response([])
    assert type(built).__name__.endswith("Response")
    monkeypatch.setattr(module, "_BuildingResponse", None)
    assert module._response([]) == built
    assert type(module._response([])) is type(built)
