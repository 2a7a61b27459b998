"""Erasure: text, a record, a subject's records or all of an agent's, removed everywhere the
installation keeps it, with a signed receipt.

An erasure of text takes every occurrence out of the agent's live records (each a write of the
engine, op `erase`, whose revision says "[erased]" where the text stood), its history (every
revision's texts, states and source excerpts), memory stores' own fields, suggestions,
idempotency bodies, imported
sources, webhook error notes and the export files it made (stores.services.exports: rewritten,
or deleted where only the erased text or record made them); a change not yet delivered to a
webhook is cancelled. An
erasure of records forgets them through the engine and empties their history to tombstones.
Search indexes follow the records (the SQLite full-text index is optimized so no segment keeps
an old term; term statistics are counted again), and on SQLite the freed pages are zeroed
(`secure_delete`) and the write-ahead log truncated.

A dry run does all of it inside a transaction that is rolled back: its report counts exactly
what the erasure would remove.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, models, transaction
from django.utils import timezone

from stores.dbops import SQLITE_MEMORY_FTS
from stores.editing.removal import replace_within
from stores.engine.actors import Actor
from stores.engine.audit import record_audit
from stores.engine.commit import Change, apply_change
from stores.engine.deleting import delete
from stores.engine.lookup import find_record
from stores.errors import Forbidden, Invalid, NotFound
from stores.models import (
    Agent,
    AuditEntry,
    ExportFile,
    IdempotentRequest,
    ImportedSource,
    Memory,
    MemoryStore,
    Revision,
    Subject,
    Suggestion,
    VersionedRecord,
    WebhookDelivery,
    text_fingerprint,
)
from stores.models.revisions import ERASURE_TOMBSTONE
from stores.opnames import OpName
from stores.services import receipts
from stores.services.erasure import MAX_REASON, SIDES, TOMBSTONED_FIELDS
from stores.services.exports import DELETED, REWRITTEN, scrub_exports
from stores.services.term_shares import term_shares_refresh_agent
from stores.surfaces import SURFACES, SurfaceSpec

ERASED = "[erased]"
# The places an erasure searches, in the order its receipt lists them.
PLACES = (
    "records",
    "records_forgotten",
    "subjects",
    "memory_stores",
    "revisions",
    "change_feed",
    "webhooks_cancelled",
    "webhook_log",
    "suggestions",
    "idempotency",
    "imported_sources",
    "exports_rewritten",
    "exports_deleted",
    "fulltext_index",
    "term_statistics",
    "vectors",
)
MODES = ("text", "record", "subject", "all")
RECEIPT_VERSION = 1


@dataclass(frozen=True)
class Scope:
    """What to erase: exactly one of text, a record (surface, id), a subject, everything."""

    text: str | None = None
    record: tuple[str, int] | None = None
    subject: str | None = None
    everything: bool = False

    @property
    def mode(self) -> str:
        given = [
            mode
            for mode, value in zip(
                MODES, (self.text, self.record, self.subject, self.everything or None), strict=True
            )
            if value is not None
        ]
        if len(given) != 1:
            raise Invalid(
                "Name exactly one thing to erase: text, a record (surface:id), a subject or all."
            )
        return given[0]

    @classmethod
    def parse_record(cls, ref: str) -> tuple[str, int]:
        surface, _, pk = (ref or "").partition(":")
        if surface not in SURFACES or not pk.isdecimal():
            raise Invalid(
                f"A record is named surface:id, with a surface among {', '.join(SURFACES)} "
                f"(e.g. memory:42); got {ref!r}."
            )
        return surface, int(pk)


@dataclass
class _Run:
    agent: Agent
    actor: Actor
    reason: str
    dry_run: bool
    needles: set[str] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PLACES, 0))
    revision_ids: set[int] = field(default_factory=set)
    forgotten: set[tuple[str, int]] = field(default_factory=set)
    # Each export file rewritten or deleted, as the receipt names it.
    exports: list[dict[str, str]] = field(default_factory=list)

    def scrub(self, value: Any) -> tuple[Any, int]:
        """`value` with every needle replaced by ERASED (in every string of a JSON value,
        keys too), and how many were."""
        return replace_within(value, self.needles, ERASED)


class _DryRun(Exception):
    """Rolls a dry run's transaction back once its report is made."""

    def __init__(self, report: dict[str, Any]) -> None:
        self.report = report


