"""Counting the text engine's work, so tests can bound it in operations instead of seconds.

The bounded algorithms (near-miss search, diffs) charge what they compare: cells of a
comparison table, characters scanned or split, candidates scored. Nothing is kept unless a
caller opened a meter with `metered()`, so production pays one context-variable lookup a charge.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_meter: ContextVar[Counter[str] | None] = ContextVar("stores_editing_work", default=None)


def charge(kind: str, amount: int) -> None:
    meter = _meter.get()
    if meter is not None:
        meter[kind] += amount


@contextmanager
def metered() -> Iterator[Counter[str]]:
    """Collect every charge made inside the block, by kind (e.g. "diff.cells")."""
    meter: Counter[str] = Counter()
    token = _meter.set(meter)
    try:
        yield meter
    finally:
        _meter.reset(token)
