"""Refusals of the text engine: expected outcomes, each carrying its status word.

Each refusal also carries `details`: plain values (numbers, strings, lists, dicts) a door
can send as they are, so an agent acts on fields instead of parsing the message.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from itertools import islice
from typing import Any

from stores.editing.status import Status

# An ambiguous refusal locates this many occurrences; `count` and `lines` tell the rest.
OCCURRENCES_SHOWN = 5
# ... and names at most this many lines: a one-letter phrase in a long text occurs on
# thousands, a list no reader goes through, and `count` says how many there are.
LINES_LISTED = 100


def first_listed(items: Sequence[object]) -> str:
    """`items` for a sentence, the first LINES_LISTED of them, then how many more there are."""
    named = ", ".join(str(item) for item in items[:LINES_LISTED])
    more = len(items) - LINES_LISTED
    return f"{named} and {more} more" if more > 0 else named


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

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Occurrence:
    """Where one of several matches stands: its 1-based line and column, and the words
    around it, which a caller can quote to make its text unique."""

    line: int
    column: int
    context: str

    def describe(self) -> str:
        return f"line {self.line}, column {self.column} ({self.context!r})"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class TextEditError(Exception):
    status: Status = Status.INVALID

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})


class InvalidEdit(TextEditError):
    status = Status.INVALID


class TooLong(InvalidEdit):
    """The result would be longer than the text may be; it was refused before being built."""

    def __init__(self, message: str, *, limit: int, length: int) -> None:
        # The same details as the services' own size refusal: the limit and the would-be length.
        super().__init__(message, {"limit": limit, "length": length})
        self.limit = limit
        self.length = length


class NoChange(TextEditError):
    status = Status.NO_CHANGE


class NoMatch(TextEditError):
    status = Status.NO_MATCH

    def __init__(self, message: str, near_miss: NearMiss | None = None) -> None:
        if near_miss is not None:
            message = f"{message} {near_miss.describe()}"
        super().__init__(message, {"near_miss": near_miss.as_dict()} if near_miss else None)
        self.near_miss = near_miss


class Ambiguous(TextEditError):
    """More than one place matches: how many, on which lines, and the first few located."""

    status = Status.AMBIGUOUS

    def __init__(
        self,
        message: str,
        count: int,
        lines: tuple[int, ...],
        occurrences: tuple[Occurrence, ...],
    ) -> None:
        super().__init__(
            message,
            {
                "count": count,
                "lines": list(lines),
                "occurrences": [occurrence.as_dict() for occurrence in occurrences],
            },
        )
        self.count = count
        self.lines = lines
        self.occurrences = occurrences

    @classmethod
    def at(cls, message: str, lines: Sequence[int], occurrences: Iterable[Occurrence]) -> Ambiguous:
        """Matches found by their lines (rules, headings), `lines` every one of them: their
        count, the first LINES_LISTED lines, and the first OCCURRENCES_SHOWN `occurrences`
        (an iterable, so only those few are ever located)."""
        return cls(
            message,
            count=len(lines),
            lines=tuple(lines[:LINES_LISTED]),
            occurrences=tuple(islice(occurrences, OCCURRENCES_SHOWN)),
        )
