"""Files written whole or not at all, and path segments that stay inside their folder."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO
from urllib.parse import quote, unquote

# Characters kept as they are in a file or folder name; everything else is %-escaped.
_SAFE = " -_.,@+=()[]{}'!~&;$"


def write_atomic(path: Path, data: bytes) -> bool:
    """Write `data` to `path` through a sibling temp file and os.replace.

    A reader sees the old file or the new one, never half of one. Returns False (and
    writes nothing) when the file already holds exactly these bytes.
    """
    if path.is_file() and path.read_bytes() == data:
        return False
    # No fsync per file: an agent directory holds 100,000 small files, and the rename alone
    # already guarantees a reader never sees half a file.
    with atomic_output(path, sync=False) as output:
        output.write(data)
    return True


@contextlib.contextmanager
def atomic_output(path: Path, *, sync: bool = True) -> Iterator[BinaryIO]:
    """A binary file that becomes `path` only when the block ends without an error.

    With `sync`, its bytes reach the disk before the rename (survives a power cut too).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    temp_path = Path(temp_name)
    try:
        with os.fdopen(handle, "wb") as temp:
            yield temp
            temp.flush()
            if sync:
                os.fsync(temp.fileno())
        temp_path.replace(path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp_path.unlink()
        raise


def segment(name: str) -> str:
    """`name` as one safe path segment (no separators, never `.` or `..`)."""
    if not name:
        raise ValueError("An empty name cannot be a file or folder name.")
    escaped = quote(name, safe=_SAFE)
    if escaped in (".", ".."):
        escaped = escaped.replace(".", "%2E")
    return escaped


def unsegment(name: str) -> str:
    return unquote(name)
