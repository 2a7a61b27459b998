"""What a document op built, with what it decided that the caller did not spell out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Edited:
    """The new text; `message` and `details` say what the op chose (where a rule went, a
    restated heading dropped), so the caller's result can report it. Both are empty when the
    op did only what it was told."""

    text: str
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
