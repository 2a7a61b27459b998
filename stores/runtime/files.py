"""A file written whole or not at all: an export that fails half-way leaves what was there."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


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
