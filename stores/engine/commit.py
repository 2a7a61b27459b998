"""The one write path: lock, check who may do the op, compare-and-swap, record a revision.

Every write of a surface record ends in `commit` (a change of a record), `create` (a new one)
or `stores.engine.deleting.delete`. Expected refusals are raised inside as ApplicationError or
TextEditError, which roll the transaction back, and come out as results carrying their status
word (`stores.engine.results.returns_result`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from stores.editing import Edited, Status
from stores.engine import doorscan, policy
from stores.engine.actors import Actor
from stores.engine.aftercommit import schedule_reembed
from stores.engine.checks import (
    check_expected_version,
    check_placement,
    check_text_size,
    integrity_message,
    validate_changed_names,
    validate_fields,
)
from stores.engine.lookup import LOCKED, RecordRef, find_record
from stores.engine.results import WriteResult, record_diff, success, would_be
from stores.engine.revisions import first_revision, record_revision, store_revision
from stores.engine.wholetext import WholeText, check_whole_text
from stores.errors import Conflict
from stores.models import (
    Agent,
    EmbeddedRecord,
    Memory,
    Revision,
    VersionedRecord,
    text_fingerprint,
)
from stores.opnames import OpName
from stores.runtime.prepared import update_if_version
from stores.surfaces import SurfaceSpec


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
    agent = record.agent
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
    if (locked := LOCKED.get()) is not None:
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
        diff=record_diff(spec, record, before_text, after_text),
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
        diff=record_diff(spec, record, "", getattr(record, spec.primary_text_field)),
        message=screened.message,
        details=screened.details,
    )


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
