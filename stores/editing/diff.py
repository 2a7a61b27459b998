"""Diffs between two versions of a text: unified (for agents) and word-level (for people).

Both compare lines first and split only the changed lines into words. Each comparison is a
longest-common-subsequence table of len(a) x len(b) cells (rapidfuzz's bit-parallel Indel, in
C), and a DiffBudget caps the cells and the characters examined, so no pair of texts costs more
than a few milliseconds and a few MiB. What does not fit is shown coarser, never wrong: a changed
stretch too large to compare word by word is deleted and inserted whole, and when even its lines
cannot be compared the whole changed middle is, and the word diff says `too_large`.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from itertools import accumulate, compress, islice
from typing import Literal

from rapidfuzz.distance import Indel

from stores.editing.work import charge

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)
_LINE = re.compile(r"[^\n]*\n|[^\n]+")
# Token boundaries that hold in both texts: the last whitespace-to-word step before a common
# head ends, and the first word-to-whitespace step inside a common tail.
_LAST_GAP = re.compile(r"(?s:.*)\s(?=\S)")
_NEXT_GAP = re.compile(r"\S(?=\s)")

ChunkKind = Literal["equal", "insert", "delete"]
Opcode = tuple[str, int, int, int, int]

# One comparison table holds at most this many cells: 4 MiB of bits in rapidfuzz.
TABLE_CELLS = 1 << 25
# By default a diff compares at most CELLS_PER_DIFF cells in all and examines at most
# CHARS_PER_DIFF characters in Python (lines and words to compare): a few milliseconds.
CELLS_PER_DIFF = TABLE_CELLS
CHARS_PER_DIFF = 1_200_000


@dataclass(frozen=True)
class DiffChunk:
    kind: ChunkKind
    text: str


@dataclass(frozen=True)
class WordDiff:
    """Chunks whose equal and deleted parts spell the old text, equal and inserted the new.

    `too_large`: the changed lines were too many to compare within the budget, so the changed
    middle is one deletion and one insertion; callers show the two texts whole instead.
    """

    chunks: tuple[DiffChunk, ...]
    too_large: bool = False


@dataclass
class DiffBudget:
    """What diffs may still spend. Pass one budget to several diffs to bound them together
    (a page of history); by default each diff gets its own. No single comparison outgrows
    TABLE_CELLS, whatever the budget."""

    cells: int = CELLS_PER_DIFF
    chars: int = CHARS_PER_DIFF

    def spend(self, *, cells: int = 0, chars: int = 0) -> bool:
        if cells > self.cells or chars > self.chars:
            return False
        self.cells -= cells
        self.chars -= chars
        charge("diff.cells", cells)
        charge("diff.chars", chars)
        return True


def unified_diff(
    before: str,
    after: str,
    *,
    label: str = "text",
    context: int = 3,
    budget: DiffBudget | None = None,
) -> str:
    a_lines, b_lines, codes = line_opcodes(before, after, budget=budget)
    out: list[str] = []
    for hunk in _hunks(codes, context):
        first, final = hunk[0], hunk[-1]
        if not out:
            out += [f"--- a/{label}\n", f"+++ b/{label}\n"]
        out.append(f"@@ -{_range(first[1], final[2])} +{_range(first[3], final[4])} @@\n")
        for tag, i1, i2, j1, j2 in hunk:
            if tag == "equal":
                out += [" " + line for line in a_lines[i1:i2]]
            else:
                out += ["-" + line for line in a_lines[i1:i2]]
                out += ["+" + line for line in b_lines[j1:j2]]
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out
    )


def line_opcodes(
    before: str, after: str, *, budget: DiffBudget | None = None
) -> tuple[list[str], list[str], list[Opcode]]:
    """Both texts split into lines (each with its line ending), and the equal and changed
    runs of lines turning `before` into `after`, covering both texts in order.

    Lines the texts begin and end with in common are equal without being compared; when the
    changed middle does not fit the budget it is one changed run, coarser but never wrong.
    """
    budget = DiffBudget() if budget is None else budget
    a_lines, b_lines = _LINE.findall(before), _LINE.findall(after)
    start, tail = _line_bounds(before, after)
    head = before.count("\n", 0, start)
    last = len(_LINE.findall(before[len(before) - tail :]))
    a_middle = a_lines[head : len(a_lines) - last]
    b_middle = b_lines[head : len(b_lines) - last]
    codes = _middle_opcodes(
        a_middle, b_middle, len(before) + len(after) - 2 * (start + tail), budget
    )
    return a_lines, b_lines, _framed(codes, head, last, len(a_lines), len(b_lines))


def _middle_opcodes(a: list[str], b: list[str], chars: int, budget: DiffBudget) -> list[Opcode]:
    """The runs turning the changed middle `a` into `b` (`chars` characters in all), or one
    changed run when comparing them does not fit the budget."""
    codes = _opcodes(a, b, budget) if budget.spend(chars=chars) else None
    return [("replace", 0, len(a), 0, len(b))] if codes is None else codes


def _framed(codes: list[Opcode], head: int, last: int, a_size: int, b_size: int) -> list[Opcode]:
    """The runs of a compared middle, shifted past the `head` items both sequences begin with
    and followed by the `last` items they end with, as runs of the whole sequences."""
    shifted: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    shifted += [
        (tag, i1 + head, i2 + head, j1 + head, j2 + head)
        for tag, i1, i2, j1, j2 in codes
        if i2 > i1 or j2 > j1
    ]
    if last:
        shifted.append(("equal", a_size - last, a_size, b_size - last, b_size))
    return shifted


def token_opcodes(
    before: str, after: str, *, budget: DiffBudget | None = None
) -> tuple[list[str], list[str], list[Opcode]]:
    """Both texts split into tokens (a word, a run of whitespace, one other character), and
    the equal and changed runs of tokens turning `before` into `after`, covering both texts.

    As line_opcodes: the tokens the texts begin and end with in common are equal without
    being compared, and a changed middle that does not fit the budget is one changed run.
    """
    budget = DiffBudget() if budget is None else budget
    a_tokens, b_tokens = _TOKEN.findall(before), _TOKEN.findall(after)
    start, tail = _token_bounds(before, after)
    # Both bounds fall between tokens of either text (a space before a word, a word before
    # a space), so they count whole tokens.
    head = bisect.bisect_right(list(accumulate(map(len, a_tokens))), start)
    last = bisect.bisect_right(list(accumulate(map(len, reversed(a_tokens)))), tail)
    a_middle = a_tokens[head : len(a_tokens) - last]
    b_middle = b_tokens[head : len(b_tokens) - last]
    codes = _middle_opcodes(
        a_middle, b_middle, len(before) + len(after) - 2 * (start + tail), budget
    )
    return a_tokens, b_tokens, _framed(codes, head, last, len(a_tokens), len(b_tokens))


def word_diff(before: str, after: str, *, budget: DiffBudget | None = None) -> WordDiff:
    """Word-level chunks: lines are compared first, and only changed lines split into words."""
    budget = DiffBudget() if budget is None else budget
    start, tail = _line_bounds(before, after)
    old, new = before[start : len(before) - tail], after[start : len(after) - tail]
    chunks: list[DiffChunk] = []
    _push(chunks, "equal", before[:start])
    codes = None
    if budget.spend(chars=len(old) + len(new)):
        old_lines, new_lines = _LINE.findall(old), _LINE.findall(new)
        codes = _opcodes(old_lines, new_lines, budget)
    if codes is None:
        _push(chunks, "delete", old)
        _push(chunks, "insert", new)
    else:
        for tag, i1, i2, j1, j2 in codes:
            if tag == "equal":
                _push(chunks, "equal", "".join(old_lines[i1:i2]))
            else:
                _words(chunks, "".join(old_lines[i1:i2]), "".join(new_lines[j1:j2]), budget)
    _push(chunks, "equal", before[len(before) - tail :])
    return WordDiff(tuple(chunks), too_large=codes is None)


def _words(chunks: list[DiffChunk], old: str, new: str, budget: DiffBudget) -> None:
    """The changed lines `old` -> `new`, word by word when the budget allows, else whole."""
    start, tail = _token_bounds(old, new)
    old_middle, new_middle = old[start : len(old) - tail], new[start : len(new) - tail]
    _push(chunks, "equal", old[:start])
    if budget.spend(chars=len(old_middle) + len(new_middle)):
        old_tokens, new_tokens = _tokens(old_middle, new_middle, budget)
        codes = None if old_tokens is None else _opcodes(old_tokens, new_tokens, budget)
        if old_tokens is not None and codes is not None:
            _push_words(chunks, old_tokens, new_tokens, codes)
            _push(chunks, "equal", old[len(old) - tail :])
            return
    _push(chunks, "delete", old_middle)
    _push(chunks, "insert", new_middle)
    _push(chunks, "equal", old[len(old) - tail :])


def _push_words(
    chunks: list[DiffChunk], old: list[str], new: list[str], codes: list[Opcode]
) -> None:
    """Whitespace kept between two changes joins them: "the cat" -> "a dog" reads as one
    change, not two around a shared space."""
    deleted: list[str] = []
    inserted: list[str] = []
    for index, (tag, i1, i2, j1, j2) in enumerate(codes):
        if tag != "equal":
            deleted += old[i1:i2]
            inserted += new[j1:j2]
            continue
        text = "".join(old[i1:i2])
        if (deleted or inserted) and index + 1 < len(codes) and text.isspace():
            deleted.append(text)
            inserted.append(text)
            continue
        _push(chunks, "delete", "".join(deleted))
        _push(chunks, "insert", "".join(inserted))
        deleted, inserted = [], []
        _push(chunks, "equal", text)
    _push(chunks, "delete", "".join(deleted))
    _push(chunks, "insert", "".join(inserted))


def _opcodes(a: list[str], b: list[str], budget: DiffBudget) -> list[Opcode] | None:
    """Equal and changed runs turning `a` into `b` along a longest common subsequence, or None
    when that would compare more cells than the budget has left.

    Items found on one side only are in no common subsequence, so they are set aside before
    comparing (as GNU diff does): two texts that share no line cost nothing to compare.
    """
    # compress and map keep these passes in C: a text of 100,000 short lines stays cheap.
    kept_a = list(compress(range(len(a)), map(set(b).__contains__, a)))
    kept_b = list(compress(range(len(b)), map(set(a).__contains__, b)))
    cells = len(kept_a) * len(kept_b)
    if cells > TABLE_CELLS or not budget.spend(cells=cells):
        return None
    codes: list[Opcode] = []
    i = j = 0
    if kept_a and kept_b:
        matched = Indel.opcodes(list(map(a.__getitem__, kept_a)), list(map(b.__getitem__, kept_b)))
        for op in matched:
            if op.tag != "equal":
                continue
            for k in range(op.src_end - op.src_start):
                x, y = kept_a[op.src_start + k], kept_b[op.dest_start + k]
                if x > i or y > j:
                    codes.append(("replace", i, x, j, y))
                if codes and codes[-1][0] == "equal" and codes[-1][2] == x and codes[-1][4] == y:
                    codes[-1] = ("equal", codes[-1][1], x + 1, codes[-1][3], y + 1)
                else:
                    codes.append(("equal", x, x + 1, y, y + 1))
                i, j = x + 1, y + 1
    if i < len(a) or j < len(b):
        codes.append(("replace", i, len(a), j, len(b)))
    return codes


def _hunks(codes: list[Opcode], context: int) -> list[list[Opcode]]:
    """Changes with `context` equal lines around them, merged where their context would touch
    (the grouping of difflib's unified_diff)."""
    if all(tag == "equal" for tag, *_ in codes):
        return []
    codes = list(codes)
    tag, i1, i2, j1, j2 = codes[0]
    if tag == "equal":
        codes[0] = (tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2)
    tag, i1, i2, j1, j2 = codes[-1]
    if tag == "equal":
        codes[-1] = (tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context))
    hunks: list[list[Opcode]] = []
    hunk: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:
            hunk.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            hunks.append(hunk)
            hunk = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        hunk.append((tag, i1, i2, j1, j2))
    if hunk and not (len(hunk) == 1 and hunk[0][0] == "equal"):
        hunks.append(hunk)
    return hunks


