"""PAM's integrity block as memories stream by: each memory's RFC 8785 form, and the SHA-256 of
the canonical memories array in id order, computed without holding the array."""

from __future__ import annotations

import hashlib
import json
import tempfile
from typing import IO, Any

from portable_ai_memory.core.integrity import canonicalize_jcs


class _Unusual(Exception):
    """A value whose RFC 8785 form the standard JSON encoder does not write."""


# JSON's encoder writes integers exactly only up to this size, and RFC 8785 numbers are doubles.
_EXACT_INTEGER = 2**53


def _jcs_ready(value: Any) -> Any:
    """`value` with its numbers as RFC 8785 writes them (a double without a fraction as an
    integer), or _Unusual where the standard encoder would differ: an exponent, a key outside
    the Basic Multilingual Plane (RFC 8785 orders keys by UTF-16 code units), a type other
    than JSON's own (a subclass takes the SDK's canonicaliser).

    By exact type, and strings (most of a memory) taken as they are without a call: this walk
    was as costly as the encoding itself.
    """
    kind = type(value)
    if kind is dict:
        ready = {}
        for key, item in value.items():
            if type(key) is not str or (not key.isascii() and max(key) > "\uffff"):
                raise _Unusual
            item_kind = type(item)
            if item_kind is str or item_kind is bool or item is None:
                ready[key] = item
            elif item_kind is float:
                ready[key] = _jcs_number(item)
            else:
                ready[key] = _jcs_ready(item)
        return ready
    if kind is list:
        return [item if type(item) is str else _jcs_ready(item) for item in value]
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        if abs(value) >= _EXACT_INTEGER:
            raise _Unusual
        return value
    if kind is float:
        return _jcs_number(value)
    raise _Unusual


def _jcs_number(value: float) -> float | int:
    if value.is_integer() and abs(value) < _EXACT_INTEGER:
        return int(value)
    if "e" in repr(value) or "n" in repr(value):
        raise _Unusual
    return value


def canonical(memory: dict[str, Any]) -> bytes:
    """A memory's RFC 8785 (JCS) form, as the SDK's `canonicalize_jcs` writes it.

    The standard encoder writes JCS for what exports hold (sorted keys, no spaces, the same
    string escapes, shortest round-trip numbers) at a tenth of the cost of the pure-Python
    canonicaliser, which is kept for whatever it would write differently.
    """
    try:
        ready = _jcs_ready(memory)
        text = json.dumps(ready, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return text.encode("utf-8")
    except (_Unusual, UnicodeEncodeError):
        return canonicalize_jcs(memory)


class Checksum:
    """The integrity checksum of the memories added (each by its id and canonical form): the
    SDK's `compute_integrity_checksum`, which sorts the memories by id (stably) and hashes the
    canonical array.

    Memories added in id order are hashed as they come. Otherwise (`in_id_order` False: a file
    may list them in any order) each canonical form goes to a temporary file, and only the ids
    and where their forms lie stay in memory until the end sorts them.
    """

    def __init__(self, *, in_id_order: bool) -> None:
        self._hash = hashlib.sha256(b"[")
        self._last: str | None = None
        # Closed by value(), or with this object when a refusal comes first.
        spill = None if in_id_order else tempfile.TemporaryFile()  # noqa: SIM115
        self._spill: IO[bytes] | None = spill
        self._where: list[tuple[str, int, int]] = []
        self._offset = 0
        self.count = 0

    def add(self, memory_id: str, form: bytes) -> None:
        if self._spill is None:
            if self._last is not None and memory_id < self._last:
                raise ValueError(f"memory {memory_id!r} comes after {self._last!r}.")
            self._last = memory_id
            self._hash.update(b"," + form if self.count else form)
        else:
            self._spill.write(form)
            self._where.append((memory_id, self._offset, len(form)))
            self._offset += len(form)
        self.count += 1

    def value(self) -> str:
        """`sha256:<hex>`; the memories added are spent (call once)."""
        if self._spill is not None:
            spill, where = self._spill, self._where
            # Stable, like the SDK's sort: equal ids (refused anyway) keep the file's order.
            where.sort(key=lambda entry: entry[0])
            for position, (_, offset, length) in enumerate(where):
                spill.seek(offset)
                self._hash.update(b"," if position else b"")
                self._hash.update(spill.read(length))
            spill.close()
            self._spill, self._where = None, []
        self._hash.update(b"]")
        return f"sha256:{self._hash.hexdigest()}"
