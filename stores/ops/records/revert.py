"""revert: back to how a record stood after (or before) a revision, as a new revision."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from django.db import IntegrityError
from django.utils import timezone

from stores.editing import Status
from stores.engine import policy
from stores.engine.actors import Actor
from stores.engine.aftercommit import schedule_reembed
from stores.engine.checks import check_expected_version, check_text_size, integrity_message
from stores.engine.commit import Change, atomic, commit
from stores.engine.restoring import mark_reviewed, restorable_values, revision_of, revision_text
from stores.engine.results import WriteResult, success, would_be
from stores.engine.revisions import record_revision
from stores.errors import Conflict, Invalid, NoChangeError, NotFound
from stores.models import Agent, EmbeddedRecord, Revision, Subject, text_fingerprint
from stores.opnames import OpName
from stores.ops.base import Page, Place, RecordCall, ToolSpec, WriteOp
from stores.ops.fields import REVISION_ID
from stores.ops.params import Kind, Param
from stores.selectors.revisions import last_revision
from stores.surfaces import SurfaceSpec


@dataclass(frozen=True)
class Revert(WriteOp):
    def prepare(
        self, spec: SurfaceSpec, arguments: dict[str, Any], agent: Agent, actor: Actor
    ) -> dict[str, Any]:
        to = arguments.get("to", "after")
        if to not in ("after", "before"):
            raise Invalid(
                "to must be 'after' (the revision's result) or 'before' (what it replaced)."
            )
        return {**arguments, "to": to}

    def write_record(
        self, spec: SurfaceSpec, arguments: Mapping[str, Any], call: RecordCall
    ) -> WriteResult:
        """Bring the record back to how it stood after (or before) a revision, as a new
        revision.

        A forgotten record is brought back under its own id. `dry_run` answers what the revert
        would, writing nothing (its review stays pending too).
        """
        to = arguments["to"]
        with atomic(call.dry_run):
            try:
                record = call.find(spec, self.service)
            except NotFound:
                return _restore_forgotten(spec, call, arguments["revision_id"], to)
            revision = revision_of(spec, call.agent, record.pk, arguments["revision_id"])
            policy.check(record, actor=call.actor, op=OpName.REVERT)
            check_expected_version(record, call.expected_version)
            state = revision.after_state if to == "after" else revision.before_state
            if to == "before" and revision.op == OpName.CREATE:
                raise Invalid(
                    "Before its first revision the record did not exist; forget it instead."
                )
            if to == "after" and revision.op == OpName.FORGET:
                raise Invalid("That revision deleted the record; revert to before it instead.")
            text_field, text = revision_text(spec, revision, to)
            values = {
                text_field: text,
                **restorable_values(
                    spec, state, spec.revertable_fields, agent=call.agent, record_id=record.pk
                ),
            }
            changed = {
                name: value for name, value in values.items() if getattr(record, name) != value
            }
            if not changed:
                raise NoChangeError("The record already matches that revision; nothing to change.")
            change = Change(
                op=OpName.REVERT,
                values=changed,
                text_field=text_field,
                status=Status.REVERTED,
                details={"reverted_to": revision.pk, "reverted_revision": revision.pk, "side": to},
                reverted_revision=revision.pk,
            )
            result = commit(spec, record, actor=call.actor, change=change, dry_run=call.dry_run)
            if not call.dry_run:
                mark_reviewed(revision, call.actor, to)
            return result


def _restore_forgotten(
    spec: SurfaceSpec, call: RecordCall, revision_id: int, to: str
) -> WriteResult:
    agent, ref, actor = call.agent, call.ref, call.actor
    expected_version, dry_run = call.expected_version, call.dry_run
    if not actor.can_see(agent) or not str(ref).strip().isdecimal():
        raise NotFound(f"No {spec.key} record {ref} in this agent's banks.")
    record_id = int(str(ref).strip())
    last = last_revision(agent, spec.key, record_id)
    if last is None or last.op != OpName.FORGET:
        raise NotFound(f"No {spec.key} record {ref} in this agent's banks.")
    revision = revision_of(spec, agent, record_id, revision_id)
    state = revision.after_state if to == "after" else revision.before_state
    if not state:
        raise Invalid("That side of the revision holds no record to bring back.")
    text_field, text = revision_text(spec, revision, to)
    check_text_size(spec, text)
    values = restorable_values(spec, state, spec.state_fields, agent=agent, record_id=record_id)
    if spec.store_policy:
        policy.check_agent(
            agent,
            actor=actor,
            op=OpName.REVERT,
            store=values.get("store"),
            subject=Subject.objects.filter(pk=int(values["subject_id"])).first()
            if values.get("subject_id") is not None
            else None,
        )
    else:
        policy.check_agent(agent, actor=actor, op=OpName.REVERT)
    if expected_version is not None and int(expected_version) != last.version_after:
        # The version a client read of a forgotten record is the forget's; anything older is stale.
        raise Conflict(
            f"The record changed since version {expected_version}; it was forgotten at version "
            f"{last.version_after}. Re-read its history before restoring it.",
            current_version=last.version_after,
            expected_version=int(expected_version),
        )
    if spec.model._default_manager.filter(pk=record_id).exists():
        # Only a crafted history names an id another record holds; never write over it.
        raise Invalid(f"Id {record_id} now belongs to another record; it cannot be restored.")
    values[text_field] = text
    values.setdefault("created_at", timezone.now())
    record = spec.model(**{"pk": record_id, "agent": agent, **values})
    if dry_run:
        # Computed against the forget's version, which a confirming restore sends back.
        record.version = last.version_after
        details = _restore_details(revision, to)
        return would_be(
            spec,
            record,
            status=Status.REVERTED,
            text_field=text_field,
            before_text="",
            after_text=text,
            details=details,
        )
    record.version = last.version_after + 1
    record.updated_at = timezone.now()
    if isinstance(record, EmbeddedRecord):
        record.text_hash = text_fingerprint(record.embedding_text())
    try:
        record.save(force_insert=True)
    except IntegrityError as error:
        # Another record took its name, key or alias (or the agent's one rules document) meanwhile;
        # record_revert's atomic block rolls back as the refusal leaves it.
        raise Invalid(
            f"{integrity_message(spec, error)} Rename or forget that one, then restore this."
        ) from error
    new_revision = record_revision(
        spec,
        record,
        actor=actor,
        op=OpName.REVERT,
        text_field=text_field,
        version_before=last.version_after,
        before_text="",
        after_text=getattr(record, text_field),
        before_state={},
        reverted_revision=revision.pk,
    )
    if isinstance(record, EmbeddedRecord):
        schedule_reembed(spec.key, record.pk)
    mark_reviewed(revision, actor, to)
    return success(
        spec,
        record,
        new_revision,
        status=Status.REVERTED,
        diff=None,
        details=_restore_details(revision, to),
    )


def _restore_details(revision: Revision, to: str) -> dict[str, Any]:
    return {
        "reverted_to": revision.pk,
        "reverted_revision": revision.pk,
        "side": to,
        "restored": True,
    }


OP = Revert(
    OpName.REVERT,
    "Back to how the record stood after/before a revision, as a new revision.",
    (
        replace(REVISION_ID, description="The revision to go back to."),
        Param(
            "to",
            Kind.CHOICE,
            "'after': how the record stood after that revision; 'before': before it.",
            choices=("after", "before"),
            default="after",
        ),
    ),
    takes_surface=True,
    previews=True,
    tool=ToolSpec(
        "revert_record",
        "Bring a record back to how it stood after (or before) one of its revisions, as "
        "a new revision. Also restores a forgotten record under its own id.",
    ),
    page=Page(Place.HISTORY, answers_in_history=True, went_back="went back to"),
)
