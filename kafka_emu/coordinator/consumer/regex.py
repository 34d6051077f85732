"""SubscribedTopicRegex with RE2/J semantics on top of Python's ``re``.

Kafka compiles the regex with Google's RE2/J and matches whole topic names
(``Pattern.matcher(topic).matches()``); we use ``re.fullmatch``. The syntax both accept means the
same for topic names (ASCII letters, digits, ``.``, ``_``, ``-``). Where they differ we side with
RE2/J by refusing what RE2/J refuses, so a client gets INVALID_REGULAR_EXPRESSION here exactly when
Kafka would send it:

- backreferences (``\\1``, ``(?P=name)``), lookahead/lookbehind (``(?=``, ``(?!``, ``(?<=``,
  ``(?<!``), atomic groups ``(?>``, conditionals ``(?(``, possessive quantifiers (``*+``, ``++``,
  ``?+``, ``}+``) and ``\\Z``: RE2/J rejects them, Python accepts them;
- Python-only escapes RE2/J lacks are rejected too.

Remaining known differences (both accept, results may differ): ``\\d``/``\\w``/``\\s`` are
Unicode-aware in Python and ASCII-only in RE2/J, so we compile with ``re.ASCII``; RE2/J's ``\\pN``
Unicode classes are not supported by ``re`` and are rejected (a difference on the safe side).
"""

from __future__ import annotations

import re

_REJECTED = re.compile(
    r"""\\[1-9]            # backreference
      | \(\?P=             # named backreference
      | \(\?<?[=!]         # lookahead / lookbehind
      | \(\?>              # atomic group
      | \(\?\(             # conditional
      | (?<!\\)[*+?}]\+    # possessive quantifier
      | \\Z | \\p | \\P    # end anchor RE2/J lacks; Unicode classes re lacks
    """, re.VERBOSE)

_cache: dict[str, re.Pattern | None] = {}


def compile_topic_regex(pattern: str) -> re.Pattern | None:
    """The compiled pattern, or None if RE2/J would refuse it."""
    if pattern in _cache:
        return _cache[pattern]
    compiled: re.Pattern | None
    if _REJECTED.search(pattern):
        compiled = None
    else:
        try:
            compiled = re.compile(pattern, re.ASCII)
        except re.error:
            compiled = None
    if len(_cache) > 1024:
        _cache.clear()
    _cache[pattern] = compiled
    return compiled


def matching_topics(pattern: re.Pattern, topics) -> frozenset[str]:
    return frozenset(t for t in topics if pattern.fullmatch(t))
