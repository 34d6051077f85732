"""SubscribedTopicRegex: RE2/J's syntax and meaning, matched by RE2 in linear time.

Kafka compiles a member's regex with RE2/J (``com.google.re2j.Pattern.compile``, re2j 1.8) and
keeps the topics whose whole name matches (``matcher(topic).matches()``); a pattern RE2/J refuses
is INVALID_REGULAR_EXPRESSION with "SubscribedTopicRegex `<regex>` is not a valid regular
expression: <RE2/J's description>." (``Utils.throwIfRegularExpressionIsInvalid``). We match with
RE2 itself (the ``re2`` module of google-re2, C++), never with a backtracking engine: a heartbeat
runs on the broker's only thread, and with Python's ``re`` the regex ``(a*)*b`` against a topic
``'a'*24 + '-'`` held every client for 10 s. RE2 takes time linear in the topic name whatever the
pattern.

Theory of operation:

1. ``_to_re2`` reads the pattern once, left to right (linear), and does what RE2 C++ would do
   differently from RE2/J: it refuses what only RE2/J refuses -- ``\\C``, a capture name used
   twice, a ``\\p{Name}`` not in re2j 1.8's Unicode tables (RE2 C++ knows newer scripts), a
   literal ``{`` followed by a repetition operator (``{*``: re2j's parser counts the literal ``{``
   as a repeat, so the next operator is "nested") -- and rewrites what only RE2/J accepts: an
   escaped non-ASCII character (``\\é``) becomes ``\\x{E9}``. ``\\Q...\\E`` and character classes
   are skipped as wholes, so what they contain is not mistaken for syntax.
2. RE2 C++ compiles the result in Perl mode (RE2/J's default flags: Perl classes, ``\\b``, one
   line, Unicode groups, ``(?P<n>`` and ``(?<n>``). Its error strings are turned into RE2/J's
   descriptions (``_DESCRIPTIONS``), so the client reads the message Kafka sends.
3. Cost is bounded: a pattern longer than ``MAX_PATTERN_CHARS`` is refused before it is parsed,
   and RE2's ``max_mem`` (``MAX_MEM``) bounds the compiled program and the DFA's memory; with
   both, the slowest compile is about 15 ms (a 40 KB alternation: 10 ms, where ``re`` took
   0.78 s) and the slowest match about 1 ms per 249-character topic: a pattern whose DFA
   outgrows its budget falls back to RE2's NFA (bench/bench_regex.py). So a heartbeat with a new
   pattern holds the broker for at most about 1 ms per topic of the catalogue. Compiled
   patterns are cached (``CACHE_SIZE``, least recently used out), and each remembers its
   verdict per topic name (``MEMO_LIMIT``), so a heartbeat that repeats its regex costs one
   dictionary look-up per topic.

Known differences left (both listed in docs/explanation/differences-from-kafka.md): RE2 C++ refuses nested repeats whose
counts multiply past 1000 (``(a{10}){101}``) and programs over ``MAX_MEM`` (``(?:\\pL|\\d){249}``)
and ``\\p{Unknown}``, which RE2/J accepts; and patterns over ``MAX_PATTERN_CHARS`` are refused.
Unicode tables differ in newer characters only, and topic names are ASCII.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterable

import re2  # type: ignore[import-untyped]

MAX_PATTERN_CHARS = 65536
MAX_MEM = 2 << 20
CACHE_SIZE = 64
MEMO_LIMIT = 10_000  # verdicts kept per pattern before its memo starts over (64 x 10,000 at most)

# re2j 1.8's UnicodeTables: CATEGORIES and SCRIPTS, plus the special "Any".
_RE2J_UNICODE = frozenset("""
Any C Cc Cf Co Cs L Ll Lm Lo Lt Lu M Mc Me Mn N Nd Nl No P Pc Pd Pe Pf Pi Po Ps S Sc Sk Sm So Z Zl
Zp Zs Arabic Armenian Avestan Balinese Bamum Batak Bengali Bopomofo Brahmi Braille Buginese Buhid
Canadian_Aboriginal Carian Cham Cherokee Common Coptic Cuneiform Cypriot Cyrillic Deseret
Devanagari Egyptian_Hieroglyphs Ethiopic Georgian Glagolitic Gothic Greek Gujarati Gurmukhi Han
Hangul Hanunoo Hebrew Hiragana Imperial_Aramaic Inherited Inscriptional_Pahlavi
Inscriptional_Parthian Javanese Kaithi Kannada Katakana Kayah_Li Kharoshthi Khmer Lao Latin Lepcha
Limbu Linear_B Lisu Lycian Lydian Malayalam Mandaic Meetei_Mayek Mongolian Myanmar New_Tai_Lue Nko
Ogham Ol_Chiki Old_Italic Old_Persian Old_South_Arabian Old_Turkic Oriya Osmanya Phags_Pa
Phoenician Rejang Runic Samaritan Saurashtra Shavian Sinhala Sundanese Syloti_Nagri Syriac Tagalog
Tagbanwa Tai_Le Tai_Tham Tai_Viet Tamil Telugu Thaana Thai Tibetan Tifinagh Ugaritic Unknown Vai Yi
""".split())

# RE2 C++ error (its prefix) -> RE2/J's PatternSyntaxException description.
_DESCRIPTIONS = (
    ("invalid escape sequence", "invalid escape sequence"),
    ("invalid character class range", "invalid character class range"),
    ("invalid character class", "invalid character class range"),
    ("missing ]", "missing closing ]"),
    ("missing )", "missing closing )"),
    ("unexpected )", "regexp/syntax: internal error"),  # what re2j 1.8 says of a stray ")"
    ("trailing \\", "trailing backslash at end of expression"),
    ("no argument for repetition operator", "missing argument to repetition operator"),
    ("bad repetition operator", "invalid nested repetition operator"),
    ("invalid repetition size", "invalid repeat count"),
    ("invalid perl operator", "invalid or unsupported Perl syntax"),
    ("invalid named capture group", "invalid named capture"),
)


class _Refused(Exception):
    """RE2/J would refuse the pattern; the argument is RE2/J's description."""