def erase(
    *, agent: Agent, actor: Actor, scope: Scope, reason: str = "", dry_run: bool = False
) -> dict[str, Any]:
    """Erase `scope` of `agent` as a staff person (or a maintainer) and return the receipt,
    signed; a dry run returns the same report, unsigned and kept nowhere."""
    mode = scope.mode
    if actor.kind == "agent" or (actor.kind == "user" and not getattr(actor.user, "is_staff", 0)):
        raise Forbidden("Only staff (or a maintainer in the shell) may erase.")
    reason = (reason or "").strip()
    if len(reason) > MAX_REASON:
        raise Invalid(f"A reason is at most {MAX_REASON} characters; this one has {len(reason)}.")
    if mode == "text" and not (scope.text or "").strip():
        raise Invalid("The text to erase is empty.")
    # The right to erasure outweighs a store's rules: an episodic or fact memory loses the text
    # like any other.
    eraser = dataclasses.replace(actor, may_bypass_store_rules=True, source=None)
    run = _Run(agent=agent, actor=eraser, reason=reason, dry_run=dry_run)
    started = timezone.now()
    _zero_what_is_freed()
    try:
        with transaction.atomic():
            _erase(run, scope, mode)
            report = _report(run, scope, mode, started, dry_run=dry_run)
            if dry_run:
                raise _DryRun(report)
            receipt = receipts.signed(report)
            record_audit(
                AuditEntry.Kind.ERASURE,
                actor=actor,
                agent=agent,
                details={"receipt": receipt},
            )
    except _DryRun as done:
        return done.report
    _compact_database()
    return receipt


def _erase(run: _Run, scope: Scope, mode: str) -> None:
    if mode == "text":
        assert scope.text is not None
        run.needles.add(scope.text)
        _erase_text_in_records(run)
        _erase_text_in_revisions(run)
    else:
        targets = list(_records_of(run.agent, scope, mode))
        for spec, record in targets:
            run.needles |= _texts_of(spec, record)
        for spec, record in targets:
            _forget(run, spec, record)
        for spec, record in targets:
            _empty_history(run, spec.key, record.pk)
        if mode == "subject":
            run.counts["subjects"] = (
                _subject(run.agent, scope.subject).delete()[1].get(Subject._meta.label, 0)
            )
        elif mode == "all":
            run.counts["subjects"] = (
                Subject.objects.filter(agent=run.agent).delete()[1].get(Subject._meta.label, 0)
            )
            # Their memories were forgotten above: the folders' names and metadata go too.
            run.counts["memory_stores"] = (
                MemoryStore.objects.filter(agent=run.agent)
                .delete()[1]
                .get(MemoryStore._meta.label, 0)
            )
    run.needles.discard("")
    _erase_elsewhere(run)


# --- live records ----------------------------------------------------------------------


def _scrubbed_fields(spec: SurfaceSpec) -> list[str]:
    """The fields of a record an erasure of text looks in: its texts and its JSON values."""
    names = list(spec.text_fields)
    for name in spec.updatable_fields:
        model_field = spec.model._meta.get_field(name)
        if isinstance(model_field, models.JSONField) and name not in names:
            names.append(name)
    return names


def _erase_text_in_records(run: _Run) -> None:
    for spec in SURFACES.values():
        names = _scrubbed_fields(spec)
        records: Any = spec.model._default_manager
        holding = []
        for record in records.filter(agent=run.agent).order_by("pk").iterator(chunk_size=500):
            if any(run.scrub(getattr(record, name))[1] for name in names):
                holding.append(record.pk)
        for pk in holding:
            _erase_text_in_record(run, spec, pk, names)


def _erase_text_in_record(run: _Run, spec: SurfaceSpec, pk: int, names: list[str]) -> None:
    record = find_record(spec, agent=run.agent, ref=pk, actor=run.actor, lock=True)
    values = {}
    for name in names:
        scrubbed, found = run.scrub(getattr(record, name))
        if found:
            values[name] = scrubbed
    text_field = next((name for name in spec.text_fields if name in values), None)

    def build(_record: VersionedRecord) -> Change:
        return Change(
            op=OpName.ERASE,
            values=values,
            text_field=text_field,
            message=f"Erased: {run.reason}" if run.reason else "Erased.",
        )

    result = apply_change(
        spec, record, actor=run.actor, op=OpName.ERASE, expected_version=None, build=build
    )
    run.counts["records"] += 1
    if spec.embedded:
        run.counts["vectors"] += 1
    if result.revision is not None:
        run.revision_ids.add(result.revision)


