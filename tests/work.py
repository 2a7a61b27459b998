"""Measuring work in operations, never in seconds, for tests that bound the engine's cost.

`stores.editing.work.metered()` collects what the engine reports it compared. `python_lines`
counts from outside every Python line run inside a block and stops the block past a limit, so a
test also bounds pure-Python work the engine never reported (difflib's, for one) and fails at
once instead of running for minutes.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from types import FrameType
from typing import Any


class TooMuchWork(Exception):
    pass


@dataclass
class LineCount:
    lines: int = 0


@contextmanager
def python_lines(limit: int) -> Iterator[LineCount]:
    count = LineCount()

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            count.lines += 1
            if count.lines > limit:
                raise TooMuchWork(f"more than {limit:,} Python lines ran")
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        yield count
    finally:
        sys.settrace(previous)


@cache
def _vocabulary(seed: int) -> tuple[str, ...]:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return tuple(
        "".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(2000)
    )


def random_words(size: int, *, seed: int, per_line: int = 0, vocabulary: int = 0) -> str:
    """About `size` characters of words drawn from a 2,000-word vocabulary (the same for the
    same `vocabulary`); with `per_line`, a line break after every that many words."""
    choices = _vocabulary(vocabulary)
    rng = random.Random(seed)
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(choices)
        separator = "\n" if per_line and len(words) % per_line == per_line - 1 else " "
        words.append(word + separator)
        length += len(word) + 1
    return "".join(words).rstrip()
