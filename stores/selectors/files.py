"""Reading memory files as a directory tree: a directory is the prefix its files share."""

from __future__ import annotations

from typing import Any

from django.db.models import Func, IntegerField

from stores.models import Agent, MemoryFile
from stores.models.files import MEMORY_ROOT


class ByteLength(Func):
    """A text's length in UTF-8 bytes, what a file's size is, counted by the database."""

    function = "OCTET_LENGTH"
    output_field = IntegerField()

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler, connection, template="LENGTH(CAST(%(expressions)s AS BLOB))", **extra
        )


def file_at(agent: Agent, path: str) -> MemoryFile | None:
    return MemoryFile.objects.filter(agent=agent, path=path).defer("embedding").first()


def files_under(agent: Agent, directory: str) -> list[tuple[str, int]]:
    """(path, size in bytes) of every file below `directory`, by path; no text is read."""
    prefix = directory.rstrip("/") + "/"
    rows = (
        MemoryFile.objects.filter(agent=agent, path__startswith=prefix)
        .annotate(size=ByteLength("content"))
        .order_by("path")
        .values_list("path", "size")
    )
    # SQLite's LIKE ignores ASCII case: /memories/Notes is not below /memories/notes.
    return [(path, size) for path, size in rows if path.startswith(prefix)]


def is_directory(agent: Agent, path: str) -> bool:
    """`path` is /memories itself or the prefix of some file's path."""
    if path == MEMORY_ROOT:
        return True
    prefix = path.rstrip("/") + "/"
    paths = MemoryFile.objects.filter(agent=agent, path__startswith=prefix).values_list(
        "path", flat=True
    )
    return any(found.startswith(prefix) for found in paths.iterator())
