"""Noting the files an export wrote, and taking erased text out of them.

An erasure reaches every export file it knows of that is still where it was written (a
regular file, not a link): a file that only the erased text or record made is deleted, any
other that holds the text is rewritten without it.

- **Deleted**: the file of one record the erasure forgot (a memory file, a RockBot memory,
  skill or task); a file whose own path holds the text; a PAM memory store holding the text
  (its content hashes and integrity checksum are of the text, and a rewrite would make a file
  the PAM SDK refuses); a PAM embeddings file once any vector was recomputed (its vectors were
  computed from the old texts).
- **Rewritten** in place, atomically: every other file holding the text, each occurrence (as
  written and as JSON spells it) replaced. In memoryadmin's own export a record line that
  changed loses its vector (an import embeds the new text again).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from stores.models import Agent, ExportFile, text_fingerprint
from stores.runtime.files import atomic_output

NATIVE = "native"
PAM = "pam"
PAM_VECTORS = "pam_vectors"
MEMORY_FILES = "files"
ROCKBOT = "rockbot"
# A native export's vector of a line: an erasure that changes the line drops them with it.
VECTOR_FIELDS = ("embedding", "embedding_model", "embedding_hash")


class ExportedFile(NamedTuple):
    """A file a directory export holds, and the one record it is of (none for a file of
    many): what an erasure needs to know of it."""

    relative: str
    surface: str = ""
    record_id: int | None = None


def note_export(agent: Agent, path: Path, format: str) -> None:
    """Remember that `path` holds an export of `agent`: an erasure rewrites or deletes it."""
    ExportFile.objects.update_or_create(
        agent=agent,
        path=str(path.resolve()),
        defaults={"format": format, "surface": "", "record_id": None},
    )


def note_exported_files(
    agent: Agent, root: Path, format: str, files: Iterable[ExportedFile]
) -> None:
    """Remember every file a directory export holds now, each with the record it is of."""
    base = root.resolve()
    rows = [
        ExportFile(
            agent=agent,
            path=str(base / file.relative),
            format=format,
            surface=file.surface,
            record_id=file.record_id,
        )
        for file in files
    ]
    ExportFile.objects.bulk_create(
        rows,
        batch_size=500,
        update_conflicts=True,
        unique_fields=["agent", "path"],
        update_fields=["format", "surface", "record_id", "written_at"],
    )


REWRITTEN = "rewritten"
DELETED = "deleted"


@dataclass
class ExportsScrubbed:
    """The export files an erasure rewrote and deleted (would, in a dry run), each as its
    receipt names it: the path, or only the path's SHA-256 where the path holds the text."""

    files: list[dict[str, str]] = field(default_factory=list)

    def add(self, export: ExportFile, action: str, *, named_by_text: bool) -> None:
        entry = {"format": export.format, "action": action}
        if named_by_text:
            entry["path_sha256"] = text_fingerprint(export.path)
        else:
            entry["path"] = export.path
        self.files.append(entry)

    def count(self, action: str) -> int:
        return sum(file["action"] == action for file in self.files)


def scrub_exports(
    agent: Agent,
    texts: Iterable[str],
    replacement: str,
    *,
    erased_records: set[tuple[str, int]],
    vectors_changed: bool,
    dry_run: bool = False,
) -> ExportsScrubbed:
    """Take every text out of the agent's export files that are still where they were
    written, deleting those only the erased text or records made (the module says which).
    With `dry_run` only counts: a file is not part of a transaction to roll back. The rows
    of deleted files (their paths may hold the text) go with them."""
    forms: set[str] = set()
    for text in texts:
        if text:
            forms |= {text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]}
    ordered = sorted(forms, key=len, reverse=True)
    outcome = ExportsScrubbed()
    for export in ExportFile.objects.filter(agent=agent).order_by("pk"):
        path = Path(export.path)
        present = path.is_file() and not path.is_symlink()
        named_by_text = any(form in export.path for form in ordered)
        if not present:
            if named_by_text:
                export.delete()
            continue
        content = path.read_text("utf-8", "surrogateescape")
        scrubbed = _replaced(content, ordered, replacement)
        if (
            named_by_text
            or (export.surface, export.record_id) in erased_records
            or (export.format == PAM and scrubbed != content)
            or (export.format == PAM_VECTORS and vectors_changed)
        ):
            outcome.add(export, DELETED, named_by_text=named_by_text)
            if not dry_run:
                path.unlink(missing_ok=True)
            export.delete()
        elif scrubbed != content:
            outcome.add(export, REWRITTEN, named_by_text=False)
            if export.format == NATIVE:
                scrubbed = _native_scrubbed(content, ordered, replacement)
            if not dry_run:
                with atomic_output(path) as output:
                    output.write(scrubbed.encode("utf-8", "surrogateescape"))
    return outcome


def _replaced(content: str, forms: list[str], replacement: str) -> str:
    for form in forms:
        content = content.replace(form, replacement)
    return content


def _native_scrubbed(content: str, forms: list[str], replacement: str) -> str:
    """A native export scrubbed line by line (JSON keeps a text's line breaks escaped, so no
    text spans two lines); a record line whose text changed loses its vector, which was
    computed from the erased text."""
    lines = []
    for line in content.splitlines(keepends=True):
        scrubbed = _replaced(line, forms, replacement)
        if scrubbed != line:
            try:
                doc = json.loads(scrubbed)
            except ValueError:
                doc = None
            if isinstance(doc, dict) and doc.get(VECTOR_FIELDS[0]) is not None:
                doc.update(dict.fromkeys(VECTOR_FIELDS))
                scrubbed = json.dumps(doc, ensure_ascii=False) + "\n"
        lines.append(scrubbed)
    return "".join(lines)