def _options() -> re2.Options:
    options = re2.Options()
    options.max_mem = MAX_MEM
    options.log_errors = False  # RE2 would print every refused pattern on stderr
    return options


_OPTIONS = _options()


class TopicRegex:
    """A compiled SubscribedTopicRegex and its verdicts so far, by topic name."""

    __slots__ = ("pattern", "_compiled", "_memo")

    def __init__(self, pattern: str, compiled: Any) -> None:
        self.pattern = pattern
        self._compiled = compiled
        self._memo: dict[str, bool] = {}

    def matches(self, topic: str) -> bool:
        verdict = self._memo.get(topic)
        if verdict is None:
            if len(self._memo) >= MEMO_LIMIT:
                self._memo.clear()
            verdict = self._memo[topic] = self._compiled.fullmatch(topic) is not None
        return bool(verdict)


_cache: OrderedDict[str, TopicRegex | str] = OrderedDict()


def compile_topic_regex(pattern: str) -> TopicRegex | None:
    """The compiled pattern, or None if RE2/J would refuse it."""
    compiled = _lookup(pattern)
    return compiled if isinstance(compiled, TopicRegex) else None


def regex_error(pattern: str) -> str | None:
    """RE2/J's description of what is wrong with the pattern, or None if it compiles."""
    compiled = _lookup(pattern)
    return None if isinstance(compiled, TopicRegex) else compiled


def matching_topics(pattern: TopicRegex, topics: Iterable[str]) -> frozenset[str]:
    return frozenset(t for t in topics if pattern.matches(t))


def _lookup(pattern: str) -> TopicRegex | str:
    found = _cache.get(pattern)
    if found is not None:
        _cache.move_to_end(pattern)
        return found
    found = _compile(pattern)
    _cache[pattern] = found
    if len(_cache) > CACHE_SIZE:
        _cache.popitem(last=False)
    return found


def _compile(pattern: str) -> TopicRegex | str:
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"pattern too long ({len(pattern)} characters, at most {MAX_PATTERN_CHARS})"
    try:
        compiled = re2.compile(_to_re2(pattern), _OPTIONS)
    except _Refused as exc:
        return str(exc.args[0])
    except re2.error as exc:
        return _description(exc)
    return TopicRegex(pattern, compiled)


def _description(exc: Exception) -> str:
    text = exc.args[0] if exc.args else b""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    for prefix, description in _DESCRIPTIONS:
        if text.startswith(prefix):
            return description
    return str(text).split(":")[0] or "invalid regular expression"  # e.g. "pattern too large - ..."


