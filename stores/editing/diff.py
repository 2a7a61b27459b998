"""Diffs between two versions of a text: unified (for agents) and word-level (for people)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)

ChunkKind = Literal["equal", "insert", "delete"]


@dataclass(frozen=True)
class DiffChunk:
    kind: ChunkKind
    text: str


def unified_diff(before: str, after: str, *, label: str = "text", context: int = 3) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{label}",
        tofile=f"b/{label}",
        n=context,
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def word_diff(before: str, after: str) -> list[DiffChunk]:
    """Word-level chunks; the shared head and tail are cut off first so long texts stay cheap."""
    old = _TOKEN.findall(before)
    new = _TOKEN.findall(after)
    head = 0
    while head < len(old) and head < len(new) and old[head] == new[head]:
        head += 1
    tail = 0
    while (
        tail < len(old) - head
        and tail < len(new) - head
        and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]
    ):
        tail += 1
    chunks: list[DiffChunk] = []
    _push(chunks, "equal", "".join(old[:head]))
    old_middle = old[head : len(old) - tail]
    new_middle = new[head : len(new) - tail]
    matcher = difflib.SequenceMatcher(None, old_middle, new_middle, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            _push(chunks, "equal", "".join(old_middle[i1:i2]))
            continue
        _push(chunks, "delete", "".join(old_middle[i1:i2]))
        _push(chunks, "insert", "".join(new_middle[j1:j2]))
    _push(chunks, "equal", "".join(old[len(old) - tail :]))
    return chunks


def _push(chunks: list[DiffChunk], kind: ChunkKind, text: str) -> None:
    if not text:
        return
    if chunks and chunks[-1].kind == kind:
        chunks[-1] = DiffChunk(kind, chunks[-1].text + text)
    else:
        chunks.append(DiffChunk(kind, text))
