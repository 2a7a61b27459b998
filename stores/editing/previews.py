"""What a preview of a text shows, and whether a full replacement looks made from one.

Recall and list answers show only the start of a long text. An agent that edits that
start and sends it back as the whole text would silently drop everything the preview
did not show; the guard here recognises such a replacement so the service can refuse it.
"""

from __future__ import annotations

import hashlib

# Recall and list answers show this much of a text, never more.
PREVIEW_LENGTH = 500
ELLIPSIS = "…"

# A replacement is taken for an edited preview when its start keeps this share of what the
# preview showed, in order (a few words changed inside the preview still count)...
_KEPT_SHARE = 0.9
# ...within what the preview showed plus this share of room for the caller's insertions...
_INSERTION_ROOM = 0.1
# ...and it does not end the way the current text ends (which no preview shows): a full read
# edited in the middle keeps the ending; a preview plus an added sentence cannot.
_ENDING_LENGTH = 32


def text_sha256(text: str) -> str:
    """The SHA-256 (hex) of `text` as UTF-8: what a full read carries and a preview never does.

    A full replacement of a text longer than a preview sends it back as its proof that it was
    made from the whole text (a version only proves that some read, perhaps a preview, was
    seen). A lone surrogate cannot be stored, but is hashed as sent rather than raise.
    """
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def fingerprint_of_sha256(sha256: str) -> str:
    """What a preview's reader is told of the whole text: the SHA-256 (hex) of its SHA-256
    (hex). A cache holding the whole text computes it and knows whether to re-read; a reader
    of the preview alone cannot turn it back into the text's SHA-256, which stays the proof
    of a full read only a full read gives."""
    return hashlib.sha256(sha256.encode("ascii")).hexdigest()


def cut_preview(text: str) -> str:
    """The first characters of `text`; a cut preview ends in an ellipsis."""
    if len(text) <= PREVIEW_LENGTH:
        return text
    return text[: PREVIEW_LENGTH - 1] + ELLIPSIS


def looks_truncated(current: str, replacement: str) -> bool:
    """Whether `replacement` looks like a preview of `current` (possibly edited), not its whole.

    Three shapes: a strict prefix of the current text; a prefix followed by an ellipsis (a
    preview pasted back as it was shown); and, when the current text is longer than a
    preview, a shorter text that begins with most of the preview but lacks the current
    text's ending. The work is bounded by the preview length, whatever the text lengths.
    """
    if len(replacement) < len(current) and current.startswith(replacement):
        return True
    stem = replacement.rstrip()
    for marker in (ELLIPSIS, "..."):
        if stem.endswith(marker):
            cut = stem[: -len(marker)].rstrip()
            if cut and current.startswith(cut) and replacement != current:
                return True
            break
    return _edited_preview(current, replacement)


def _edited_preview(current: str, replacement: str) -> bool:
    if len(current) <= PREVIEW_LENGTH or len(replacement) >= len(current):
        return False
    shown = current[: PREVIEW_LENGTH - 1]
    head = replacement[: len(shown) + int(len(shown) * _INSERTION_ROOM)]
    if common_subsequence_length(shown, head) < _KEPT_SHARE * len(shown):
        return False
    unseen = current[len(shown) :]
    return not replacement.endswith(unseen[-_ENDING_LENGTH:])


def common_subsequence_length(a: str, b: str) -> int:
    """The length of the longest common subsequence of `a` and `b`.

    Bit-parallel (Hyyrö's formulation of Allison and Dix): one pass over `b` on an integer
    of len(a) bits, so two 500-character strings cost 500 big-integer steps.
    """
    if not a or not b:
        return 0
    positions: dict[str, int] = {}
    for index, char in enumerate(a):
        positions[char] = positions.get(char, 0) | (1 << index)
    mask = (1 << len(a)) - 1
    row = mask
    for char in b:
        matches = row & positions.get(char, 0)
        row = ((row + matches) | (row - matches)) & mask
    return len(a) - row.bit_count()
