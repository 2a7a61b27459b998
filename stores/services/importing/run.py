"""One import run: entries read in batches, each checked, matched with what the agent holds, and
then inserted, changed or left alone, with a report of what happened to each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import islice
from typing import Any

from django.db import models, transaction
from django.db.models import Q

from stores.engine import doorscan, policy
from stores.engine.actors import Actor
from stores.errors import SensitiveData
from stores.models import (
    Agent,
    ImportedSource,
    VersionedRecord,
)
from stores.opnames import OpName
from stores.runtime.bulk import insert_rows
from stores.runtime.collector import rare_collections
from stores.services import term_shares
from stores.services.importing.entries import (
    TRACE_FIELDS,
    ImportReport,
    Incoming,
    Problem,
    Trace,
    Unread,
    alias_limit,
)
from stores.services.importing.inserting import create_batch
from stores.services.importing.links import Link, link_superseded
from stores.services.importing.syncing import sync_existing
from stores.services.importing.traces import current_traces, record_file_trace, unchanged_files
from stores.surfaces import MEMORY, SURFACES, SurfaceSpec

BATCH_SIZE = 2000


# Entries whose natural keys one query matches: well under SQLite's expression depth of 1,000.
NATURAL_KEY_CHUNK = 400


def import_records(
    *,
    agent: Agent,
    items: Iterable[Incoming | Problem | Trace | Unread],
    actor: Actor,
    dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
    report: ImportReport | None = None,
) -> ImportReport:
    """Create, change or leave alone each incoming record; problems are reported, not raised.

    `items` may interleave Problems (entries a parser could not read), Traces (the shape
    of a file that holds several records) and Unread files (parsed only if they or their
    record changed since the last import) with records; it is consumed in batches, so an
    import of any size holds one batch in memory at a time.
    """
    policy.check_agent(agent, actor=actor, op=OpName.IMPORT)
    report = report or ImportReport()
    report.dry_run = dry_run
    with rare_collections():
        _import_all(agent, items, actor, dry_run, progress, report)
    memories = report.tallies.get(MEMORY.key)
    if not dry_run and memories and memories.created >= term_shares.common_term_memories():
        # Recall would count the new common words at every query until the hourly pass.
        term_shares.term_shares_refresh_agent(agent)
    return report


def _import_all(
    agent: Agent,
    items: Iterable[Incoming | Problem | Trace | Unread],
    actor: Actor,
    dry_run: bool,
    progress: Callable[[int], None] | None,
    report: ImportReport,
) -> None:
    seen: dict[tuple[str, str], str] = {}
    seen_keys: dict[tuple[str, tuple[Any, ...]], str] = {}
    links: list[Link] = []
    iterator = iter(items)
    while batch := list(islice(iterator, BATCH_SIZE)):
        unchanged = unchanged_files(agent, [item for item in batch if isinstance(item, Unread)])
        records: list[Incoming] = []
        for item in batch:
            entries: Iterable[Incoming | Problem | Trace]
            if not isinstance(item, Unread):
                entries = [item]
            else:
                alias = unchanged.get((item.source_format, item.path))
                # A file whose id another file of this import already gave is parsed, so it
                # is refused as a duplicate exactly as it is today.
                if alias is not None and (item.surface, alias) not in seen:
                    seen[(item.surface, alias)] = item.path
                    report.tally(item.surface).unchanged += 1
                    continue
                entries = item.parse()
            for entry in entries:
                if isinstance(entry, Problem):
                    report.problems.append(entry)
                    continue
                if isinstance(entry, Trace):
                    if not dry_run:
                        record_file_trace(agent=agent, trace=entry)
                    continue
                refused = _too_long_a_ref(entry) or _duplicate_of(entry, seen, seen_keys)
                if refused:
                    report.problem(entry.source, refused, entry.surface)
                    continue
                records.append(entry)
        for surface_key in SURFACES:
            group = [entry for entry in records if entry.surface == surface_key]
            if group:
                _import_group(SURFACES[surface_key], agent, group, actor, dry_run, report, links)
        if progress:
            progress(len(batch))
    link_superseded(agent, links, actor, dry_run, report)


def _too_long_a_ref(entry: Incoming) -> str | None:
    """A ref becomes the record's alias; one that cannot be is refused, never cut.

    A record with a natural key (a working entry's namespace and key, a skill's or task's
    name) is matched by it, so it goes without an alias instead.
    """
    if len(entry.ref) <= alias_limit() or entry.natural_key is not None:
        return None
    return f"its id is {len(entry.ref)} characters long; at most {alias_limit()} fit."


def _duplicate_of(
    entry: Incoming,
    seen: dict[tuple[str, str], str],
    seen_keys: dict[tuple[str, tuple[Any, ...]], str],
) -> str | None:
    first = seen.get((entry.surface, entry.ref))
    if first is not None:
        return f"the id {entry.ref!r} was already read from {first}; this copy is skipped."
    key = entry.natural_key
    if key is not None:
        first = seen_keys.get((entry.surface, key))
        if first is not None:
            return f"{entry.surface} {'/'.join(map(str, key))!r} was already read from {first}."
        seen_keys[(entry.surface, key)] = entry.source
    seen[(entry.surface, entry.ref)] = entry.source
    return None


def _import_group(
    spec: SurfaceSpec,
    agent: Agent,
    entries: list[Incoming],
    actor: Actor,
    dry_run: bool,
    report: ImportReport,
    links: list[Link],
) -> None:
    matches = _match_existing(spec, agent, entries)
    new = [entry for entry in entries if entry.ref not in matches]
    tally = report.tally(spec.key)
    traces = current_traces(agent, [e for e in entries if e.ref in matches])
    kept: list[ImportedSource] = []
    for entry in entries:
        record = matches.get(entry.ref)
        if record is None:
            continue
        sync_existing(spec, agent, record, entry, actor, dry_run, report, traces, kept)
        if spec is MEMORY and entry.successor_stated:
            links.append(Link(record.pk, entry.superseded_by, entry.source, existing=True))
    if kept:
        # The traces of records left alone, in one statement: the first re-import after
        # digests were added rewrites every trace.
        with transaction.atomic():
            insert_rows(
                ImportedSource,
                kept,
                unique_fields=("agent", "source_format", "path"),
                update_fields=(*TRACE_FIELDS, "updated_at"),
            )
    new = _screened(spec, agent, new, actor, report)
    if not new:
        return
    if dry_run:
        tally.created += len(new)
        report.created_refs.setdefault(spec.key, []).extend(entry.ref for entry in new)
        return
    created = create_batch(spec, agent, new, actor)
    tally.created += len(created)
    for entry, record in created:
        if spec is MEMORY and entry.superseded_by:
            links.append(Link(record.pk, entry.superseded_by, entry.source, existing=False))


def _screened(
    spec: SurfaceSpec, agent: Agent, entries: list[Incoming], actor: Actor, report: ImportReport
) -> list[Incoming]:
    """New entries past the door's scan, masked or held as the agent's policy says; an entry
    it refuses is a problem of the report. (A record that exists is changed through the edit
    service, which scans it there.)"""
    passed = []
    for entry in entries:
        try:
            screened = doorscan.screen(
                agent=agent,
                actor=actor.with_source(entry.provenance),
                text_fields=spec.text_fields,
                values=entry.values,
            )
        except SensitiveData as refused:
            report.problem(entry.source, f"not imported: {refused.message}", spec.key)
            continue
        entry.values = screened.values
        entry.provenance = screened.actor.source
        entry.held = screened.held
        passed.append(entry)
    return passed


def _match_existing(
    spec: SurfaceSpec, agent: Agent, entries: list[Incoming]
) -> dict[str, VersionedRecord]:
    """Existing records of `agent` for these entries: by alias, then id, then name or key."""
    if agent.pk is None:  # a dry run into an agent that does not exist yet
        return {}
    records = spec.model.objects.filter(agent=agent)
    if spec.select_related:
        records = records.select_related(*spec.select_related)
    if spec.embedded:
        # Never compared (NOT_SYNCED): 384 floats a record parsed for nothing.
        records = records.defer("embedding")
    by_alias = {r.alias: r for r in records.filter(alias__in=[e.ref for e in entries])}
    matches: dict[str, VersionedRecord] = {}
    by_id: dict[int, VersionedRecord] = {}
    ids = [e.same_record_if[0] for e in entries if e.same_record_if and e.ref not in by_alias]
    if ids:
        by_id = {r.pk: r for r in records.filter(pk__in=ids, alias__isnull=True)}
    by_key = _by_natural_key(spec, records, entries)
    for entry in entries:
        record = by_alias.get(entry.ref)
        if record is None and entry.same_record_if:
            candidate = by_id.get(entry.same_record_if[0])
            if candidate is not None and candidate.created_at == entry.same_record_if[1]:
                record = candidate
        if record is None and entry.natural_key is not None:
            record = by_key.get(entry.natural_key)
        if record is not None:
            matches[entry.ref] = record
    return matches


def _by_natural_key(
    spec: SurfaceSpec, records: models.QuerySet, entries: list[Incoming]
) -> dict[tuple[Any, ...], VersionedRecord]:
    if spec.natural_key is None:
        return {}
    if spec.one_per_agent:
        document = records.first()
        return {(): document} if document is not None else {}
    found: dict[tuple[Any, ...], VersionedRecord] = {}
    # One condition per entry, OR-ed: SQLite parses the chain as a tree as deep as it is long,
    # and refuses one deeper than 1,000, so the entries are matched a chunk at a time.
    for start in range(0, len(entries), NATURAL_KEY_CHUNK):
        condition = Q()
        for entry in entries[start : start + NATURAL_KEY_CHUNK]:
            condition |= Q(**{name: entry.values.get(name) for name in spec.natural_key})
        for record in records.filter(condition):
            found[tuple(getattr(record, name) for name in spec.natural_key)] = record
    return found
