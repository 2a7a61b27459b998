"""Where a write came from: the conversation, message, platform, URL and words behind it.

An agent's host names its source in a write's `source` (every door), or once per session in
the `Memory-Source` header; both are untrusted text and are checked here, the one path every
door calls, before anything is read or written. The source rides on the `Actor`, so the engine
records it on the revision of every write that actor makes.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from django.db import models

from stores.errors import Invalid
from stores.models import Revision
from stores.models.revisions import SOURCE_PARTS

# The header an agent's host sets once per session instead of a source on every write.
SOURCE_HEADER = "Memory-Source"


def _column_length(part: str) -> int:
    column = Revision._meta.get_field(f"source_{part}")
    assert isinstance(column, models.CharField) and column.max_length is not None
    return column.max_length


# The longest each part may be, in characters: what its column holds.
SOURCE_LIMITS: dict[str, int] = {part: _column_length(part) for part in SOURCE_PARTS}
# The words an excerpt quotes may run over lines; no other part holds a line break.
_EXCERPT_WHITESPACE = frozenset("\n\r\t")

# What each part may hold, as regular expressions (ECMA and Python alike) the schemas state
# and `parse_source` holds a part to, as Python's validators read them (`re.search`): no
# control character (Unicode's Cc; a last line break is trimmed with the spaces around a
# part, as `$` allows), and a url is http or https with a host and no space. A lone
# surrogate (Cs), which no Unicode text holds, is refused too, outside the patterns: a
# surrogate range makes a pattern that generators of test data cannot use.
_CONTROL = "\\u0000-\\u001f\\u007f-\\u009f"
_EXCERPT_CONTROL = "\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f"
_SPACE = f"[^\\S{_CONTROL}]"
_URL = f"[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#{_CONTROL}]+([/?#][^\\s{_CONTROL}]*)?"
SOURCE_PATTERNS: dict[str, str] = {
    part: f"^[^{_EXCERPT_CONTROL if part == 'excerpt' else _CONTROL}]*$" for part in SOURCE_PARTS
} | {"url": f"^{_SPACE}*({_URL})?{_SPACE}*$"}
# A conversation named on its own, to take back or hold: its part's form, and more than spaces.
NAMED_CONVERSATION_PATTERN = f"^{_SPACE}*[^\\s{_CONTROL}][^{_CONTROL}]*$"


@dataclass(frozen=True)
class Source:
    """The origin of a write; every part optional, an empty one absent.

    `takeback` marks the writes of a take-back: they carry the source they took back (so the
    history reads as what happened) but are not that source's own writes.
    """

    conversation: str = ""
    message: str = ""
    platform: str = ""
    url: str = ""
    excerpt: str = ""
    takeback: bool = False
    # Named by the agent's host (the Memory-Source header), not by the model's arguments.
    host: bool = False
    # The conversation a write's own `source` argument named when the host named another:
    # the host's stands (a model must not move its writes out of a held conversation), and
    # the claim is kept beside it.
    claimed_conversation: str = ""

    def __bool__(self) -> bool:
        return any(getattr(self, name) for name in SOURCE_LIMITS)

    def as_dict(self) -> dict[str, str]:
        """The parts given, as every door shows them."""
        parts = {name: getattr(self, name) for name in SOURCE_LIMITS if getattr(self, name)}
        if self.claimed_conversation:
            parts["claimed_conversation"] = self.claimed_conversation
        return parts

    def revision_columns(self) -> dict[str, str | bool]:
        """Its parts as the `source_<part>` columns of a revision (Revision.source reads
        them back)."""
        columns: dict[str, str | bool] = {
            f"source_{part}": getattr(self, part) for part in SOURCE_PARTS
        }
        columns["source_takeback"] = self.takeback
        columns["source_claimed_conversation"] = self.claimed_conversation
        return columns

    def merged_over(self, base: Source | None) -> Source:
        """This source's parts, and `base`'s where this one has none (a body over a header),
        except the conversation the host named: it stands, and a different one this source
        names is kept as claimed."""
        if base is None:
            return self
        parts: dict[str, Any] = {
            name: getattr(self, name) for name in SOURCE_LIMITS if getattr(self, name)
        }
        claimed = parts.get("conversation", "")
        if base.host and base.conversation and claimed:
            del parts["conversation"]
            if not same_conversation(claimed, base.conversation):
                parts["claimed_conversation"] = claimed
        return replace(base, **parts)

    def conversations(self) -> list[str]:
        """The conversations this write is from, as far as anyone said: the host's (or the
        only one named) and a different one its arguments claimed."""
        return [name for name in (self.conversation, self.claimed_conversation) if name]


def same_conversation(first: str, second: str) -> bool:
    """Conversation ids are compared without regard to case: `CONV-Q` is `conv-Q`."""
    return first.casefold() == second.casefold()


def naming_conversation(column: str, name: str) -> models.Q:
    """The rows whose `column` names the conversation `name`, as `same_conversation` compares
    them: a hold and a take-back find the same writes."""
    return models.Q(**{f"{column}__iexact": name})


def parse_source(value: Any, field: str = "source") -> Source:
    """A source as a caller sent it (an object of the five parts), checked; Invalid names the
    part at fault and nothing is written."""
    if value is None:
        return Source()
    if not isinstance(value, Mapping):
        raise Invalid(
            f"{field} must be an object with any of: {', '.join(SOURCE_LIMITS)}.", field=field
        )
    unknown = sorted(str(name) for name in value if name not in SOURCE_LIMITS)
    if unknown:
        raise Invalid(
            f"{field}: unknown part {', '.join(map(repr, unknown))}; the parts are "
            f"{', '.join(SOURCE_LIMITS)}.",
            field=field,
        )
    parts: dict[str, Any] = {
        name: _part(name, part, f"{field}.{name}") for name, part in value.items()
    }
    return Source(**parts)


def parse_source_header(header: str) -> Source:
    """The `Memory-Source` header: `conversation=<id>; message=<id>; platform=<name>` (any of
    the five parts, separated by semicolons)."""
    field = SOURCE_HEADER
    # Bounded before it is split: a header longer than every part together is refused.
    if len(header) > sum(SOURCE_LIMITS.values()) + 100:
        raise Invalid(f"The {field} header is too long.", field=field)
    parts: dict[str, str] = {}
    for item in header.split(";"):
        if not item.strip():
            continue
        name, equals, part = item.partition("=")
        name = name.strip().lower()
        if not equals or name not in SOURCE_LIMITS:
            raise Invalid(
                f"The {field} header reads `conversation=<id>; message=<id>; platform=<name>` "
                f"(parts: {', '.join(SOURCE_LIMITS)}); {item.strip()[:50]!r} is none of them.",
                field=field,
            )
        if name in parts:
            raise Invalid(f"The {field} header names {name} twice.", field=field)
        parts[name] = part.strip()
    return replace(parse_source(parts, field), host=True)


def _part(name: str, value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise Invalid(f"{field} must be a string.", field=field)
    limit = SOURCE_LIMITS[name]
    # The length first: a megabyte-long value is refused before anything reads it through.
    if len(value) > limit:
        raise Invalid(
            f"{field} is {len(value)} characters long; the limit is {limit}.",
            field=field,
            limit=limit,
            length=len(value),
        )
    if not re.search(SOURCE_PATTERNS[name], value) or _holds_surrogate(value):
        allowed = _EXCERPT_WHITESPACE if name == "excerpt" else frozenset()
        for character in value:
            if character not in allowed and unicodedata.category(character) in ("Cc", "Cs"):
                raise Invalid(
                    f"{field} holds a control character (U+{ord(character):04X}).", field=field
                )
        raise Invalid(
            f"{field} must be an http or https URL with a host, without spaces.", field=field
        )
    return value.strip()


def _holds_surrogate(value: str) -> bool:
    return not value.isascii() and any("\ud800" <= character <= "\udfff" for character in value)
