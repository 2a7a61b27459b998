"""Taking given texts out of a JSON value: each occurrence replaced by a marker, the rest of
every string kept, so a path that happens to hold a removed text keeps its folders.

Pure Python. The cost is one pass of `str.replace` per text over each string of the value
(keys too), so it follows the size of the value and the number of texts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def replace_within(value: Any, texts: Iterable[str], marker: str) -> tuple[Any, int]:
    """`value` (a string, or a JSON value of lists, objects and scalars) with every
    occurrence of each text replaced by `marker`, longer texts first, in every string and
    object key; and how many occurrences were replaced. An empty text is never looked for."""
    ordered = sorted({text for text in texts if text}, key=len, reverse=True)
    return _replace(value, ordered, marker)


def _replace(value: Any, texts: list[str], marker: str) -> tuple[Any, int]:
    if isinstance(value, str):
        found = 0
        for text in texts:
            count = value.count(text)
            if count:
                found += count
                value = value.replace(text, marker)
        return value, found
    if isinstance(value, list):
        items = [_replace(item, texts, marker) for item in value]
        return [item for item, _ in items], sum(found for _, found in items)
    if isinstance(value, dict):
        total = 0
        replaced = {}
        for key, item in value.items():
            new_key, key_found = _replace(key, texts, marker)
            replaced[new_key], item_found = _replace(item, texts, marker)
            total += key_found + item_found
        return replaced, total
    return value, 0
