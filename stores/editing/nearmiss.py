"""Finding the text closest to an old_string that did not match, and saying why.

The search costs little for any text and needle within the size limits. While scoring every
candidate window is cheap it is done exactly (rapidfuzz's Indel ratio, in C). Otherwise pieces of
the needle (anchors) are looked up in the text, the few places most of them point at become the
candidates, and only those are scored, on at most EXACT_CHARS characters each.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from stores.editing.errors import NearMiss
from stores.editing.quotes import clip, whole_words
from stores.editing.work import charge

_CURLY_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
    }
)
_NBSP = str.maketrans({"\u00a0": " ", "\u202f": " ", "\u2007": " "})
# A tab or a run of blanks; a single space is left alone.
_SPACE_RUN = re.compile(r"[ \t]{2,}|\t")
# Only a run's first character may start a match, and the run is never given back: a plain
# `[ \t]+$` retries from every space of a long run and takes quadratic time.
_TRAILING_SPACE = re.compile(r"(?<![ \t])[ \t]++$", re.MULTILINE)


# The regular expressions cost a pass per character; these checks (in C) skip most texts.
def _single_spaces(s: str) -> str:
    return _SPACE_RUN.sub(" ", s) if "\t" in s or "  " in s else s


def _no_trailing_space(s: str) -> str:
    if " \n" in s or "\t\n" in s or s.endswith((" ", "\t")):
        return _TRAILING_SPACE.sub("", s)
    return s


# Whole-text transforms that keep the number of lines, so a hit maps back to a line.
_INVISIBLE: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("a non-breaking space differs from a plain space", lambda s: s.translate(_NBSP)),
    ("curly and straight quotes differ", lambda s: s.translate(_CURLY_QUOTES)),
    ("tabs and spaces (or runs of spaces) differ", _single_spaces),
    ("trailing whitespace at the end of a line differs", _no_trailing_space),
    ("only letter case differs", str.casefold),
)

_ALL_INVISIBLE = "only invisible characters (whitespace, quotes, case) differ"


def _without_invisible(s: str) -> str:
    for _, transform in _INVISIBLE:
        s = transform(s)
    return s


# A rule or a heading is one line of words: a space missing or added between two of them is
# worth naming too (a phrase cannot be compared that way, as its line breaks must stay).
_CHOICE_DIFFERENCES: tuple[tuple[str, Callable[[str], str]], ...] = (
    *_INVISIBLE,
    (_ALL_INVISIBLE, _without_invisible),
    ("only the spaces between words differ", lambda s: "".join(s.split())),
)

SIMILARITY_FLOOR = 0.5
# Every window is scored while that compares at most SCAN_CELLS (needle character, window
# character) pairs and builds at most SCAN_WINDOWS windows of SCAN_CHARS characters in all.
SCAN_CELLS = 60_000_000
SCAN_CHARS = 2_000_000
SCAN_WINDOWS = 20_000
# Otherwise ANCHORS pieces of ANCHOR_LENGTH characters, spread over the needle, are looked up; a
# piece found more than ANCHOR_HITS times says nothing about where the needle belongs.
ANCHORS = 48
ANCHOR_LENGTH = 8
ANCHOR_HITS = 256
# The CANDIDATES places most pieces point at are scored on their first EXACT_CHARS characters.
CANDIDATES = 4
EXACT_CHARS = 10_000
# No search compares more cells than this, whatever the text and the needle.
CELL_BUDGET = max(SCAN_CELLS, CANDIDATES * EXACT_CHARS**2)

# Headings and rules are told apart by their beginnings; at this length a list as long as the
# largest text (500,000 characters) stays within CELL_BUDGET.
_CLOSEST_CHARS = 500
# rapidfuzz aligns a needle this short inside a long line in one pass over the line.
_SHORT_NEEDLE = 64


@dataclass(frozen=True)
class _Hit:
    score: float
    line: int
    text: str


def find_near_miss(text: str, needle: str) -> NearMiss | None:
    """The best candidate for `needle` in `text` (both with LF line endings), or None."""
    if not text or not needle:
        return None
    return _invisible_difference(text, needle) or _most_similar(text, needle)


def closest_line(
    wanted: str, lines: list[tuple[int, str]], compared: list[str] | None = None
) -> NearMiss | None:
    """The near miss among whole lines (rules, headings), each its line number and text: the
    one most like `wanted`, compared as `compared` spells them when given (normalized)."""
    close = closest(wanted, compared if compared is not None else [text for _, text in lines])
    if close is None:
        return None
    index, similarity, explanation = close
    line, text = lines[index]
    return NearMiss(line, text, similarity, explanation)


def closest(wanted: str, choices: list[str]) -> tuple[int, float, str | None] | None:
    """The index, similarity and (for an invisible difference) explanation of the choice most
    like `wanted`, or None below the floor.

    A choice that equals `wanted` once letter case, quotes or spacing are set aside is named
    first, with its explanation and similarity 1.0, as a phrase hint is. Otherwise both are
    scored on their first _CLOSEST_CHARS characters (the first choice wins a tie), so a list
    of headings or rules costs at most _CLOSEST_CHARS cells per character it holds.
    """
    explained = _explained(wanted, choices)
    if explained is not None:
        return explained[0], 1.0, explained[1]
    wanted = wanted[:_CLOSEST_CHARS]
    clipped = [choice[:_CLOSEST_CHARS] for choice in choices]
    charge("nearmiss.candidates", len(clipped))
    charge("nearmiss.cells", len(wanted) * sum(map(len, clipped)))
    found = process.extractOne(
        wanted, clipped, scorer=fuzz.ratio, score_cutoff=SIMILARITY_FLOOR * 100
    )
    return None if found is None else (found[2], round(found[1] / 100, 3), None)


def _explained(wanted: str, choices: list[str]) -> tuple[int, str] | None:
    """The first choice equal to `wanted` under the first transform that makes one equal."""
    total = len(wanted) + sum(map(len, choices))
    for explanation, transform in _CHOICE_DIFFERENCES:
        target = transform(wanted)
        if not target.strip():
            continue
        charge("nearmiss.scanned", 2 * total)
        for index, choice in enumerate(choices):
            if transform(choice) == target:
                return index, explanation
    return None


def _invisible_difference(text: str, needle: str) -> NearMiss | None:
    for explanation, transform in (*_INVISIBLE, (_ALL_INVISIBLE, _without_invisible)):
        hit = _find_transformed(text, needle, transform)
        if hit is not None:
            return NearMiss(
                line=hit, text=_line_text(text, hit), similarity=1.0, explanation=explanation
            )
    return None


def _find_transformed(text: str, needle: str, transform: Callable[[str], str]) -> int | None:
    transformed_needle = transform(needle)
    if not transformed_needle.strip():
        return None
    transformed_text = transform(text)
    charge("nearmiss.scanned", len(text) + len(transformed_text))
    index = transformed_text.find(transformed_needle)
    if index == -1:
        return None
    return transformed_text.count("\n", 0, index) + 1


def _line_text(text: str, line: int) -> str:
    lines = text.split("\n")
    return clip(lines[line - 1] if 0 < line <= len(lines) else "")


def _most_similar(text: str, needle: str) -> NearMiss | None:
    lines = text.split("\n")
    span = needle.count("\n") + 1
    if span > 1:
        windows = max(1, len(lines) - span + 1)
        covered = min(span, windows) * (len(text) + 1)
        affordable = (
            windows <= SCAN_WINDOWS
            and covered <= SCAN_CHARS
            and len(needle) * covered <= SCAN_CELLS
        )
        scan = _scan_windows
    else:
        # Windows inside long lines overlap by half, so each character is compared twice.
        affordable = 2 * len(needle) * len(text) <= SCAN_CELLS and 2 * len(text) <= SCAN_CHARS
        scan = _scan_lines
    hit = scan(lines, needle) if affordable else _anchored(text, lines, needle, span)
    if hit is None:
        return None
    return NearMiss(line=hit.line, text=clip(hit.text), similarity=round(hit.score, 3))


# --- scoring every window --------------------------------------------------------------


def _scan_windows(lines: list[str], needle: str) -> _Hit | None:
    """Every run of as many lines as the needle has."""
    span = needle.count("\n") + 1
    firsts = range(max(1, len(lines) - span + 1))
    windows = ["\n".join(lines[first : first + span]) for first in firsts]
    found = _best_of(needle, windows)
    if found is None:
        return None
    score, index = found
    return _Hit(score, index + 1, windows[index])


def _scan_lines(lines: list[str], needle: str) -> _Hit | None:
    """Every line; in a line much longer than the needle, the stretch that fits it best."""
    width = len(needle)
    short: list[str] = []
    numbers: list[int] = []
    best: _Hit | None = None
    for number, line in enumerate(lines, start=1):
        if len(line) <= 2 * width:
            short.append(line)
            numbers.append(number)
        else:
            best = _better(best, _best_in_line(needle, line, number))
    found = _best_of(needle, short)
    if found is not None:
        score, index = found
        best = _better(best, _Hit(score, numbers[index], short[index]))
    return best


def _best_in_line(needle: str, line: str, number: int) -> _Hit | None:
    width = len(needle)
    if width <= _SHORT_NEEDLE:
        charge("nearmiss.cells", width * len(line))
        charge("nearmiss.candidates", 1)
        aligned = fuzz.partial_ratio_alignment(needle, line, score_cutoff=SIMILARITY_FLOOR * 100)
        if aligned is None:
            return None
        begin, end, score = aligned.dest_start, aligned.dest_end, aligned.score / 100
    else:
        starts = range(0, len(line) - width + 1, max(1, width // 2))
        found = _best_of(needle, [line[start : start + width] for start in starts])
        if found is None:
            return None
        score, index = found
        begin = starts[index]
        end = begin + width
    return _Hit(score, number, whole_words(line, begin, end))


def _best_of(needle: str, choices: list[str]) -> tuple[float, int] | None:
    """The best score at or above the floor and the first choice that has it."""
    unique = list(dict.fromkeys(choices))
    charge("nearmiss.candidates", len(unique))
    charge("nearmiss.cells", len(needle) * sum(map(len, unique)))
    found = process.extractOne(
        needle, unique, scorer=fuzz.ratio, score_cutoff=SIMILARITY_FLOOR * 100
    )
    if found is None:
        return None
    return found[1] / 100, choices.index(found[0])


# --- scoring only where anchors point -------------------------------------------------


def _anchored(text: str, lines: list[str], needle: str, span: int) -> _Hit | None:
    best: _Hit | None = None
    seen: set[tuple[int, int]] = set()
    for start in _likely_starts(text, needle):
        if len(seen) == CANDIDATES:
            break
        index = text.count("\n", 0, max(0, start))
        if span > 1:
            first = max(0, min(index, len(lines) - span))
            candidate = hint = "\n".join(lines[first : first + span])
            key = (first, 0)
        else:
            line = lines[index]
            first = index
            if len(line) <= 2 * len(needle):
                candidate = hint = line
                key = (first, 0)
            else:
                line_start = text.rfind("\n", 0, max(0, start)) + 1
                begin = min(max(0, start - line_start), len(line) - len(needle))
                candidate = line[begin : begin + len(needle)]
                hint = whole_words(line, begin, begin + len(needle))
                key = (first, begin)
        if key in seen:
            continue
        seen.add(key)
        score = _exact(needle, candidate)
        if score >= SIMILARITY_FLOOR:
            best = _better(best, _Hit(score, first + 1, hint))
    return best


def _likely_starts(text: str, needle: str) -> list[int]:
    """Offsets in `text` where the needle would begin, best first.

    Each anchor found at position p, taken from offset j of the needle, votes for a start at
    p - j. Votes are pooled in bands, and a band also counts its neighbour's, so a needle whose
    insertions or deletions shift its later anchors still counts whole.
    """
    length = min(ANCHOR_LENGTH, max(1, len(needle) // 2))
    last = len(needle) - length
    count = min(ANCHORS, last + 1)
    offsets = sorted({round(k * last / max(1, count - 1)) for k in range(count)})
    band = max(length, len(needle) // 16)
    voters: dict[int, set[int]] = {}
    earliest: dict[int, tuple[int, int]] = {}
    crowded: list[tuple[int, int]] = []
    scanned = votes = 0
    for anchor, offset in enumerate(offsets):
        piece = needle[offset : offset + length]
        hits: list[int] = []
        position = text.find(piece)
        while position != -1 and len(hits) <= ANCHOR_HITS:
            hits.append(position)
            position = text.find(piece, position + 1)
        scanned += len(text) + len(hits) * length
        if len(hits) > ANCHOR_HITS:
            crowded.append((offset, hits[0] - offset))
            continue
        votes += len(hits)
        for hit in hits:
            start = hit - offset
            bucket = start // band
            voters.setdefault(bucket, set()).add(anchor)
            if bucket not in earliest or offset < earliest[bucket][0]:
                earliest[bucket] = (offset, start)
    charge("nearmiss.scanned", scanned)
    charge("nearmiss.votes", votes)
    if not voters:
        # Every piece is everywhere (a text like "abab…"): any place is as good as the first.
        return [start for _, start in crowded[:1]]
    empty: set[int] = set()
    ranked = sorted(voters, key=lambda b: (-len(voters[b] | voters.get(b + 1, empty)), b))
    starts: list[int] = []
    for bucket in ranked[: 2 * CANDIDATES]:
        pair = [earliest[b] for b in (bucket, bucket + 1) if b in earliest]
        starts.append(min(pair)[1])
    return starts


def _exact(needle: str, candidate: str) -> float:
    needle, candidate = needle[:EXACT_CHARS], candidate[:EXACT_CHARS]
    charge("nearmiss.cells", len(needle) * len(candidate))
    charge("nearmiss.candidates", 1)
    return fuzz.ratio(needle, candidate) / 100


# --- shaping the hint -------------------------------------------------------------------


def _better(best: _Hit | None, hit: _Hit | None) -> _Hit | None:
    """The higher score; on a tie, the earlier line."""
    if hit is None:
        return best
    if best is None or (hit.score, -hit.line) > (best.score, -best.line):
        return hit
    return best
