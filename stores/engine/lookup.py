"""Finding the record a write or a read names: by its id or its alias, as its actor may see it, and
the records a run of writes locked up front.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from django.db import models
from django.db.models import Q

from stores.engine.actors import Actor
from stores.errors import NotFound
from stores.models import (
    Agent,
    VersionedRecord,
)
from stores.runtime.prepared import PreparedQuery
from stores.surfaces import SURFACES, SurfaceSpec

RecordRef = int | str


def lookup_filter(ref: RecordRef) -> Q:
    """A record is found by its id or by the alias it had in the store it came from."""
    text = str(ref).strip()
    if text.isdecimal() and int(text) > 0:
        return Q(pk=int(text)) | Q(alias=text)
    return Q(alias=text)


def _record_lookup(spec: SurfaceSpec, *, by_id: bool, lock: bool) -> PreparedQuery[Any]:
    """The read of a record by its ref, compiled once: every write and most reads run it."""
    key = (spec.key, by_id, lock)
    query = _RECORD_LOOKUPS.get(key)
    if query is not None:
        return query

    def build(agent_id: int, alias: str, pk: int | None = None) -> models.QuerySet[Any]:
        records = spec.model.objects.filter(
            Q(pk=pk) | Q(alias=alias) if by_id else Q(alias=alias), agent_id=agent_id
        )
        if spec.select_related:
            records = records.select_related(*spec.select_related)
        if spec.embedded:
            # The vector is bookkeeping of the embedding job; an edit never needs to read it.
            records = records.defer("embedding")
        if lock:
            records = records.select_for_update(of=("self",))
        # At most one id match and one alias match (aliases are unique per agent), told
        # apart by the caller: no ORDER BY.
        return records.order_by()[:2]

    kinds = (int, str, int) if by_id else (int, str)
    return _RECORD_LOOKUPS.setdefault(key, PreparedQuery(build, *kinds))


_RECORD_LOOKUPS: dict[tuple[str, bool, bool], PreparedQuery[Any]] = {}


# The largest id a (big integer) primary key holds.
MAX_ID = 2**63 - 1


def find_record(
    spec: SurfaceSpec, *, agent: Agent, ref: RecordRef, actor: Actor, lock: bool = False
) -> VersionedRecord:
    """The record `ref` of `agent` as `actor` may see it, or NotFound (which reveals nothing)."""
    if not actor.can_see(agent):
        raise NotFound(_not_found_message(spec, ref))
    # As lookup_filter: an id or an alias, or an alias only (so too a number past any id).
    text = str(ref).strip()
    held = _held(spec, agent, text, lock)
    if held is not None:
        # An id beats an alias, as below: the record locked up front is the one meant.
        candidates = [held]
    elif text.isdecimal() and 0 < int(text) <= MAX_ID:
        query = _record_lookup(spec, by_id=True, lock=lock)
        candidates = query.run(agent.pk, text, int(text))
    else:
        candidates = _record_lookup(spec, by_id=False, lock=lock).run(agent.pk, text)
    if not candidates:
        raise NotFound(_not_found_message(spec, ref))
    # An id beats an alias that happens to read like another record's id.
    record = next((c for c in candidates if str(c.pk) == str(ref).strip()), candidates[0])
    record.agent = agent  # already loaded by the caller; spares a query per write
    if spec.expires and record.is_expired():
        raise NotFound(f"{spec.label} {ref} has expired.")
    return record


@dataclass
class LockedRecords:
    """Records a run of writes locked up front in its transaction, by (surface, id): the
    run's writes find them here instead of reading each again, and leave them here as they
    wrote them."""

    agent_id: int
    records: dict[tuple[str, int], VersionedRecord]
    # Every record written since the lock, in order, for a rolled-back part to be forgotten.
    written: list[tuple[str, int]] = field(default_factory=list)

    def mark(self) -> int:
        return len(self.written)

    def rolled_back(self, mark: int) -> None:
        """The writes since `mark` were rolled back: their records are read again if asked."""
        for key in self.written[mark:]:
            self.records.pop(key, None)
        del self.written[mark:]

    def wrote(self, spec: SurfaceSpec, record: VersionedRecord, *, deleted: bool = False) -> None:
        key = (spec.key, record.pk)
        self.written.append(key)
        if deleted:
            self.records.pop(key, None)
        elif getattr(record, "agent_id", None) == self.agent_id:
            self.records[key] = record


LOCKED: ContextVar[LockedRecords | None] = ContextVar("locked_records", default=None)


# Ids per locking read: well within any database's limit on parameters.
_LOCK_CHUNK = 1000


@contextmanager
def records_locked(agent: Agent, ids: Mapping[str, Iterable[int]]) -> Iterator[LockedRecords]:
    """Lock `agent`'s records `ids` (per surface key) in one read per surface, in id order,
    for the writes inside to find them there (what is gone is not held).

    Inside the caller's transaction. In id order, as merges lock theirs, so two runs over the
    same records wait for each other instead of deadlocking.
    """
    records: dict[tuple[str, int], VersionedRecord] = {}
    for surface_key, wanted in sorted(ids.items()):
        spec = SURFACES[surface_key]
        manager: Any = spec.model._default_manager
        ordered = sorted(set(wanted))
        for start in range(0, len(ordered), _LOCK_CHUNK):
            rows = manager.filter(agent_id=agent.pk, pk__in=ordered[start : start + _LOCK_CHUNK])
            if spec.select_related:
                rows = rows.select_related(*spec.select_related)
            if spec.embedded:
                rows = rows.defer("embedding")
            for record in rows.select_for_update(of=("self",)).order_by("pk"):
                record.agent = agent
                records[(surface_key, record.pk)] = record
    locked = LockedRecords(agent.pk, records)
    token = LOCKED.set(locked)
    try:
        yield locked
    finally:
        LOCKED.reset(token)


def _held(spec: SurfaceSpec, agent: Agent, text: str, lock: bool) -> VersionedRecord | None:
    """The record `text` names if a run of writes holds it locked already."""
    locked = LOCKED.get()
    if locked is None or not lock or locked.agent_id != agent.pk or not text.isdecimal():
        return None
    return locked.records.get((spec.key, int(text)))


def _not_found_message(spec: SurfaceSpec, ref: RecordRef) -> str:
    return f"No {spec.key} record {ref} in this agent's banks."
