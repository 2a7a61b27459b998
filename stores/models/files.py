"""Memory files: per agent, text documents addressed by a path under /memories.

The shape of Anthropic's memory tool (and of Claude Code's and Hermes' memory folders): a
file is a record, a directory is only the prefix its files' paths share, so there is never
an empty directory to keep or a directory record to version.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from stores.models.agents import Agent
from stores.models.base import EmbeddedRecord, unique_alias

MEMORY_ROOT = "/memories"
MAX_PATH_LENGTH = 1000
# A file system's limit on one name (ext4, APFS, NTFS): what export_files can write.
MAX_SEGMENT_LENGTH = 255
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# A percent sign before two hex digits is how a traversal hides from a check of the
# literal path (%2e%2e, %2f); paths are taken literally, so none is allowed.
_ENCODED = re.compile(r"%[0-9A-Fa-f]{2}")


def path_problem(path: object) -> str | None:
    """Why `path` cannot name a memory file, in words a model can act on; None if it can."""
    if not isinstance(path, str):
        return "A path must be a string such as /memories/notes.md."
    if not path.startswith(MEMORY_ROOT + "/"):
        return f"Path must start with {MEMORY_ROOT}/, got: {path}"
    if len(path) > MAX_PATH_LENGTH:
        return f"Path is {len(path)} characters long; the limit is {MAX_PATH_LENGTH}."
    if _CONTROL.search(path):
        return "Path contains a control character (a newline, a tab, NUL, ...); remove it."
    if "\\" in path:
        return f"Path {path} contains a backslash; separate directories with /."
    if _ENCODED.search(path):
        return (
            f"Path {path} contains a percent-encoded character; write the characters "
            "themselves (paths are taken literally)."
        )
    segments = path[len(MEMORY_ROOT) + 1 :].split("/")
    if any(segment in (".", "..") for segment in segments):
        return f"Path {path} would escape {MEMORY_ROOT} directory"
    if any(segment == "" for segment in segments):
        return f"Path {path} has an empty segment (// or a trailing /); name a file."
    # A file system counts a name's bytes: 255 two-byte characters are 510 of them.
    if any(
        len(segment.encode("utf-8", "surrogatepass")) > MAX_SEGMENT_LENGTH for segment in segments
    ):
        return f"Path {path} has a name longer than {MAX_SEGMENT_LENGTH} bytes (in UTF-8)."
    return None


def place_problem(file: MemoryFile, values: Mapping[str, Any]) -> str | None:
    """Why `file`, at the path `values` gives it, cannot stand among its agent's other files;
    None if it can (or `values` moves nothing). A directory is only the prefix of its files'
    paths, so a path may not be a file and a directory at once: no file above it, none below."""
    path = values.get("path")
    if not isinstance(path, str):
        return None
    others = MemoryFile.objects.filter(agent_id=file.agent_id).exclude(pk=file.pk)
    segments = path.split("/")
    above = ["/".join(segments[:end]) for end in range(3, len(segments))]
    blocking = others.filter(path__in=above).values_list("path", flat=True).first()
    if blocking is not None:
        return f"Cannot put {path} there: {blocking} is a file, not a directory."
    prefix = path + "/"
    # SQLite's LIKE ignores ASCII case: /memories/D/x is not below /memories/d.
    below = others.filter(path__startswith=prefix).values_list("path", flat=True)
    inside = next((found for found in below.iterator() if found.startswith(prefix)), None)
    if inside is not None:
        return f"Cannot put {path} there: {path} is a directory ({inside} is in it)."
    return None


def validate_memory_path(path: object) -> None:
    problem = path_problem(path)
    if problem is not None:
        raise ValidationError(problem, code="path")


# The same rules as one regular expression (ECMA and Python alike), for the doors' schemas:
# segments of 1 to 255 characters, none "." or "..", no control character, backslash or
# percent-encoding. (No regular expression counts UTF-8 bytes: a name of 255 characters past
# ASCII is still refused, by path_problem.)
validate_memory_path.pattern = (  # type: ignore[attr-defined]
    r"^/memories(?:/(?!\.{1,2}(?:/|$))"
    r"(?:[^/\\%\u0000-\u001f\u007f]|%(?![0-9A-Fa-f]{2})){1,255})+$"
)


class MemoryFile(EmbeddedRecord):
    """A memory file. Its vector reads the path and the text: both say what it is about."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="memory_files")
    path = models.CharField(
        max_length=MAX_PATH_LENGTH,
        validators=[validate_memory_path],
        help_text="The file's path, e.g. /memories/projects/heron.md.",
    )
    content = models.TextField(blank=True)

    class Meta:
        ordering = ["path"]
        indexes = [models.Index(fields=["agent", "-updated_at"], name="file_updated")]
        constraints = [
            models.UniqueConstraint(fields=["agent", "path"], name="file_unique_path"),
            unique_alias("file"),
        ]

    def __str__(self) -> str:
        return self.path

    def embedding_text(self) -> str:
        return f"{self.path}\n{self.content}"
