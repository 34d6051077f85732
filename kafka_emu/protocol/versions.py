"""Version ranges as Kafka's message specs write them: "0+", "3-5", "7", "none"."""

from __future__ import annotations

import attrs

from ..frozen import lazy_dunders

_MAX = 0x7FFF


@lazy_dunders  # __repr__, __eq__, __hash__ made on first use
@attrs.frozen(repr=False, eq=False)
class Versions:
    lo: int
    hi: int  # inclusive; _MAX for an open range

    @classmethod
    def parse(cls, text: str) -> "Versions":
        text = text.strip()
        if text == "none":
            return NONE
        if text.endswith("+"):
            return cls(int(text[:-1]), _MAX)
        if "-" in text:
            lo, hi = text.split("-", 1)
            return cls(int(lo), int(hi))
        return cls(int(text), int(text))

    def __contains__(self, version: int) -> bool:
        return self.lo <= version <= self.hi

    @property
    def empty(self) -> bool:
        return self.lo > self.hi

    def intersect(self, other: "Versions") -> "Versions":
        return Versions(max(self.lo, other.lo), min(self.hi, other.hi))

    def __iter__(self):
        return iter(range(self.lo, self.hi + 1))

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.hi == _MAX:
            return f"{self.lo}+"
        return f"{self.lo}-{self.hi}" if self.lo != self.hi else str(self.lo)


NONE = Versions(1, 0)
ALL = Versions(0, _MAX)


def versions(spec: "str | Versions | None") -> Versions:
    if spec is None:
        return NONE
    if isinstance(spec, Versions):
        return spec
    return Versions.parse(spec)