def _records_of(agent: Agent, scope: Scope, mode: str) -> Iterator[tuple[SurfaceSpec, Any]]:
    if mode == "record":
        assert scope.record is not None
        surface, pk = scope.record
        spec = SURFACES[surface]
        yield spec, find_record(spec, agent=agent, ref=pk, actor=Actor.maintainer(), lock=True)
    elif mode == "subject":
        subject = _subject(agent, scope.subject).first()
        assert subject is not None
        memories = Memory.objects.filter(agent=agent, subject=subject).order_by("pk")
        for memory in memories.select_for_update():
            yield SURFACES["memory"], memory
    else:
        for spec in SURFACES.values():
            records: Any = spec.model._default_manager
            for record in records.filter(agent=agent).order_by("pk").select_for_update():
                yield spec, record


def _subject(agent: Agent, name: str | None) -> models.QuerySet[Subject]:
    found = Subject.objects.filter(agent=agent, external_id=name or "")
    if not found.exists():
        raise NotFound(f"No subject {name!r} of agent {agent.name!r} (named by its external id).")
    return found


def _texts_of(spec: SurfaceSpec, record: VersionedRecord) -> set[str]:
    """Every text the record holds or held: what must go wherever else it was copied."""
    texts = {getattr(record, name) or "" for name in spec.text_fields}
    history = Revision.objects.filter(surface=spec.key, record_id=record.pk).values_list(
        "before_text", "after_text", "source_excerpt"
    )
    for row in history:
        texts.update(row)
    return texts


def _forget(run: _Run, spec: SurfaceSpec, record: Any) -> None:
    if not spec.model._default_manager.filter(pk=record.pk).exists():
        return  # a record an earlier forget of this erasure unlinked and removed
    record.agent = run.agent
    delete(spec, record, actor=run.actor)
    run.forgotten.add((spec.key, record.pk))
    run.counts["records_forgotten"] += 1
    if spec.embedded:
        run.counts["vectors"] += 1


# --- history ---------------------------------------------------------------------------


def _tombstone(run: _Run, removed: str) -> dict[str, Any]:
    return {
        "at": timezone.now().isoformat(),
        "by": run.actor.label,
        "reason": run.reason or "erasure",
        "sha256": text_fingerprint(removed),
    }


def _empty_history(run: _Run, surface: str, record_id: int) -> None:
    """Every revision of an erased record keeps who, when and which op, and no text."""
    for revision in Revision.objects.filter(agent=run.agent, surface=surface, record_id=record_id):
        for side in SIDES:
            text = getattr(revision, f"{side}_text")
            if text and side not in revision.redacted:
                revision.redacted[side] = _tombstone(run, text)
            setattr(revision, f"{side}_text", "")
            setattr(revision, f"{side}_state", {})
        if revision.source_excerpt:
            revision.redacted["excerpt"] = _tombstone(run, revision.source_excerpt)
            revision.source_excerpt = ""
        revision.redacted.setdefault(ERASURE_TOMBSTONE, _tombstone(run, ""))
        revision.save(update_fields=TOMBSTONED_FIELDS)
        run.revision_ids.add(revision.pk)
        run.counts["revisions"] += 1


def _erase_text_in_revisions(run: _Run) -> None:
    """Every revision of the agent loses the text wherever it holds it (texts, states,
    excerpt); the rest of each stays."""
    texts = ("before_text", "after_text", "source_excerpt", "before_state", "after_state")
    for revision in Revision.objects.filter(agent=run.agent).order_by("pk").iterator(500):
        found = 0
        for name in texts:
            scrubbed, here = run.scrub(getattr(revision, name))
            if here:
                setattr(revision, name, scrubbed)
                found += here
        if not found:
            continue
        revision.redacted.setdefault(ERASURE_TOMBSTONE, _tombstone(run, next(iter(run.needles))))
        revision.save(update_fields=TOMBSTONED_FIELDS)
        run.revision_ids.add(revision.pk)
        run.counts["revisions"] += 1


# --- everything else -------------------------------------------------------------------


