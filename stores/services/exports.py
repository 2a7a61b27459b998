"""Noting the files an export wrote, and taking erased text out of them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from stores.models import Agent, ExportFile
from stores.runtime.files import atomic_output


def note_export(agent: Agent, path: Path, format: str) -> None:
    """Remember that `path` holds an export of `agent`: an erasure rewrites it."""
    ExportFile.objects.update_or_create(
        agent=agent, path=str(path.resolve()), defaults={"format": format}
    )


def scrub_exports(
    agent: Agent, texts: Iterable[str], replacement: str, *, dry_run: bool = False
) -> int:
    """Replace every text (as written and as a JSON string spells it) in the agent's export
    files that are still where they were written; how many files changed (with `dry_run`,
    would change: a file is not part of a transaction to roll back)."""
    forms: set[str] = set()
    for text in texts:
        if text:
            forms |= {text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]}
    ordered = sorted(forms, key=len, reverse=True)
    changed = 0
    for export in ExportFile.objects.filter(agent=agent):
        path = Path(export.path)
        if not path.is_file():
            continue
        content = path.read_text("utf-8", "surrogateescape")
        scrubbed = content
        for form in ordered:
            scrubbed = scrubbed.replace(form, replacement)
        if scrubbed != content and not dry_run:
            with atomic_output(path) as output:
                output.write(scrubbed.encode("utf-8", "surrogateescape"))
        changed += scrubbed != content
    return changed
