"""The size limit of a text, checked on a result's computed length before the result is built.

Every op computes the length its result would have from the lengths and match counts of its
inputs, so a small request can never make the engine build a text far larger than the limit.
"""

from __future__ import annotations

from stores.editing.errors import InvalidEdit, TooLong


def check_length(length: int, max_length: int | None, *, what: str = "The edit") -> None:
    """Refuse when `length` is over `max_length` (None: no limit)."""
    if max_length is not None and length > max_length:
        raise TooLong(
            f"{what} would make the text {length} characters; it may hold at most "
            f"{max_length}. Nothing was written: shorten the new text, or change fewer places.",
            limit=max_length,
            length=length,
        )


# A batch of phrase edits holds the record's row lock while it runs, and each edit reads the
# whole text: a batch takes at most this many edits ...
MAX_BATCH_EDITS = 100
# ... and reads at most this many characters in all (the text's length at each step, summed):
# about a tenth of a second, so another writer of the same store never waits long. A batch on a
# full-size skill (500,000 characters) takes 40 edits; one on a full-size memory, 100.
MAX_BATCH_WORK = 20_000_000


def check_batch_size(edit_count: int) -> None:
    """Refuse a batch of more than MAX_BATCH_EDITS edits."""
    if edit_count > MAX_BATCH_EDITS:
        raise InvalidEdit(
            f"edits: {edit_count} edits in one batch; a batch takes at most {MAX_BATCH_EDITS}. "
            "Nothing was written: send them in several batches.",
            {"field": "edits", "limit": MAX_BATCH_EDITS, "count": edit_count},
        )


def check_batch_work(work: int, edit_count: int) -> None:
    """Refuse a batch whose edits would read more than MAX_BATCH_WORK characters in all
    (`work`: what the steps done read, plus what the steps left would read at today's length)."""
    if work > MAX_BATCH_WORK:
        per_batch = max(1, MAX_BATCH_WORK * edit_count // work)
        raise InvalidEdit(
            f"edits: these {edit_count} edits would read {work} characters of text (each edit "
            f"reads the whole text); a batch reads at most {MAX_BATCH_WORK}. Nothing was "
            f"written: send about {per_batch} edits a batch on a text this long.",
            {"field": "edits", "limit": MAX_BATCH_WORK, "work": work, "count": edit_count},
        )
