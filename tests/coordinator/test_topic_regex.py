"""SubscribedTopicRegex as Kafka reads it: RE2/J's syntax (re2j 1.8, what Kafka 4.x ships),
matched by RE2 in linear time. The verdicts and descriptions below were taken from re2j 1.8 itself
(``Pattern.compile`` / ``matcher(s).matches()``), so each row is a fact about Kafka, not about us.
"""

from __future__ import annotations

import pytest

from kafka_emu.coordinator.consumer import regex
from kafka_emu.coordinator.consumer.regex import compile_topic_regex, matching_topics, regex_error
from kafka_emu.errors import ErrorCode as E

from .consumer_harness import CG

REFUSED_BY_RE2J = [
    ('a{1001}', 'invalid repeat count'),
    ('\\C', 'invalid escape sequence'),
    ('(?P<n>a)|(?P<n>b)', 'duplicate capture group name'),
    ('{*', 'invalid nested repetition operator'),
    ('\\p{Kawi}', 'invalid character class range'),
    ('[[:]]', 'invalid character class range'),
    ('a**', 'invalid nested repetition operator'),
    ('(?=a)', 'invalid or unsupported Perl syntax'),
    ('(a)\\1', 'invalid escape sequence'),
    ('\\Z', 'invalid escape sequence'),
    ('a[', 'missing closing ]'),
    ('(', 'missing closing )'),
    (')', 'regexp/syntax: internal error'),
    ('\\', 'trailing backslash at end of expression'),
    ('*', 'missing argument to repetition operator'),
    ('(?x)a', 'invalid or unsupported Perl syntax'),
    ('(?P<>a)', 'invalid named capture'),
    ('x{2,1}', 'invalid repeat count'),
    ('\\8', 'invalid escape sequence'),
    ('[[:foo:]]', 'invalid character class range'),
]

ACCEPTED_BY_RE2J = [  # pattern, subject, matches()
    ('a{1000}', '', False),
    ('\\Q.\\E', '.', True),
    ('\\é', 'é', True),
    ('[\\é]', 'é', True),
    ('\\pN', '1', True),
    ('\\p{Greek}', 'a', False),
    ('(a*)*b', 'aaab', True),
    ('orders-.*', 'orders-eu', True),
    ('(?i)ORDERS', 'orders', True),
    ('\\d+', '١', False),
    ('\\w+', 'é', False),
    ('(?<n>a)', 'a', True),
    ('\\x{41}{2}', 'AA', True),
]


@pytest.mark.parametrize("pattern,description", REFUSED_BY_RE2J)
def test_refused_with_re2js_description(pattern, description):
    assert compile_topic_regex(pattern) is None
    assert regex_error(pattern) == description


@pytest.mark.parametrize("pattern,subject,matches", ACCEPTED_BY_RE2J)
def test_accepted_and_matched_as_re2j(pattern, subject, matches):
    assert regex_error(pattern) is None
    assert compile_topic_regex(pattern).matches(subject) is matches


def test_heartbeat_error_message_is_kafkas():
    r = CG().hb("a", 0, subscribed_topic_regex="a{1001}")
    assert r.error == E.INVALID_REGULAR_EXPRESSION
    assert r.error_message == ("SubscribedTopicRegex `a{1001}` is not a valid regular expression: "
                               "invalid repeat count.")


def test_backtracking_pattern_matches_long_topic_names():
    # (a*)*b against 'a'*n + '-' took 2**n steps in Python's re; RE2 reads each name once.
    pattern = compile_topic_regex("(a*)*b")
    topics = {"a" * 240 + "-": 1, "a" * 100 + "b": 1}
    assert matching_topics(pattern, topics) == {"a" * 100 + "b"}


def test_over_long_pattern_is_refused_before_compiling():
    pattern = "a" * (regex.MAX_PATTERN_CHARS + 1)
    assert regex_error(pattern) == (f"pattern too long ({regex.MAX_PATTERN_CHARS + 1} characters, "
                                    f"at most {regex.MAX_PATTERN_CHARS})")


def test_program_over_max_mem_is_refused():
    assert regex_error(r"(?:\pL|\d){249}") == "pattern too large - compile failed"


def test_compiled_patterns_cache_is_bounded():
    for i in range(regex.CACHE_SIZE + 10):
        compile_topic_regex(f"t{i}")
    assert len(regex._cache) == regex.CACHE_SIZE
    assert compile_topic_regex("t0").matches("t0")  # evicted, compiled again


def test_verdict_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(regex, "MEMO_LIMIT", 4)
    pattern = compile_topic_regex("memo-.*")
    assert all(pattern.matches(f"memo-{i}") for i in range(10))
    assert len(pattern._memo) <= 4
