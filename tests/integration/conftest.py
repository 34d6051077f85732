"""Fixtures for the real-client integration tests (each test talks to kafka-emu over TCP)."""

from __future__ import annotations

import pytest

from .helpers import unique


@pytest.fixture
def topic_name():
    return unique("topic")


@pytest.fixture
def group_id():
    return unique("group")
