"""The links between imported memories (one superseded by another), set once every record of the
run is in, through the edit engine.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from stores.engine.actors import Actor
from stores.models import (
    Agent,
    Memory,
)
from stores.services.importing.entries import ImportReport
from stores.services.importing.inserting import resolve_memory_refs
from stores.services.importing.syncing import import_sync
from stores.surfaces import MEMORY

# Memories read per query: well within any database's limit on parameters.
MEMORY_CHUNK = 2000


@dataclass
class Link:
    record_id: int
    target_ref: str | None
    source: str
    existing: bool


def link_superseded(
    agent: Agent, links: list[Link], actor: Actor, dry_run: bool, report: ImportReport
) -> None:
    """Point superseded memories at their successors once every memory is in place."""
    if not links or dry_run:
        return
    targets = {link.target_ref for link in links if link.target_ref}
    resolved = resolve_memory_refs(agent, targets)
    existing_ids = [link.record_id for link in links if link.existing]
    current: dict[int, tuple[int | None, int]] = {}
    for start in range(0, len(existing_ids), MEMORY_CHUNK):
        rows = Memory.objects.filter(pk__in=existing_ids[start : start + MEMORY_CHUNK])
        current.update(
            (pk, (successor, version))
            for pk, successor, version in rows.values_list("pk", "superseded_by", "version")
        )
    new_links: list[Memory] = []
    for link in links:
        target_id = resolved.get(link.target_ref) if link.target_ref else None
        if link.target_ref and target_id is None:
            report.problem(
                link.source,
                f"SupersededBy {link.target_ref!r} names no memory of this agent; the link "
                "is kept in the file fields and not set.",
            )
            continue
        if not link.existing:
            new_links.append(Memory(pk=link.record_id, superseded_by_id=target_id))
            continue
        if link.record_id not in current or current[link.record_id][0] == target_id:
            continue
        result = import_sync(
            spec=MEMORY,
            agent=agent,
            record_id=link.record_id,
            actor=actor,
            values={"superseded_by": target_id},
            expected_version=current[link.record_id][1],
        )
        if not result.ok:
            report.problem(link.source, f"SupersededBy not changed ({result.message})")
    if new_links:
        with transaction.atomic():
            # Part of creating these records: their successor may have been inserted later
            # in the same import, so the link can only be set once both exist.
            Memory.objects.bulk_update(new_links, ["superseded_by"], batch_size=500)
