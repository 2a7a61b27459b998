"""Undoing one change: the inverse of an old change applied to today's text.

A three-way merge, of lines and then, where lines meet, of words. The base is the text the
change produced (`after`); one side is the change reversed (`after` -> `before`), the other is
everything written since (`after` -> `current`). Where the reversal and the later edits touch
different lines, the reversal is applied to today's text and the later edits stay. "The same
lines" means sharing a line, an insertion strictly inside a changed run, or two insertions at
one place (their order would be a guess); an edit that only borders the undone lines is kept
beside them. Where the later edits already made exactly the reversal, there is nothing left to
do there. Where lines meet, the merge is made again over tokens (words, runs of whitespace,
other single characters): two changes of one line apart by at least one word or mark both hold
("Acme" comes back, "Lyon" stays); changes with at most whitespace between them ("mate" became
"yerba mate") are one phrase, and the undo is refused as a conflict, naming the lines.

The diffs are the bounded diffs of stores.editing.diff: what does not fit their budget is
compared coarser, which can only widen a conflict, never merge wrongly.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from stores.editing.diff import DiffBudget, Opcode, line_opcodes, token_opcodes
from stores.editing.errors import NoChange, TextEditError
from stores.editing.limits import check_length
from stores.editing.status import Status

# A run of lines [start, end) of a text, 0-based; empty (start == end) for an insertion point.
Region = tuple[int, int]


@dataclass(frozen=True)
class _Hunk:
    """One changed run: lines [start, end) of the base become lines [out_start, out_end)."""

    start: int
    end: int
    out_start: int
    out_end: int


class UndoConflict(TextEditError):
    """Later edits touched lines the undo would change.

    `regions`: the runs the undo would change that later edits touched, in the lines of the
    changed text (`after`), to follow through the later changes (`touched_by`); `lines`: where
    the later edits stand in today's text, as 1-based (first, last) line numbers.
    """

    status = Status.CONFLICT

    def __init__(
        self, message: str, *, regions: tuple[Region, ...], lines: tuple[tuple[int, int], ...]
    ) -> None:
        super().__init__(message)
        self.regions = regions
        self.lines = lines


def undo_change(
    before: str,
    after: str,
    current: str,
    *,
    max_length: int | None = None,
    budget: DiffBudget | None = None,
) -> str:
    """Today's text `current` with the change `before` -> `after` taken back.

    Refused as UndoConflict where later edits touched the same lines and, within those
    lines, the same words; as NoChange when there is nothing left to take back, and as
    TooLong (before the text is built) past `max_length`. All the diffs share one budget.
    """
    budget = DiffBudget() if budget is None else budget
    undo = _Sides(*line_opcodes(after, before, budget=budget))
    since = _Sides(*line_opcodes(after, current, budget=budget))
    if not _changed(undo.codes):
        raise NoChange("The change altered no line of the text; there is nothing to undo.")
    try:
        return _rebase(undo, since, max_length)
    except _Clashed as by_lines:
        # Two changes of one line may still touch different words of it ("Acme" taken back
        # where "Paris" became "Lyon" since): compared word by word, the undo is refused only
        # where the words overlap, and then as its lines are.
        try:
            return _rebase(
                _Sides(*token_opcodes(after, before, budget=budget), words=True),
                _Sides(*token_opcodes(after, current, budget=budget), words=True),
                max_length,
            )
        except _Clashed:
            raise _conflict(by_lines.clashes, len(since.side)) from None


@dataclass(frozen=True)
class _Sides:
    """The changed text (the base) and one side, split alike (into lines or into tokens),
    and the runs turning the base into that side."""

    base: list[str]
    side: list[str]
    codes: list[Opcode]
    # Tokens: changes only whitespace apart are one change ("the cat" -> "a dog"), so a word
    # written between them since is inside it, a conflict, not beside it.
    words: bool = False

    def hunks(self) -> list[_Hunk]:
        hunks = _changed(self.codes)
        if not self.words:
            return hunks
        joined: list[_Hunk] = []
        for hunk in hunks:
            last = joined[-1] if joined else None
            if last is not None and "".join(self.base[last.end : hunk.start]).isspace():
                joined[-1] = _Hunk(last.start, hunk.end, last.out_start, hunk.out_end)
            else:
                joined.append(hunk)
        return joined


class _Clashed(Exception):
    """The undo's runs and the later edits' touch the same items: each undo run with the
    later runs it met."""

    def __init__(self, clashes: list[tuple[_Hunk, list[_Hunk]]]) -> None:
        super().__init__("clashed")
        self.clashes = clashes


def _rebase(reversal: _Sides, later_edits: _Sides, max_length: int | None) -> str:
    """The three-way merge: the reversal's runs applied to the later side where the later
    edits left them alone. `_Clashed` where they touch the same items."""
    restored, today = reversal.side, later_edits.side
    undo = reversal.hunks()
    since = later_edits.hunks()
    kept: list[_Hunk] = []
    clashes: list[tuple[_Hunk, list[_Hunk]]] = []
    # Tokens: a later run may also stand one token away, across a run of whitespace.
    reach = 1 if reversal.words else 0
    first = 0  # the first later hunk that can still meet an undo hunk (both lists are in order)
    for hunk in undo:
        while first < len(since) and since[first].end < hunk.start - reach:
            first += 1
        met: list[_Hunk] = []
        index = first
        while index < len(since) and since[index].start <= hunk.end + reach:
            later = since[index]
            if _clash(hunk, later) or (reversal.words and _abut(hunk, later, reversal.base)):
                met.append(later)
            index += 1
        if not met:
            kept.append(hunk)
        elif not _same_change(hunk, met, restored, today):
            clashes.append((hunk, met))
    if clashes:
        raise _Clashed(clashes)
    if not kept:
        raise NoChange(
            "Today's text already reads as it did before that change; there is nothing to undo."
        )

    # Each kept run lies in items the later edits left alone, so it sits in today's text
    # shifted by what the later edits before it added or removed.
    shifts: list[tuple[int, int]] = []  # (start in today's text, end) of each kept run
    shift = 0
    passed = 0
    for hunk in kept:
        while passed < len(since) and since[passed].end <= hunk.start:
            done = since[passed]
            shift += (done.out_end - done.out_start) - (done.end - done.start)
            passed += 1
        shifts.append((hunk.start + shift, hunk.end + shift))
    length = _length(today, 0, len(today)) + sum(
        _length(restored, hunk.out_start, hunk.out_end)
        - _length(reversal.base, hunk.start, hunk.end)
        for hunk in kept
    )
    check_length(length, max_length, what="Undoing that change")
    pieces: list[str] = []
    cursor = 0
    for hunk, (start, end) in zip(kept, shifts, strict=True):
        pieces += today[cursor:start]
        pieces += restored[hunk.out_start : hunk.out_end]
        cursor = end
    pieces += today[cursor:]
    return "".join(pieces)


def touched_by(
    regions: Sequence[Region],
    changes: Iterable[tuple[str, str]],
    *,
    budget: DiffBudget | None = None,
) -> list[int]:
    """The positions in `changes` of the changes that touched the same lines as `regions`, by
    the rule the merge uses (a change only bordering a region does not touch it).

    `changes` are consecutive (before, after) texts, the first starting from the text whose
    lines `regions` are; each region is followed through every change, widened by what a change
    touching it wrote. One budget bounds all the diffs together.
    """
    budget = DiffBudget() if budget is None else budget
    followed = list(regions)
    touched: list[int] = []
    for position, (before, after) in enumerate(changes):
        _, _, codes = line_opcodes(before, after, budget=budget)
        hunks = _changed(codes)
        starts = [hunk.start for hunk in hunks]
        code_starts = [i1 for _, i1, _, _, _ in codes]
        moved: list[Region] = []
        hit = False
        for start, end in followed:
            # Only the hunk just before the region can reach into it from the left; the hunks
            # come in the order of their starts.
            after_region = hunks[
                max(0, bisect.bisect_left(starts, start) - 1) : bisect.bisect_right(starts, end)
            ]
            region = _Hunk(start, end, start, end)
            near = [hunk for hunk in after_region if _clash(region, hunk)]
            hit = hit or bool(near)
            new_start = _follow(start, codes, code_starts, end=False)
            new_end = _follow(end, codes, code_starts, end=True)
            if near:
                new_start = min(new_start, near[0].out_start)
                new_end = max(new_end, near[-1].out_end)
            moved.append((new_start, max(new_start, new_end)))
        if hit:
            touched.append(position)
        followed = moved
    return touched


def _changed(codes: list[Opcode]) -> list[_Hunk]:
    return [_Hunk(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in codes if tag != "equal"]


def _clash(undo: _Hunk, later: _Hunk) -> bool:
    """Whether two runs of base lines touch the same lines (see the module's note)."""
    if undo.start < later.end and later.start < undo.end:
        return True
    return undo.start == undo.end == later.start == later.end


def _abut(undo: _Hunk, later: _Hunk, base: list[str]) -> bool:
    """Whether two runs of tokens meet, with at most whitespace between them: words written
    right beside the undone ones ("mate" -> "yerba mate") belong to the same phrase."""
    gap = base[later.end : undo.start] if later.end <= undo.start else base[undo.end : later.start]
    return not "".join(gap).strip()


def _same_change(undo: _Hunk, met: list[_Hunk], restored: list[str], today: list[str]) -> bool:
    """Whether the later edits made exactly this reversal: the same lines, the same result."""
    if len(met) != 1:
        return False
    later = met[0]
    return (undo.start, undo.end) == (later.start, later.end) and restored[
        undo.out_start : undo.out_end
    ] == today[later.out_start : later.out_end]


def _conflict(clashes: list[tuple[_Hunk, list[_Hunk]]], today_lines: int) -> UndoConflict:
    regions = tuple((hunk.start, hunk.end) for hunk, _ in clashes)
    spans: list[tuple[int, int]] = []
    for _, met in clashes:
        for later in met:
            # An edit that removed lines is shown at the line that now stands where they were.
            first = min(later.out_start + 1, max(1, today_lines))
            last = max(first, later.out_end)
            if spans and first <= spans[-1][1] + 1:
                spans[-1] = (spans[-1][0], max(spans[-1][1], last))
            else:
                spans.append((first, last))
    where = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
    return UndoConflict(
        f"Later edits changed the same lines as that change (today's line"
        f"{'' if spans == [(spans[0][0], spans[0][0])] else 's'} {where}), so it cannot be "
        "undone on its own.",
        regions=regions,
        lines=tuple(spans),
    )


def _follow(position: int, codes: list[Opcode], starts: list[int], *, end: bool) -> int:
    """Where a region's start (or, with `end`, its exclusive end) lands after the change;
    `starts` are the first lines of the runs of `codes`."""
    # A start lies in the last run beginning at or before it; an exclusive end, in the last
    # run beginning before it.
    index = (bisect.bisect_left if end else bisect.bisect_right)(starts, position) - 1
    if index < 0:
        return 0
    tag, i1, i2, j1, j2 = codes[index]
    if position >= i2 and not end:
        return j2  # the end of the text
    if tag == "equal":
        return j1 + position - i1
    return j2 if end else j1


def _length(lines: list[str], start: int, end: int) -> int:
    return sum(map(len, lines[start:end]))