def _erase_elsewhere(run: _Run) -> None:
    agent = run.agent
    run.counts["change_feed"] = Revision.objects.filter(
        pk__in=run.revision_ids, change__isnull=False
    ).count()
    run.counts["webhooks_cancelled"] = _pending_deliveries(run)
    run.counts["webhook_log"] = _scrub_rows(
        run, WebhookDelivery.objects.filter(webhook__agent=agent), ("error",)
    )
    # A memory store's name, description and metadata are the agent's words too.
    run.counts["memory_stores"] += _scrub_rows(
        run, MemoryStore.objects.filter(agent=agent), ("name", "description", "metadata")
    )
    run.counts["suggestions"] = _scrub_rows(
        run, Suggestion.objects.filter(agent=agent), ("reason", "proposal")
    )
    run.counts["imported_sources"] = _scrub_rows(
        run, ImportedSource.objects.filter(agent=agent), ("raw", "path")
    )
    # Idempotency keys belong to callers, not agents: every stored answer is searched.
    run.counts["idempotency"] = _scrub_rows(
        run, IdempotentRequest.objects.all(), ("body", "headers")
    )
    exports = scrub_exports(
        agent,
        run.needles,
        ERASED,
        erased_records=run.forgotten,
        vectors_changed=run.counts["vectors"] > 0,
        dry_run=run.dry_run,
    )
    run.counts["exports_rewritten"] = exports.count(REWRITTEN)
    run.counts["exports_deleted"] = exports.count(DELETED)
    run.exports = exports.files
    run.counts["fulltext_index"] = _optimize_fulltext()
    run.counts["term_statistics"] = term_shares_refresh_agent(agent).terms


def _scrub_rows(run: _Run, rows: models.QuerySet[Any], names: Iterable[str]) -> int:
    names = tuple(names)
    touched = 0
    for row in rows.order_by("pk").iterator(chunk_size=500):
        changed = {}
        for name in names:
            scrubbed, found = run.scrub(getattr(row, name))
            if found:
                changed[name] = scrubbed
        if changed:
            type(row)._default_manager.filter(pk=row.pk).update(**changed)
            touched += 1
    return touched


def _pending_deliveries(run: _Run) -> int:
    """Changes of erased revisions that webhooks have not delivered yet: delivery skips them
    (stores.services.webhooks), so they are cancelled, never sent."""
    pending = 0
    for cursor in run.agent.webhooks.values_list("cursor", flat=True):
        pending += Revision.objects.filter(pk__in=run.revision_ids, change__id__gt=cursor).count()
    return pending


def _optimize_fulltext() -> int:
    """SQLite's full-text index keeps a deleted term in older segments until they merge:
    merge them all now. PostgreSQL's document column follows each row (VACUUM its index)."""
    if connection.vendor != "sqlite":
        return 0
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {SQLITE_MEMORY_FTS}({SQLITE_MEMORY_FTS}) VALUES ('optimize')")
    return 1


def _zero_what_is_freed() -> None:
    """On SQLite, every page and cell the erasure frees is overwritten with zeros (the
    settings turn it on for every connection; an erasure makes sure of it)."""
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA secure_delete = ON")


def _database_plan() -> dict[str, Any]:
    """What the erasure does to the database file once it has committed."""
    if connection.vendor == "sqlite":
        return {
            "engine": "sqlite",
            "secure_delete": True,
            "after_commit": ["incremental_vacuum", "wal_checkpoint(TRUNCATE)"],
        }
    return {"engine": connection.vendor, "after_commit": ["VACUUM of the tables erased from"]}


def _compact_database() -> None:
    """After the commit: on SQLite the free pages given back and the write-ahead log, which
    still holds the old page images, checkpointed and truncated; on PostgreSQL a VACUUM of the
    tables erased from, where not inside a caller's transaction (README: "Erasing and
    redacting" says what it can and cannot promise)."""
    if connection.in_atomic_block:
        return
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("PRAGMA incremental_vacuum")
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return
        for model in _ERASED_TABLES:
            cursor.execute(f"VACUUM {connection.ops.quote_name(model._meta.db_table)}")


_ERASED_TABLES: tuple[type[models.Model], ...] = (
    *{spec.model for spec in SURFACES.values()},
    Revision,
    Suggestion,
    IdempotentRequest,
    ImportedSource,
    WebhookDelivery,
    MemoryStore,
    ExportFile,
)


def _report(run: _Run, scope: Scope, mode: str, started: Any, *, dry_run: bool) -> dict[str, Any]:
    what: dict[str, Any] = {"mode": mode}
    if scope.record is not None:
        what["record"] = f"{scope.record[0]}:{scope.record[1]}"
    if scope.subject is not None:
        what["subject_sha256"] = text_fingerprint(scope.subject)
    return {
        "receipt": RECEIPT_VERSION,
        "id": str(uuid.uuid4()),
        "agent": run.agent.name,
        "actor": run.actor.label,
        "reason": run.reason,
        "started_at": started.isoformat(),
        "finished_at": timezone.now().isoformat(),
        "dry_run": dry_run,
        "erased": what,
        "searched": list(PLACES),
        "counts": run.counts,
        "removed_sha256": sorted(text_fingerprint(text) for text in run.needles),
        "exports": run.exports,
        "database_file": _database_plan(),
    }
