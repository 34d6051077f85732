"""Produce's and Fetch's answers are built in their classes' mutable twins (frozen.mutable_twin);
where a class grew something a twin cannot reproduce the twin is None and the answer is built by
the class itself. Both ways must give equal answers (the fallback is otherwise never taken)."""

from __future__ import annotations

import pytest

from kafka_emu.broker.handlers import fetch, produce_fast


# (Produce's response is built in produce_fast.py, for its fast path and produce.py alike)
@pytest.mark.parametrize("module, build", [(fetch, "_response"),
                                           (produce_fast, "produce_response")],
                         ids=["fetch", "produce"])
def test_the_response_fallback_builds_the_same_answer(module, build, monkeypatch):
    built = getattr(module, build)([])
    assert type(built).__name__.endswith("Response")
    monkeypatch.setattr(module, "_BuildingResponse", None)
    assert getattr(module, build)([]) == built
    assert type(getattr(module, build)([])) is type(built)
