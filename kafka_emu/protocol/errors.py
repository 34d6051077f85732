"""Errors raised by the codec. Everything malformed on the way in is a DecodeError."""

from __future__ import annotations


class DecodeError(Exception):
    """Bytes that do not parse as the declared message: where and why."""

    def __init__(self, reason: str, *, offset: int | None = None, api: str | None = None,
                 version: int | None = None) -> None:
        self.reason = reason
        self.offset = offset
        self.api = api
        self.version = version
        super().__init__(self._text())

    def _text(self) -> str:
        where = []
        if self.api is not None:
            where.append(f"{self.api} v{self.version}")
        if self.offset is not None:
            where.append(f"at byte {self.offset}")
        return f"{self.reason} ({', '.join(where)})" if where else self.reason

    def located(self, api: str, version: int) -> "DecodeError":
        if self.api is None:
            self.api, self.version = api, version
            self.args = (self._text(),)
        return self


class EncodeError(ValueError):
    """A message that cannot be written at the requested version."""
