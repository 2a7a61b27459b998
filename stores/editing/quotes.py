"""Quoting a stretch of a document back to the caller in whole words, so it can be copied.

A refusal quotes text (the closest match, the words around each occurrence) for a model to
copy into its next attempt; a word cut in half there would be copied cut in half. Every
helper here looks at most a fixed number of characters past the stretch it widens.
"""

from __future__ import annotations

HINT_CHARS = 200
# How far a quoted stretch may grow to begin and end on whole words.
WORD_SLACK = 40
CUT = "…"


def whole_words(line: str, begin: int, end: int) -> str:
    """line[begin:end] without blanks at its edges, widened to whole words.

    A side that would have to grow by more than WORD_SLACK characters to reach the end of its
    word (a long URL, a hash) stays inside the word and is marked with CUT.
    """
    stretch = line[begin:end]
    if stretch.strip():
        begin += len(stretch) - len(stretch.lstrip())
        end -= len(stretch) - len(stretch.rstrip())
    cut_before = cut_after = False
    if begin > 0 and not line[begin - 1].isspace():
        before = line[max(0, begin - WORD_SLACK) : begin]
        space = _last_space(before)
        if space is not None:
            begin -= len(before) - space - 1
        elif begin <= WORD_SLACK:
            begin = 0
        else:
            cut_before = True
    if end < len(line) and not line[end].isspace():
        after = line[end : end + WORD_SLACK]
        space = _first_space(after)
        if space is not None:
            end += space
        elif len(line) - end <= WORD_SLACK:
            end = len(line)
        else:
            cut_after = True
    return (CUT if cut_before else "") + line[begin:end] + (CUT if cut_after else "")


def words_before(text: str, at: int, reach: int) -> str:
    """The whole words that end at `at`, within `reach` characters and on the same line."""
    line_start = text.rfind("\n", max(0, at - reach), at) + 1
    start = max(line_start, at - reach)
    before = text[start:at]
    if start > line_start and not text[start - 1].isspace():
        # The reach began inside a word: keep only the words after it.
        space = _first_space(before)
        before = "" if space is None else before[space + 1 :]
    return before.lstrip()


def words_after(text: str, at: int, reach: int) -> str:
    """The whole words that begin at `at`, within `reach` characters and on the same line."""
    line_end = text.find("\n", at, at + reach)
    end = min(at + reach, len(text)) if line_end == -1 else line_end
    after = text[at:end]
    if end < len(text) and end != line_end and not text[end].isspace():
        space = _last_space(after)
        after = "" if space is None else after[:space]
    return after.rstrip()


def clip(snippet: str) -> str:
    """At most HINT_CHARS characters (and a CUT), cut after a whole word when one ends near the
    limit."""
    if len(snippet) <= HINT_CHARS:
        return snippet
    head = snippet[:HINT_CHARS]
    if not snippet[HINT_CHARS].isspace():
        cut = _last_space(head) or 0
        if cut >= HINT_CHARS - WORD_SLACK:
            head = head[:cut]
    return head.removesuffix(CUT) + CUT


def _first_space(s: str) -> int | None:
    return next((i for i, c in enumerate(s) if c.isspace()), None)


def _last_space(s: str) -> int | None:
    return next((len(s) - 1 - i for i, c in enumerate(reversed(s)) if c.isspace()), None)