def _range(start: int, stop: int) -> str:
    length = stop - start
    if length == 1:
        return str(start + 1)
    if not length:
        return f"{start},0"
    return f"{start + 1},{length}"


def _line_bounds(a: str, b: str) -> tuple[int, int]:
    """Lengths of the whole lines that `a` and `b` begin and end with in common."""
    start = a.rfind("\n", 0, _common_prefix(a, b)) + 1
    tail = _common_suffix(a, b, min(len(a), len(b)) - start)
    if not (_line_start(a, len(a) - tail) and _line_start(b, len(b) - tail)):
        cut = a.find("\n", len(a) - tail)
        tail = len(a) - cut - 1 if cut != -1 else 0
    return start, tail


def _token_bounds(a: str, b: str) -> tuple[int, int]:
    """Lengths of the whole tokens that `a` and `b` begin and end with in common."""
    gap = _LAST_GAP.match(a, 0, _common_prefix(a, b))
    start = gap.end() if gap else 0
    tail = _common_suffix(a, b, min(len(a), len(b)) - start)
    gap = _NEXT_GAP.search(a, len(a) - tail)
    return start, (len(a) - gap.end() if gap else 0)


def _line_start(text: str, at: int) -> bool:
    return at == 0 or text[at - 1] == "\n"


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix, comparing halving slices in C (linear in all)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: str, b: str, most: int) -> int:
    low, high = 0, most
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle : len(a) - low] == b[len(b) - middle : len(b) - low]:
            low = middle
        else:
            high = middle - 1
    return low


def _tokens(old: str, new: str, budget: DiffBudget) -> tuple[list[str] | None, list[str]]:
    """Both texts split into tokens, or (None, []) when the shorter one's tokens times the
    longer one's would overrun the cells: the longer is split only that far."""
    short, long = (old, new) if len(old) <= len(new) else (new, old)
    short_tokens = _TOKEN.findall(short)
    most = min(budget.cells, TABLE_CELLS) // max(1, len(short_tokens))
    if most >= len(long):
        long_tokens = _TOKEN.findall(long)
    else:
        long_tokens = [match.group() for match in islice(_TOKEN.finditer(long), most + 1)]
        if len(long_tokens) > most:
            return None, []
    return (short_tokens, long_tokens) if short is old else (long_tokens, short_tokens)


def _push(chunks: list[DiffChunk], kind: ChunkKind, text: str) -> None:
    if not text:
        return
    if chunks and chunks[-1].kind == kind:
        chunks[-1] = DiffChunk(kind, chunks[-1].text + text)
    else:
        chunks.append(DiffChunk(kind, text))