# ------------------------------------------------------------------------ RE2/J vs RE2 C++
def _to_re2(p: str) -> str:
    out: list[str] = []
    names: set[str] = set()
    i, n = 0, len(p)
    while i < n:
        c = p[i]
        if c == "\\":
            if p.startswith("\\Q", i):  # literal up to \E (or the end), as both engines read it
                end = p.find("\\E", i + 2)
                stop = n if end < 0 else end + 2
                out.append(p[i:stop])
                i = stop
                continue
            if p.startswith("\\C", i):
                raise _Refused("invalid escape sequence")
            i = _escape(p, i, out)
            continue
        if c == "[":
            i = _char_class(p, i, out)
            continue
        if c == "(" and (p.startswith("(?P<", i) or p.startswith("(?<", i)):
            begin = i + (4 if p[i + 2] == "P" else 3)
            end = p.find(">", begin)
            if end > begin:  # a malformed name is RE2's to refuse, with the same description
                name = p[begin:end]
                if name in names and all(ch == "_" or (ch.isascii() and ch.isalnum()) for ch in name):
                    raise _Refused("duplicate capture group name")
                names.add(name)
        elif c == "{":
            stop = _repeat_end(p, i)
            if stop < 0:  # a literal "{"; re2j then takes a following operator as nested
                if i + 1 < n and (p[i + 1] in "*+?" or (p[i + 1] == "{" and _repeat_end(p, i + 1) >= 0)):
                    raise _Refused("invalid nested repetition operator")
            else:
                out.append(p[i:stop])
                i = stop
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _escape(p: str, i: int, out: list[str]) -> int:
    """Copy the escape at p[i] ("\\"), checking \\p names and rewriting non-ASCII; return the
    index after it."""
    if i + 1 >= len(p):
        out.append("\\")  # trailing backslash: RE2 refuses it
        return i + 1
    d = p[i + 1]
    if d in "pP":
        if p.startswith("{", i + 2):
            end = p.find("}", i + 3)
            if end < 0:
                out.append(p[i:i + 2])
                return i + 2
            name, stop = p[i + 3:end], end + 1
        else:
            name, stop = p[i + 2:i + 3], i + 3
        if name.removeprefix("^") not in _RE2J_UNICODE:
            raise _Refused("invalid character class range")
        out.append(p[i:stop])
        return stop
    if d == "x" and p.startswith("{", i + 2):  # \x{10FFFF}: its braces are no repeat
        end = p.find("}", i + 3)
        if end < 0:
            raise _Refused("invalid escape sequence")
        out.append(p[i:end + 1])
        return end + 1
    if not d.isascii():  # re2j: "escaped non-word characters are always themselves"
        out.append(f"\\x{{{ord(d):X}}}")
    else:
        out.append(p[i:i + 2])
    return i + 2


def _char_class(p: str, i: int, out: list[str]) -> int:
    """Copy the class opening at p[i] ("["); return the index after its "]" (or the end)."""
    n = len(p)
    j = i + 1
    if j < n and p[j] == "^":
        j += 1
    out.append(p[i:j])
    first = True
    while j < n and (p[j] != "]" or first):
        first = False
        if p.startswith("[:", j):
            end = p.find(":]", j + 1)
            if end == j + 1:  # re2j reads "[:]" as a class named "[:]", RE2 as three characters
                raise _Refused("invalid character class range")
            if end >= 0:
                out.append(p[j:end + 2])
                j = end + 2
                continue
        if p[j] == "\\":
            j = _escape(p, j, out)
            continue
        out.append(p[j])
        j += 1
    if j < n:
        out.append("]")
        j += 1
    return j


def _repeat_end(p: str, i: int) -> int:
    """The index after a repeat {n}, {n,} or {n,m} at p[i], or -1 if "{" is a literal there (re2j's
    parseRepeat: no digits, or a leading zero, makes it a literal)."""
    j = _int_end(p, i + 1)
    if j < 0:
        return -1
    if j < len(p) and p[j] == ",":
        j += 1
        if j < len(p) and p[j] != "}":
            j = _int_end(p, j)
            if j < 0:
                return -1
    return j + 1 if j < len(p) and p[j] == "}" else -1


def _int_end(p: str, i: int) -> int:
    j = i
    while j < len(p) and "0" <= p[j] <= "9":
        j += 1
    if j == i or (j - i > 1 and p[i] == "0"):
        return -1
    return j
