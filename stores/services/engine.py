"""The one write path: resolve, check, compare-and-swap, record a revision, then embed.

Every public service function returns a WriteResult. Expected refusals are raised
inside as ApplicationError or TextEditError, which roll the transaction back, and
come out as results carrying their status word.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ParamSpec, cast

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import DEFAULT_DB_ALIAS, IntegrityError, models, transaction
from django.db.models import Q
from django.utils import timezone

from stores import metrics
from stores.editing import Edited, Status, TextEditError, unified_diff
from stores.errors import ApplicationError, Conflict, Invalid, NotFound
from stores.models import (
    Agent,
    EmbeddedRecord,
    Memory,
    QuarantinedConversation,
    Revision,
    VersionedRecord,
    text_fingerprint,
)
from stores.models.revisions import after_hash
from stores.ops.names import OpName
from stores.runtime.handoff import Handoff
from stores.runtime.prepared import PreparedQuery, insert_new, update_if_version
from stores.services import doorscan, policy, webhooks
from stores.services.actors import Actor
from stores.services.results import WriteResult
from stores.services.sources import Source, naming_conversation
from stores.services.wholetext import WholeText, check_whole_text
from stores.surfaces import SURFACES, SurfaceSpec

logger = logging.getLogger("memoryadmin.writes")

P = ParamSpec("P")
RecordRef = int | str


@dataclass
class Change:
    """What one op wants to write: new field values, and which text field it touched; a
    `message` when the op chose something the caller did not spell out."""

    op: OpName
    values: dict[str, Any]
    text_field: str | None = None
    status: Status = Status.UPDATED
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    touch_updated_at: bool = True
    # A revert's or an undo's: the revision it went back to or took back.
    reverted_revision: int | None = None
    # Set by every op that replaces a text whole: what its caller read, which the write checks.
    whole_text: WholeText | None = None


def document_change(op: OpName, edited: str | Edited) -> Change:
    """The change of an op on a markdown document (`content`), with what the engine reported
    it chose (where a rule went, a restated heading dropped)."""
    if isinstance(edited, str):
        return Change(op=op, values={"content": edited}, text_field="content")
    return Change(
        op=op,
        values={"content": edited.text},
        text_field="content",
        message=edited.message,
        details=dict(edited.details),
    )


def returns_result(function: Callable[P, WriteResult], name: str = "") -> Callable[P, WriteResult]:
    """Turn expected refusals into results; everything else is a real error. The write log
    names the function (`name`, for an op's own method: the service it is)."""
    operation = name or function.__name__

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> WriteResult:
        try:
            result = function(*args, **kwargs)
        except ApplicationError as error:
            result = WriteResult(
                status=error.status, message=error.message, details=dict(error.details)
            )
        except TextEditError as error:
            result = WriteResult(
                status=error.status, message=error.message, details=dict(error.details)
            )
        _log(operation, kwargs, result)
        if not kwargs.get("dry_run"):
            actor = kwargs.get("actor")
            door = getattr(actor, "channel", "unknown")
            metrics.count_write(operation, door, str(result.status), refused=not result.ok)
        return result

    if name:
        wrapper.__name__ = wrapper.__qualname__ = name
    return wrapper


def _log(operation: str, kwargs: dict[str, Any], result: WriteResult) -> None:
    actor = kwargs.get("actor")
    agent = kwargs.get("agent")
    ref = kwargs.get("ref")
    # record_id is always the numeric id (None when the write was refused before one was
    # known); ref is the id or alias the caller gave, as text.
    record_id = result.id
    surface = result.surface or kwargs.get("surface_key")
    dry_run = bool(kwargs.get("dry_run"))
    # Ids and words only: the text written never goes into the message or its fields.
    logger.info(
        "%s %s %s: %s %s",
        "preview" if dry_run else "write",
        operation,
        result.status,
        surface,
        record_id if record_id is not None else ref,
        extra={
            "op": operation,
            "status": str(result.status),
            "agent": getattr(agent, "name", None),
            "record_id": record_id,
            "ref": str(ref) if ref is not None else None,
            "surface": surface,
            "actor": getattr(actor, "label", None),
            "channel": getattr(actor, "channel", None),
            "dry_run": dry_run,
        },
    )


# --- resolving -------------------------------------------------------------------------


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


_LOCKED: ContextVar[LockedRecords | None] = ContextVar("locked_records", default=None)
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
    token = _LOCKED.set(locked)
    try:
        yield locked
    finally:
        _LOCKED.reset(token)


def _held(spec: SurfaceSpec, agent: Agent, text: str, lock: bool) -> VersionedRecord | None:
    """The record `text` names if a run of writes holds it locked already."""
    locked = _LOCKED.get()
    if locked is None or not lock or locked.agent_id != agent.pk or not text.isdecimal():
        return None
    return locked.records.get((spec.key, int(text)))


def _not_found_message(spec: SurfaceSpec, ref: RecordRef) -> str:
    return f"No {spec.key} record {ref} in this agent's banks."


# --- writing ---------------------------------------------------------------------------


def check_expected_version(record: VersionedRecord, expected_version: int | None) -> None:
    if expected_version is not None and int(expected_version) != record.version:
        changed = (
            f"Version {expected_version} of this record never existed: it is at version"
            if int(expected_version) > record.version
            else f"The record changed since version {expected_version}; it is now at version"
        )
        raise Conflict(
            f"{changed} {record.version}. Re-read it and apply your change to the current text.",
            current_version=record.version,
            expected_version=int(expected_version),
        )


def text_limit(spec: SurfaceSpec) -> int:
    return settings.MEMORYADMIN["MAX_TEXT_LENGTH"][spec.key]


def check_text_size(spec: SurfaceSpec, text: str) -> None:
    limit = text_limit(spec)
    if len(text) > limit:
        raise Invalid(
            f"The text is {len(text)} characters; a {spec.key} record holds at most {limit}. "
            "Nothing was written.",
            limit=limit,
            length=len(text),
        )


def commit(
    spec: SurfaceSpec,
    record: VersionedRecord,
    *,
    actor: Actor,
    change: Change,
    dry_run: bool = False,
) -> WriteResult:
    """Write `change` with compare-and-swap on `version` and record its revision.

    The only place that bumps `version`. Runs inside the caller's transaction. With `dry_run`,
    the change has passed every check the write makes and comes back as the would-be result
    (`would_be`), with nothing written, bumped or enqueued.
    """
    text_field = change.text_field or spec.primary_text_field
    before_text = getattr(record, text_field)
    if change.whole_text is not None:
        check_whole_text(spec, record, change.values, change.whole_text)
    for name in spec.text_fields:
        if name in change.values:
            check_text_size(spec, change.values[name])
    validate_changed_names(spec, record, change.values)
    check_placement(spec, record, change.values)
    # Every surface model has its agent; the abstract base they share does not declare it.
    agent: Agent = cast(Any, record).agent
    screened = doorscan.screen(
        agent=agent,
        actor=actor,
        text_fields=spec.text_fields,
        values=change.values,
        before={name: getattr(record, name) or "" for name in spec.text_fields},
    )
    message = _joined(change.message, screened.message)
    details = {**change.details, **screened.details}
    if dry_run:
        return would_be(
            spec,
            record,
            status=change.status,
            text_field=text_field,
            before_text=before_text,
            after_text=screened.values.get(text_field, before_text),
            message=message,
            details=details,
        )
    before_state = spec.snapshot(record)
    values = screened.values
    if change.touch_updated_at:
        values["updated_at"] = timezone.now()
    if isinstance(record, Memory) and "importance" in values:
        # An importance someone sets is the value as of now: the decay pass must not shrink it
        # for the time that passed before it was set.
        values.setdefault("decayed_at", timezone.now())

    old_hash = getattr(record, "text_hash", None)
    if (locked := _LOCKED.get()) is not None:
        # Before the instance changes: a refusal from here on rolls its write back.
        locked.wrote(spec, record)
    for name, value in values.items():
        setattr(record, name, value)
    if isinstance(record, EmbeddedRecord):
        values["text_hash"] = text_fingerprint(record.embedding_text())
        record.text_hash = values["text_hash"]

    version_before = record.version
    try:
        written = update_if_version(spec.model, record.pk, version_before, values)
    except IntegrityError as error:
        # A rename onto another record's name or alias is a refusal, not a crash; the caller's
        # atomic block rolls back as the refusal leaves it.
        raise Conflict(integrity_message(spec, error)) from error
    if written != 1:
        current = spec.model.objects.filter(pk=record.pk).values_list("version", flat=True).first()
        raise Conflict(
            "Another write changed the record at the same moment; re-read it and try again.",
            current_version=current,
        )
    record.version = version_before + 1
    after_text = getattr(record, text_field)
    revision = record_revision(
        spec,
        record,
        actor=screened.actor,
        op=change.op,
        text_field=text_field,
        version_before=version_before,
        before_text=before_text,
        after_text=after_text,
        before_state=before_state,
        reverted_revision=change.reverted_revision,
        held=screened.held,
    )
    _keep_override(spec, record, revision, screened)
    if isinstance(record, EmbeddedRecord) and record.text_hash != old_hash:
        schedule_reembed(spec.key, record.pk)
    return success(
        spec,
        record,
        revision,
        status=change.status,
        message=message,
        details=details,
        diff=_diff(spec, record, before_text, after_text),
    )


def _joined(*sentences: str) -> str:
    return " ".join(sentence for sentence in sentences if sentence)


def _keep_override(
    spec: SurfaceSpec,
    record: VersionedRecord,
    revision: Revision,
    screened: doorscan.Screened,
) -> None:
    if screened.overridden:
        doorscan.record_override(
            agent_id=revision.agent_id,
            actor=screened.actor,
            surface=spec.key,
            record_id=record.pk,
            revision_id=revision.pk,
            found=screened.overridden,
        )


def create(spec: SurfaceSpec, *, agent: Agent, actor: Actor, values: dict[str, Any]) -> WriteResult:
    """Insert a new record at version 1 with its first revision."""
    screened = doorscan.screen(
        agent=agent, actor=actor, text_fields=spec.text_fields, values=values
    )
    values = screened.values
    now = timezone.now()
    # One moment for every timestamp the record starts with: each field's own default read
    # the clock again, so updated_at came out a few microseconds before created_at.
    moments = {
        field.name: now
        for field in spec.model._meta.concrete_fields
        if field.default is timezone.now and field.name not in values
    }
    record = spec.model(agent=agent, version=1, **moments, **values)
    for name in spec.text_fields:
        check_text_size(spec, getattr(record, name) or "")
    validate_fields(record)
    check_placement(spec, record, values)
    if isinstance(record, EmbeddedRecord):
        record.text_hash = text_fingerprint(record.embedding_text())
    try:
        with transaction.atomic():
            record.save(force_insert=True)
    except IntegrityError as error:
        raise Conflict(integrity_message(spec, error)) from error
    first = first_revision(spec, record, actor=screened.actor, op=OpName.CREATE, held=screened.held)
    revision = store_revision(first, record)
    _keep_override(spec, record, revision, screened)
    if isinstance(record, EmbeddedRecord):
        schedule_reembed(spec.key, record.pk)
    return success(
        spec,
        record,
        revision,
        status=Status.CREATED,
        diff=_diff(spec, record, "", getattr(record, spec.primary_text_field)),
        message=screened.message,
        details=screened.details,
    )


def validate_fields(record: VersionedRecord) -> None:
    try:
        record.clean_fields(exclude=["agent", "embedding", "superseded_by", "subject"])
    except ValidationError as error:
        problems = "; ".join(
            f"{name}: {' '.join(messages)}" for name, messages in error.message_dict.items()
        )
        raise Invalid(f"Invalid fields: {problems}", fields=error.message_dict) from error


def check_placement(spec: SurfaceSpec, record: VersionedRecord, values: Mapping[str, Any]) -> None:
    """Refuse a record that `values` would put where its surface says it cannot stand (a
    memory file's path both a file and a directory), as a clash with what is there."""
    problem = spec.placement(record, values) if spec.placement is not None else None
    if problem is not None:
        raise Conflict(problem)


def validate_changed_names(
    spec: SurfaceSpec, record: VersionedRecord, values: dict[str, Any]
) -> None:
    """A name, key or path a change sets passes its model field's checks (length, choices,
    validators) as a create's does: a rename must not store what a create refuses."""
    for name, value in values.items():
        if name in spec.text_fields:
            continue
        field = spec.model._meta.get_field(name)
        if isinstance(field, models.CharField) and isinstance(value, str):
            try:
                field.clean(value, record)
            except ValidationError as error:
                raise Invalid(
                    f"Invalid fields: {name}: {' '.join(error.messages)}",
                    fields={name: error.messages},
                ) from error


def integrity_message(spec: SurfaceSpec, error: IntegrityError) -> str:
    text = str(error).lower()
    if "alias" in text:
        return f"Another {spec.key} record of this agent already has that alias."
    if "unique" in text or "duplicate" in text:
        named = " and ".join(spec.natural_key or ()) or "name or key"
        return f"Another {spec.key} record of this agent already has that {named}."
    return f"The {spec.key} record breaks a database rule: {error}"


def delete(spec: SurfaceSpec, record: VersionedRecord, *, actor: Actor) -> WriteResult:
    """Hard-delete a record; its revision keeps the last text and state.

    Records that point at it lose that link first, each as a revision of its own in the same
    transaction, so the database never changes them behind their history.
    """
    text_field = spec.primary_text_field
    before_text = getattr(record, text_field)
    before_state = spec.snapshot(record)
    if (locked := _LOCKED.get()) is not None:
        locked.wrote(spec, record, deleted=True)
    unlinked = _unlink_dependants(spec, record, actor=actor)
    # A plain DELETE: every link to the record was cleared just above, each with its revision,
    # and the database's constraints refuse one that was not. Django's delete() would read the
    # row again and clear the same links a second time, behind their history.
    deleted = spec.model._default_manager.filter(pk=record.pk, version=record.version)._raw_delete(
        using=DEFAULT_DB_ALIAS
    )
    if not deleted:
        raise Conflict("Another write changed the record at the same moment; re-read it.")
    version_before = record.version
    record.version = version_before + 1
    revision = record_revision(
        spec,
        record,
        actor=actor,
        op=OpName.FORGET,
        text_field=text_field,
        version_before=version_before,
        before_text=before_text,
        after_text="",
        before_state=before_state,
        after_state={},
    )
    return success(
        spec,
        record,
        revision,
        status=Status.DELETED,
        diff=_diff(spec, record, before_text, ""),
        message=" ".join(_unlinked_sentence(link) for link in unlinked),
        details={"unlinked": unlinked} if unlinked else None,
    )


def _unlinked_sentence(link: Mapping[str, Any]) -> str:
    """What forgetting a record did to one that pointed at it, for the caller to read: the
    caller may not be allowed to change that record, and should know it was touched."""
    named = f"{link['surface']} {link['id']}"
    return (
        f"{named.capitalize()} pointed at it; that link was cleared in unlink revision "
        f"{link['revision']} and nothing else of {named} changed (a superseded memory stays "
        "superseded)."
    )


@functools.cache
def _links_to(spec: SurfaceSpec) -> list[tuple[SurfaceSpec, str, PreparedQuery[Any]]]:
    """The foreign keys of surface records that point at records of `spec` (a memory's
    successor is the one today), each with the locking read of the records that point at one
    record, compiled once: every forget runs it."""
    return [
        (other, field.attname, _dependants(other, field.attname))
        for other in SURFACES.values()
        for field in other.model._meta.concrete_fields
        if field.many_to_one and field.related_model is spec.model
    ]


def _dependants(other: SurfaceSpec, attname: str) -> PreparedQuery[Any]:
    manager: Any = other.model._default_manager

    def build(target: int, same: int) -> models.QuerySet[Any]:
        dependants = manager.filter(**{attname: target}).exclude(pk=same)
        if other.embedded:
            dependants = dependants.defer("embedding")
        return dependants.select_for_update(of=("self",)).order_by("pk")

    return PreparedQuery(build, int, int)


def _unlink_dependants(
    spec: SurfaceSpec, record: VersionedRecord, *, actor: Actor
) -> list[dict[str, Any]]:
    """Clear every link to `record` through the compare-and-swap, one `unlink` revision each.

    Deliberately no policy check of the dependant: the actor may forget `record`, and a link
    to a record that no longer exists cannot stay. Refusing instead would let any record the
    actor may not change (an episodic or fact memory, a private subject's) block forgetting its
    successor for good. The unlink keeps everything else (a superseded memory stays
    invalidated), names the forget's actor, and is reviewable and revertible like any write.
    """
    unlinked: list[dict[str, Any]] = []
    for other, attname, dependants in _links_to(spec):
        for dependant in dependants.run(record.pk, record.pk):
            if dependant.agent_id == record.agent_id:
                dependant.agent = record.agent  # spares a query for the revision
            result = commit(
                other,
                dependant,
                actor=actor,
                change=Change(op=OpName.UNLINK, values={attname: None}),
            )
            unlinked.append(
                {
                    "surface": other.key,
                    "id": dependant.pk,
                    "version": result.version,
                    "revision": result.revision,
                }
            )
    return unlinked


def build_revision(
    spec: SurfaceSpec,
    record: VersionedRecord,
    *,
    actor: Actor,
    op: OpName,
    text_field: str,
    version_before: int,
    before_text: str,
    after_text: str,
    before_state: dict[str, Any],
    after_state: dict[str, Any] | None = None,
    reverted_revision: int | None = None,
    held: bool = False,
) -> Revision:
    """The revision of one write that brought `record` to its current version, unsaved.

    Every writer builds its revisions here (the engine, restore, the bulk importer, which
    inserts them in batches), so who wrote, through which door, and whether a human must
    review it are recorded the same way whatever the path. `held`: the door's scan parked
    the write for review, whoever wrote it.
    """
    agent: Agent = record.agent
    source = actor.source or Source()
    needs_review = held or (
        actor.is_agent
        and (agent.review_mode == Agent.ReviewMode.ALL or held_for_review(agent, source))
    )
    return Revision(
        agent_id=record.agent_id,
        surface=spec.key,
        record_id=record.pk,
        version_before=version_before,
        version_after=record.version,
        op=op,
        field=text_field,
        actor=actor.label,
        actor_user=actor.user if actor.kind == "user" else None,
        actor_token=actor.token,
        channel=actor.channel,
        before_text=before_text,
        after_text=after_text,
        after_hash=after_hash(op, after_text),
        before_state=before_state,
        after_state=spec.snapshot(record) if after_state is None else after_state,
        review=Revision.Review.PENDING if needs_review else Revision.Review.NOT_NEEDED,
        reverted_revision=reverted_revision,
        **source.revision_columns(),
    )


def first_revision(
    spec: SurfaceSpec, record: VersionedRecord, *, actor: Actor, op: OpName, held: bool = False
) -> Revision:
    """The revision of a record's first version, unsaved: from nothing to its whole text.

    A create's and an import's new records start their history the same way.
    """
    text_field = spec.primary_text_field
    return build_revision(
        spec,
        record,
        actor=actor,
        op=op,
        text_field=text_field,
        version_before=0,
        before_text="",
        after_text=getattr(record, text_field),
        before_state={},
        held=held,
    )


def held_for_review(agent: Agent, source: Source) -> bool:
    """Whether `source`'s conversation is quarantined on `agent`: its writes wait for review.

    Any conversation the write names counts, the host's and one its arguments claimed, in any
    case; a write that names none is held when the writes without a source are (the hold of
    the empty name)."""
    # A take-back names the conversation it takes back; it is not that conversation's write.
    if source.takeback:
        return False
    named = source.conversations() or [""]
    matches = Q()
    for name in named:
        matches |= naming_conversation("conversation", name)
    return QuarantinedConversation.objects.filter(matches, agent_id=agent.pk).exists()


def settle_review(revision: Revision, verdict: str, actor: Actor) -> bool:
    """Settle a pending review as `verdict` (approved or reverted), by whom and when.

    A conditional update: of two people settling the same review at once, only one does;
    False for the other, and for a revision that awaited no review.
    """
    if revision.review != Revision.Review.PENDING:
        return False
    settled = {
        "review": verdict,
        "reviewed_by": actor.user if actor.kind == "user" else None,
        "reviewed_at": timezone.now(),
    }
    if not Revision.objects.filter(pk=revision.pk, review=Revision.Review.PENDING).update(
        **settled
    ):
        return False
    for name, value in settled.items():
        setattr(revision, name, value)
    return True


def record_revision(spec: SurfaceSpec, record: VersionedRecord, **write: Any) -> Revision:
    """Build and store the revision of one write (see `build_revision` for the arguments)."""
    return store_revision(build_revision(spec, record, **write), record)


def store_revision(revision: Revision, record: VersionedRecord) -> Revision:
    """Store a built revision of `record`'s write and tell the agent's webhooks of it."""
    insert_new(revision)
    # The agent as the caller loaded it (build_revision read it already).
    webhooks.after_commit(revision.agent_id, agent=record.agent)
    return revision


def success(
    spec: SurfaceSpec,
    record: VersionedRecord,
    revision: Revision,
    *,
    status: Status,
    diff: str | None,
    message: str = "",
    details: dict[str, Any] | None = None,
) -> WriteResult:
    details = dict(details or {})
    if revision.review == Revision.Review.PENDING:
        # The writer (an agent) is told its change waits for a person, who may revert it.
        details["review"] = str(Revision.Review.PENDING)
        waits = "It awaits review: a person may approve it or revert it."
        message = f"{message} {waits}" if message else waits
    return _record_result(
        spec, record, status=status, message=message, diff=diff, details=details, revision=revision
    )


def would_be(
    spec: SurfaceSpec,
    record: VersionedRecord,
    *,
    status: Status,
    text_field: str,
    before_text: str,
    after_text: str,
    message: str = "",
    details: dict[str, Any] | None = None,
) -> WriteResult:
    """What a write would answer, written nothing: a dry run's result.

    `version` is the one the change was computed against (the version a confirming write
    sends back as its precondition); there is no revision. `details` carry `dry_run`, the text
    field and its would-be text, beside the op's own details (replacements, lines).
    """
    return _record_result(
        spec,
        record,
        status=status,
        message=message,
        diff=_diff(spec, record, before_text, after_text),
        details={**(details or {}), "dry_run": True, "field": text_field, "text": after_text},
    )


def _record_result(
    spec: SurfaceSpec,
    record: VersionedRecord,
    *,
    status: Status,
    message: str,
    diff: str | None,
    details: dict[str, Any],
    revision: Revision | None = None,
) -> WriteResult:
    """The answer about a record written or previewed: the record, its version and, for a
    surface with stores, where it is kept (its store and bank)."""
    kept = spec.store_policy
    return WriteResult(
        status=status,
        message=message,
        surface=spec.key,
        id=record.pk,
        version=record.version,
        revision=revision.pk if revision is not None else None,
        diff=diff,
        store=record.store if kept else None,
        bank=record.bank if kept else None,
        details=details,
        record=record,
    )


def _diff(spec: SurfaceSpec, record: VersionedRecord, before: str, after: str) -> str:
    return unified_diff(before, after, label=f"{spec.key}/{record.pk}")


# Re-embedding a record's new text, after the commit that wrote it: how (a thread of this
# process, a Celery task) is the background layer's, stores.tasks.
reembed_record: Handoff[[str, int]] = Handoff("re-embed a record")


def schedule_reembed(surface: str, record_id: int) -> None:
    """After commit, ask the background worker to re-embed the record's text."""
    transaction.on_commit(lambda: reembed_record(surface, record_id), robust=True)


def atomic(dry_run: bool) -> AbstractContextManager[Any]:
    """A write's transaction; a dry run reads without one.

    A preview takes no row lock (on SQLite, no database write lock either), so previewing as
    someone types never queues behind an agent's writes; the confirming write checks the
    version the preview was computed against, under the lock.
    """
    return nullcontext() if dry_run else transaction.atomic()


def write(
    spec: SurfaceSpec,
    *,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    op: OpName,
    expected_version: int | None,
    build: Callable[[VersionedRecord], Change],
    dry_run: bool = False,
) -> WriteResult:
    """Lock the record, check who may do `op`, check the version, then commit `build`'s change.

    With `dry_run` every check runs the same way and the result is the would-be one.
    """
    with atomic(dry_run):
        record = find_record(spec, agent=agent, ref=ref, actor=actor, lock=not dry_run)
        return apply_change(
            spec,
            record,
            actor=actor,
            op=op,
            expected_version=expected_version,
            build=build,
            dry_run=dry_run,
        )


def apply_change(
    spec: SurfaceSpec,
    record: VersionedRecord,
    *,
    actor: Actor,
    op: OpName,
    expected_version: int | None,
    build: Callable[[VersionedRecord], Change],
    dry_run: bool = False,
) -> WriteResult:
    """The checks of `write` on a record already in hand, then the commit (or its dry run).

    Policy comes first, so a caller who may not do `op` is refused before the change is built.
    """
    policy.check(record, actor=actor, op=op)
    check_expected_version(record, expected_version)
    return commit(spec, record, actor=actor, change=build(record), dry_run=dry_run)
