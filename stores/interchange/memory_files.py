"""A memory directory (what Claude's memory tool keeps under /memories) in and out, exactly.

`DIR/projects/heron.md` is the memory file `/memories/projects/heron.md`. A file's bytes
come back byte for byte: they are read as UTF-8 with nothing translated (line endings, a
byte-order mark and a missing final newline are kept) and written back as the same UTF-8.
A file that is not UTF-8 text, or holds a NUL byte, is not imported and is named in the
report (a memory file is text, and guessing an encoding would change the bytes on export).
Links are never followed, on the way in or out (stores.interchange.files).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from stores.errors import Invalid
from stores.interchange.files import Refused, Source, Target, UnsafePath, display
from stores.models import Agent, MemoryFile
from stores.models.files import MEMORY_ROOT
from stores.services.exports import ExportedFile
from stores.services.importing.cleaning import clean_values
from stores.services.importing.entries import Incoming, Problem
from stores.surfaces import FILE


def read_directory(
    root: Path, *, on_file: Callable[[], None] | None = None
) -> Iterator[Incoming | Problem]:
    """Every regular file below `root` as a memory file to import, or why it is not one."""
    with Source(root) as source:
        for item in source.files("", ""):
            if on_file is not None:
                on_file()
            if isinstance(item, Refused):
                yield Problem(item.path, item.reason)
                continue
            try:
                data = source.read(item)
            except (UnsafePath, OSError) as error:
                yield Problem(display(item), str(error))
                continue
            yield _incoming(item, data)


def count_files(root: Path) -> int:
    with Source(root) as source:
        return len(source.files("", ""))


def _incoming(relative: str, data: bytes) -> Incoming | Problem:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return Problem(
            relative,
            f"is not UTF-8 text (byte {error.start} is {data[error.start]:#04x}): memory files "
            "hold UTF-8 text and are exported as it, so it is not imported. Convert it, e.g. "
            "iconv -f LATIN1 -t UTF-8, and import again.",
        )
    path = f"{MEMORY_ROOT}/{relative}"
    try:
        values = clean_values(FILE.key, {"path": path, "content": text})
    except Invalid as error:
        return Problem(relative, error.message)
    return Incoming(surface=FILE.key, ref=path, values=values, source=relative)


@dataclass
class ExportReport:
    written: int = 0
    unchanged: int = 0
    problems: list[Problem] = field(default_factory=list)
    # Every file the directory holds of the agent now, written or already as it was.
    files: list[ExportedFile] = field(default_factory=list)


def write_directory(
    agent: Agent, root: Path, *, on_file: Callable[[], None] | None = None
) -> ExportReport:
    """Write each of `agent`'s memory files below `root`; files not among them are left."""
    report = ExportReport()
    files = MemoryFile.objects.filter(agent=agent).order_by("path")
    with Target(root) as target:
        for pk, path, content in files.values_list("pk", "path", "content").iterator():
            if on_file is not None:
                on_file()
            relative = path[len(MEMORY_ROOT) + 1 :]
            try:
                written = target.write(relative, content.encode("utf-8"))
            except (UnsafePath, OSError) as error:
                report.problems.append(Problem(path, str(error)))
                continue
            report.files.append(ExportedFile(relative, FILE.key, pk))
            if written:
                report.written += 1
            else:
                report.unchanged += 1
    return report
