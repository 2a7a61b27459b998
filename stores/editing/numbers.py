"""Numbers as a JSON body brings them: to Python `True` is the integer 1, to a person it is
no number at all, so a flag is never taken for a count, a line or a version."""

from __future__ import annotations

from typing import TypeGuard


def is_whole_number(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
