"""Refusals of the text engine: expected outcomes, each carrying its status word."""

from __future__ import annotations

from dataclasses import dataclass

from stores.editing.status import Status


@dataclass(frozen=True)
class NearMiss:
    """The text closest to what the caller asked for, to help it re-read and retry."""

    line: int
    text: str
    similarity: float
    explanation: str | None = None

    def describe(self) -> str:
        where = f"line {self.line}"
        if self.explanation:
            return f"Closest match at {where}: {self.explanation}. The text there is: {self.text!r}"
        return f"Closest text ({self.similarity:.0%} similar) at {where}: {self.text!r}"


class TextEditError(Exception):
    status: Status = Status.INVALID

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidEdit(TextEditError):
    status = Status.INVALID


class TooLong(InvalidEdit):
    """The result would be longer than the text may be; it was refused before being built."""

    def __init__(self, message: str, *, limit: int, length: int) -> None:
        super().__init__(message)
        self.limit = limit
        self.length = length


class NoChange(TextEditError):
    status = Status.NO_CHANGE


class NoMatch(TextEditError):
    status = Status.NO_MATCH

    def __init__(self, message: str, near_miss: NearMiss | None = None) -> None:
        if near_miss is not None:
            message = f"{message} {near_miss.describe()}"
        super().__init__(message)
        self.near_miss = near_miss


class Ambiguous(TextEditError):
    status = Status.AMBIGUOUS

    def __init__(self, message: str, count: int, lines: tuple[int, ...]) -> None:
        super().__init__(message)
        self.count = count
        self.lines = lines
