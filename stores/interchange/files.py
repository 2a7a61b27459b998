"""Files written whole or not at all, never through a link, and names that fit a file system.

An import directory or an export target may hold links someone planted (an agent can write
into its own directory). Nothing here follows one: every folder on the way to a file is
opened with O_NOFOLLOW from the folder above it, and the file itself too, so a link is met,
refused and reported, never read or written through, whatever changes on disk meanwhile.
Only the root is opened as named: whoever names the directory chooses where it points.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from urllib.parse import quote, unquote

# Characters kept as they are in a file or folder name; everything else is %-escaped.
_SAFE = " -_.,@+=()[]{}'!~&;$"
# Bytes in one file name on Linux and macOS file systems.
NAME_MAX = 255
# A generated name leaves room below NAME_MAX for ".json" and a temp file's affixes.
SEGMENT_MAX = 200
# Characters of a path relative to its root (ImportedSource.path holds at most this).
PATH_MAX = 1000
# Hex digits of the hash that ends a shortened name: 96 bits, no collision can be searched for.
_HASH_CHARS = 24
# Folders kept open while a tree is walked or written (each one file descriptor).
_OPEN_FOLDERS = 32

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO planted under a file's name must not hang the import.
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_LINK = "links are not followed"


class UnsafePath(ValueError):
    """A path that could leave its root or pass through a link; never used, only reported.

    The message says what is wrong with the path, to follow it: "… is a symbolic link".
    """


@dataclass(frozen=True)
class Refused:
    """A path met while walking a tree that is not read, and why."""

    path: str
    reason: str


def relative_parts(relative: str) -> tuple[str, ...]:
    """The segments of `relative`, a path that stays inside its root; UnsafePath otherwise."""
    if not isinstance(relative, str) or not relative:
        raise UnsafePath("is empty")
    if "\x00" in relative:
        raise UnsafePath("contains a NUL character")
    if relative.startswith("/"):
        raise UnsafePath("is absolute")
    try:
        relative.encode("utf-8")
    except UnicodeEncodeError:
        raise UnsafePath("is not UTF-8 text") from None
    if len(relative) > PATH_MAX:
        raise UnsafePath(f"is longer than {PATH_MAX} characters")
    parts = tuple(relative.split("/"))
    for part in parts:
        if not part:
            raise UnsafePath("has an empty segment")
        if part in (".", ".."):
            raise UnsafePath(f"has a {part!r} segment")
        if len(part.encode("utf-8")) > NAME_MAX:
            raise UnsafePath(f"has a name longer than {NAME_MAX} bytes")
    return parts


def display(relative: str) -> str:
    """`relative` as text that can be printed, whatever bytes its names are made of."""
    return os.fsencode(relative).decode("utf-8", "replace")


# --- names -------------------------------------------------------------------------------


def segment(name: str) -> str:
    """`name` as one file or folder name: no separator, never `.` or `..`, at most 200 bytes.

    %-escaping keeps a name exact (`unsegment` gives it back) and pure ASCII, so a file
    system that normalises Unicode cannot merge two names (which NFC would do here). A name
    whose escaped form is longer is cut and ends with `%~` and a hash of the whole name:
    unique, and never the escaped form of another name (escaping writes `%` only before two
    hex digits). It no longer decodes, so a writer keeps such a name in the file's data
    (`is_exact` says when).
    """
    if not name:
        raise ValueError("An empty name cannot be a file or folder name.")
    escaped = quote(name, safe=_SAFE)
    if escaped in (".", ".."):
        escaped = escaped.replace(".", "%2E")
    if len(escaped) <= SEGMENT_MAX:
        return escaped
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:_HASH_CHARS]
    cut = escaped[: SEGMENT_MAX - _HASH_CHARS - 2]
    # Never cut inside a %XX escape.
    percent = cut.find("%", len(cut) - 2)
    if percent != -1:
        cut = cut[:percent]
    return f"{cut}%~{digest}"


def unsegment(name: str) -> str:
    return unquote(name)


def is_exact(name: str) -> bool:
    """Whether the file name `segment(name)` gives `name` back when it is read."""
    return unsegment(segment(name)) == name


# --- trees -------------------------------------------------------------------------------


class _Tree:
    """A directory whose folders are opened one by one from its root, never through a link."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._folders: OrderedDict[tuple[str, ...], int] = OrderedDict()

    def __enter__(self) -> _Tree:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        while self._folders:
            os.close(self._folders.popitem()[1])
        os.close(self._fd)

    def _folder(self, parts: tuple[str, ...], *, create: bool) -> int:
        """An open descriptor of the folder `parts`; UnsafePath if a link is on the way.

        FileNotFoundError when it does not exist and `create` is false.
        """
        if not parts:
            return self._fd
        if parts in self._folders:
            self._folders.move_to_end(parts)
            return self._folders[parts]
        parent = self._folder(parts[:-1], create=create)
        try:
            fd = os.open(parts[-1], _FOLDER, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(parts[-1], dir_fd=parent)
            try:
                fd = os.open(parts[-1], _FOLDER, dir_fd=parent)
            except OSError as error:
                raise self._refusal(parent, parts, error) from None
        except OSError as error:
            raise self._refusal(parent, parts, error) from None
        self._folders[parts] = fd
        if len(self._folders) > _OPEN_FOLDERS:
            os.close(self._folders.popitem(last=False)[1])
        return fd

    @staticmethod
    def _refusal(parent: int, parts: tuple[str, ...], error: OSError) -> Exception:
        if error.errno not in (errno.ELOOP, errno.ENOTDIR):
            return error
        where = "/".join(parts)
        if stat.S_ISLNK(os.stat(parts[-1], dir_fd=parent, follow_symlinks=False).st_mode):
            return UnsafePath(f"passes through {where}, which is a symbolic link ({_LINK})")
        return UnsafePath(f"passes through {where}, which is not a folder")

    @staticmethod
    def _lstat(folder: int, name: str) -> os.stat_result | None:
        try:
            return os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return None

    @staticmethod
    def _read(folder: int, name: str) -> bytes:
        try:
            fd = os.open(name, _READ, dir_fd=folder)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise UnsafePath(f"is a symbolic link ({_LINK})") from None
            raise
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise UnsafePath("is not a regular file")
            return handle.read()


class Source(_Tree):
    """A directory to import from: files are listed and read without following a link."""

    def files(self, folder: str, suffix: str) -> list[str | Refused]:
        """Every regular file named *`suffix` below `folder` ("": the root), in path order;
        links are Refused.

        A link below `folder` is refused whatever it points to, and so is a name that is not
        UTF-8 text (it could not be recorded).
        """
        found: list[str | Refused] = []
        pending = [relative_parts(folder) if folder else ()]
        while pending:
            parts = pending.pop()
            try:
                fd = self._folder(parts, create=False)
            except FileNotFoundError:
                continue
            except UnsafePath as error:
                found.append(Refused("/".join(parts), str(error)))
                continue
            with os.scandir(fd) as entries:
                for entry in entries:
                    child = "/".join((*parts, entry.name))
                    if entry.is_symlink():
                        found.append(Refused(display(child), f"is a symbolic link ({_LINK})"))
                    elif entry.is_dir(follow_symlinks=False):
                        pending.append((*parts, entry.name))
                    elif entry.name.endswith(suffix) and entry.is_file(follow_symlinks=False):
                        try:
                            relative_parts(child)
                        except UnsafePath as error:
                            found.append(Refused(display(child), str(error)))
                        else:
                            found.append(child)
        return sorted(found, key=lambda item: _path_of(item).split("/"))

    def read(self, relative: str) -> bytes:
        """The bytes of the file `relative`; UnsafePath if it or a folder above it is a link."""
        parts = relative_parts(relative)
        return self._read(self._folder(parts[:-1], create=False), parts[-1])

    def is_file(self, relative: str) -> bool:
        """Whether `relative` names a regular file or a link (which `read` then refuses)."""
        parts = relative_parts(relative)
        try:
            found = self._lstat(self._folder(parts[:-1], create=False), parts[-1])
        except (FileNotFoundError, UnsafePath):
            return False
        return found is not None and (stat.S_ISREG(found.st_mode) or stat.S_ISLNK(found.st_mode))


def _path_of(item: str | Refused) -> str:
    return item.path if isinstance(item, Refused) else item


class Target(_Tree):
    """A directory to export into: every file inside it, written whole, never through a link.

    The root is created if missing. A link where a folder or a file should be is left as
    it is and the write refused (UnsafePath), so nothing lands where the link points.
    """

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        super().__init__(root)

    def write(self, relative: str, data: bytes) -> bool:
        """Write `data` to `relative` through a temp file and a rename.

        A reader sees the old file or the new one, never half of one; a failure leaves no
        temp file behind. Returns False (and writes nothing) when the file already holds
        exactly these bytes.
        """
        parts = relative_parts(relative)
        folder = self._folder(parts[:-1], create=True)
        name = parts[-1]
        existing = self._lstat(folder, name)
        if existing is not None:
            if stat.S_ISLNK(existing.st_mode):
                raise UnsafePath(f"is a symbolic link; it is left as it is ({_LINK})")
            if not stat.S_ISREG(existing.st_mode):
                raise UnsafePath("is not a regular file")
            if existing.st_size == len(data) and self._read(folder, name) == data:
                return False
        # No fsync per file: an agent directory holds 100,000 small files, and the rename
        # alone already guarantees a reader never sees half a file.
        fd, temp = _create_temp(folder, name)
        try:
            with os.fdopen(fd, "wb") as output:
                output.write(data)
            # rename() replaces a link planted meanwhile rather than writing through it.
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=folder)
            raise
        return True

    def remove(self, relative: str) -> bool:
        """Delete the regular file `relative`; False if there is none. A link is refused."""
        parts = relative_parts(relative)
        try:
            folder = self._folder(parts[:-1], create=False)
        except FileNotFoundError:
            return False
        existing = self._lstat(folder, parts[-1])
        if existing is not None and stat.S_ISLNK(existing.st_mode):
            raise UnsafePath(f"is a symbolic link; it is left as it is ({_LINK})")
        if existing is None or not stat.S_ISREG(existing.st_mode):
            return False
        os.unlink(parts[-1], dir_fd=folder)
        return True


def _create_temp(folder: int, name: str) -> tuple[int, str]:
    """A new file beside `name` that only this process knows; its name fits NAME_MAX."""
    while True:
        token = secrets.token_hex(4)
        temp = f".{name}.{token}.tmp"
        if len(temp.encode("utf-8")) > NAME_MAX:
            temp = f".memoryadmin-{token}.tmp"
        try:
            return os.open(temp, _CREATE, 0o600, dir_fd=folder), temp
        except FileExistsError:
            continue
