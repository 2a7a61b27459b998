"""Files of the embedded default that only the user running memoryadmin may read.

The data folder holds the SQLite database (every memory of every agent), the installation's
secret key and the first administrator's password. Read by settings before Django is set
up, so this module uses the standard library only.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from pathlib import Path

# SQLite creates the write-ahead log and shared-memory files with the database file's mode.
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def private_directory(path: Path) -> Path:
    """Create the folder 0700 if it is missing; an existing folder is the operator's choice."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def private_database(path: Path) -> Path:
    """Create the SQLite file 0600 before SQLite does (SQLite would make it 0644).

    A database made by an earlier version, readable by others, is narrowed to 0600 with its
    journal files, when this user owns it.
    """
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        for candidate in (path, *(Path(f"{path}{suffix}") for suffix in SQLITE_COMPANIONS)):
            _narrow(candidate)
    return path


def write_private(path: Path, text: str) -> None:
    """Replace the file with `text`, 0600 from the first byte (never briefly world-readable)."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def installation_secret(path: Path) -> str:
    """This installation's secret key: read from `path`, made there on first start.

    The key is written to a private temporary file (mkstemp: O_CREAT|O_EXCL, 0600) and then
    hard-linked to its name, which fails if the name exists: the name appears only with its
    whole content, and of processes starting at once every one ends up with the key of
    whichever linked first.
    """
    with contextlib.suppress(FileNotFoundError):
        return _read_secret(path)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(50) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        Path(temporary).unlink(missing_ok=True)
    return _read_secret(path)


def _read_secret(path: Path) -> str:
    _narrow(path)
    key = path.read_text().strip()
    if not key:
        raise ValueError(f"{path} is empty: delete it to make a new secret key.")
    return key


def _narrow(path: Path) -> None:
    try:
        status = path.stat()
    except FileNotFoundError:
        return
    if status.st_mode & 0o077 and status.st_uid == os.geteuid():
        path.chmod(0o600)
