"""Ops every surface shares: create, phrase edit, full replace, field update, forget, revert,
undo of one change."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from django.db import IntegrityError, models, transaction
from django.utils import timezone

from stores.editing import (
    NoChange,
    PhraseEdit,
    Status,
    UndoConflict,
    apply_edits,
    looks_truncated,
    touched_by,
    undo_change,
)
from stores.errors import (
    Conflict,
    Invalid,
    NoChangeError,
    NotFound,
    PreconditionRequired,
    SuspectedTruncation,
)
from stores.models import (
    Agent,
    EmbeddedRecord,
    Memory,
    Revision,
    Subject,
    VersionedRecord,
    text_fingerprint,
)
from stores.selectors.revisions import last_revision, record_revision_of, text_changes_after
from stores.services import policy, validation
from stores.services.actors import Actor
from stores.services.engine import (
    Change,
    RecordRef,
    apply_change,
    atomic,
    check_expected_version,
    check_text_size,
    commit,
    create,
    delete,
    find_record,
    integrity_message,
    record_revision,
    returns_result,
    schedule_reembed,
    settle_review,
    success,
    text_limit,
    would_be,
    write,
)
from stores.services.results import WriteResult
from stores.surfaces import SurfaceSpec, surface

# How many later revisions an undo's conflict is traced through to name those that made it.
UNDO_TRACE_LIMIT = 100


def clean_values(
    spec: SurfaceSpec, values: dict[str, Any], allowed: Sequence[str]
) -> dict[str, Any]:
    """Validate and coerce an op's field values for `spec`; unknown fields are refused, not
    ignored. Values shaped alike everywhere are checked by `validation.SHAPED`; the rest of
    a field's checks are the model's, run by the engine, which names each field that fails
    (values set from stored data are checked by `validation.field_value` instead)."""
    unknown = sorted(set(values) - set(allowed))
    if unknown:
        raise Invalid(
            f"{', '.join(unknown)} cannot be set on a {spec.key} record here; settable: "
            f"{', '.join(allowed)}."
        )
    cleaned: dict[str, Any] = {}
    for name, value in values.items():
        if name in spec.text_fields:
            cleaned[name] = validation.text(value, name)
        elif name in validation.SHAPED:
            cleaned[name] = validation.SHAPED[name](value)
        elif name in ("enabled", "pinned"):
            cleaned[name] = validation.flag(value, name)
        elif name == "expires_at":
            cleaned[name] = validation.moment(value, name)
        elif name == "ttl":
            if value is not None:
                seconds = validation.ttl_seconds(value)
                cleaned["expires_at"] = timezone.now() + dt.timedelta(seconds=seconds)
        elif name == "alias":
            cleaned[name] = None if value in (None, "") else str(value)
        elif name == "subject":
            if value is not None and not isinstance(value, Subject):
                raise Invalid("subject must be a known subject of this agent.")
            cleaned[name] = value
        else:
            cleaned[name] = validation.text(value, name) if isinstance(value, str) else value
    return cleaned


@returns_result
def record_create(
    *, surface_key: str, agent: Agent, actor: Actor, values: dict[str, Any]
) -> WriteResult:
    """Create a record of any surface at version 1."""
    spec = surface(surface_key)
    if not actor.can_see(agent):
        raise NotFound(f"No agent {agent.name!r}.")
    if isinstance(values.get("subject"), str):
        values = {**values, "subject": _subject_of(agent, values["subject"])}
    cleaned = clean_values(spec, values, spec.create_fields)
    clamped = False
    if "importance" in values:
        clamped = validation.clamp_importance(values["importance"])[1]
    if spec.store_policy:
        subject = cleaned.get("subject")
        if subject is not None and subject.agent_id != agent.pk:
            raise Invalid("subject belongs to another agent.")
        store = cleaned.setdefault("store", Memory.Store.WORKING)
        policy.check_agent(agent, actor=actor, op="create", store=store, subject=subject)
    else:
        policy.check_agent(agent, actor=actor, op="create")
    with transaction.atomic():
        result = create(spec, agent=agent, actor=actor, values=cleaned)
    if clamped:
        result.details["clamped"] = True
    return result


def _subject_of(agent: Agent, external_id: str) -> Subject:
    subject = Subject.objects.filter(agent=agent, external_id=external_id).first()
    if subject is None:
        raise NotFound(f"No subject {external_id!r} among this agent's people.")
    return subject


@returns_result
def record_edit(
    *,
    surface_key: str,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    old_string: str | None = None,
    new_string: str | None = None,
    replace_all: bool = False,
    expected_replacements: int | None = None,
    edits: Sequence[PhraseEdit] | None = None,
    field: str | None = None,
    expected_version: int | None = None,
    dry_run: bool = False,
) -> WriteResult:
    """Replace exact phrases in a text field; several edits apply all or nothing.

    Without `expected_version` the exact match is the precondition: it is checked
    against the current text under a row lock. `expected_replacements` (per edit in `edits`)
    says how many times the phrase occurs: another count is refused as ambiguous with the
    real one, and more than 1 replaces them all. With `dry_run`, every check runs and the
    would-be result (diff, new text, replacements) comes back; nothing is written.
    """
    spec = surface(surface_key)
    text_field = text_field_of(spec, field)
    if edits is None:
        if old_string is None or new_string is None:
            raise Invalid("A phrase edit needs old_string and new_string.")
        edits = [PhraseEdit(old_string, new_string, replace_all, expected_replacements)]
    edits = [
        PhraseEdit(
            validation.text(e.old_string, "old_string"),
            validation.text(e.new_string, "new_string"),
            bool(e.replace_all),
            e.expected_replacements,
        )
        for e in edits
    ]

    def build(record: VersionedRecord) -> Change:
        applied = apply_edits(getattr(record, text_field), list(edits), max_length=text_limit(spec))
        return Change(
            op="edit",
            values={text_field: applied.text},
            text_field=text_field,
            details={"replacements": applied.replacements, "lines": list(applied.lines)},
        )

    return write(
        spec,
        agent=agent,
        ref=ref,
        actor=actor,
        op="edit",
        expected_version=expected_version,
        build=build,
        dry_run=dry_run,
    )


@returns_result
def record_replace(
    *,
    surface_key: str,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    text: str,
    expected_version: int | None,
    field: str | None = None,
    allow_shorter: bool = False,
    dry_run: bool = False,
) -> WriteResult:
    """Replace a whole text field. Needs a version precondition; refuses truncated previews.

    A shorter text that looks cut from a preview of the current one is refused as
    suspected_truncation unless `allow_shorter` says the caller means to drop the rest.
    `dry_run` answers what the write would, writing nothing.
    """
    spec = surface(surface_key)
    text_field = text_field_of(spec, field)
    new_text = validation.text(text, text_field)
    allow_shorter = validation.flag(allow_shorter, "allow_shorter")
    if expected_version is None:
        raise PreconditionRequired(
            "A full replacement needs the version you read (expected_version or If-Match). "
            "Read the full record first, or make a phrase edit instead."
        )

    def build(record: VersionedRecord) -> Change:
        _check_replacement(spec, record, text_field, new_text, allow_shorter=allow_shorter)
        return Change(op="replace", values={text_field: new_text}, text_field=text_field)

    return write(
        spec,
        agent=agent,
        ref=ref,
        actor=actor,
        op="replace",
        expected_version=expected_version,
        build=build,
        dry_run=dry_run,
    )


def _check_replacement(
    spec: SurfaceSpec,
    record: VersionedRecord,
    text_field: str,
    new_text: str,
    *,
    allow_shorter: bool,
) -> None:
    current = getattr(record, text_field)
    if new_text == current:
        raise NoChange(f"The {text_field} already reads exactly that; nothing to change.")
    if not new_text.strip() and text_field == spec.primary_text_field:
        raise Invalid(f"An empty {text_field} would erase the record; forget it instead.")
    if not allow_shorter and looks_truncated(current, new_text):
        ways = [
            f"read_record (surface {spec.key}, id {record.pk})",
            f"GET /api/v1/{spec.api_path}/{record.pk}/",
        ]
        if spec.resource:
            ways.append(spec.resource.format(id=record.pk))
        raise SuspectedTruncation(
            f"The new {text_field} looks cut from a preview of the current one: it is "
            f"{len(new_text)} of {len(current)} characters, begins like it and lacks the rest. "
            f"Read the full text first ({', '.join(ways)}), merge your change into it and "
            "replace with the whole text, or change just a phrase with an edit. Only if you "
            "mean to drop the rest, send the replacement again with allow_shorter: true "
            "(replace_record, or the REST replace and PATCH).",
            current_length=len(current),
            new_length=len(new_text),
        )


@returns_result
def record_update(
    *,
    surface_key: str,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    changes: dict[str, Any],
    expected_version: int | None = None,
    allow_shorter: bool = False,
) -> WriteResult:
    """Set fields (PATCH). A text field in `changes` is a full replacement with its rules.

    `allow_shorter` is record_replace's: it lets a text field become a cut of its current text.
    """
    spec = surface(surface_key)
    if not changes:
        raise Invalid("No fields to change.")
    cleaned = clean_values(spec, changes, (*spec.text_fields, *spec.updatable_fields))
    allow_shorter = validation.flag(allow_shorter, "allow_shorter")
    text_changes = [name for name in cleaned if name in spec.text_fields]
    if text_changes and expected_version is None:
        raise PreconditionRequired(
            f"Replacing {', '.join(text_changes)} needs the version you read (expected_version "
            "or If-Match)."
        )
    clamped = "importance" in changes and validation.clamp_importance(changes["importance"])[1]

    def build(record: VersionedRecord) -> Change:
        for name in text_changes:
            _check_replacement(spec, record, name, cleaned[name], allow_shorter=allow_shorter)
        changed = {name: value for name, value in cleaned.items() if getattr(record, name) != value}
        if not changed:
            raise NoChangeError("Every field already has that value; nothing to change.")
        op = "replace" if text_changes else "update"
        if set(changed) == {"importance"}:
            op = "set_importance"
        details = {"fields": sorted(changed)}
        if clamped:
            details["clamped"] = True
        return Change(
            op=op,
            values=changed,
            text_field=text_changes[0] if text_changes else None,
            details=details,
        )

    op = (
        "replace"
        if text_changes
        else ("set_importance" if set(cleaned) == {"importance"} else "update")
    )
    return write(
        spec,
        agent=agent,
        ref=ref,
        actor=actor,
        op=op,
        expected_version=expected_version,
        build=build,
    )


@returns_result
def record_forget(
    *,
    surface_key: str,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    expected_version: int | None = None,
) -> WriteResult:
    """Hard-delete a record. Its last text stays in history and can be restored by a revert."""
    spec = surface(surface_key)
    with transaction.atomic():
        record = find_record(spec, agent=agent, ref=ref, actor=actor, lock=True)
        policy.check(record, actor=actor, op="forget")
        check_expected_version(record, expected_version)
        return delete(spec, record, actor=actor)


@returns_result
def record_revert(
    *,
    surface_key: str,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    revision_id: int,
    to: str = "after",
    expected_version: int | None = None,
    dry_run: bool = False,
) -> WriteResult:
    """Bring the record back to how it stood after (or before) a revision, as a new revision.

    A forgotten record is brought back under its own id. `dry_run` answers what the revert
    would, writing nothing (its review stays pending too).
    """
    spec = surface(surface_key)
    if to not in ("after", "before"):
        raise Invalid("to must be 'after' (the revision's result) or 'before' (what it replaced).")
    with atomic(dry_run):
        try:
            record = find_record(spec, agent=agent, ref=ref, actor=actor, lock=not dry_run)
        except NotFound:
            return _restore_forgotten(
                spec,
                agent=agent,
                ref=ref,
                actor=actor,
                revision_id=revision_id,
                to=to,
                expected_version=expected_version,
                dry_run=dry_run,
            )
        revision = _revision_of(spec, record.agent, record.pk, revision_id)
        policy.check(record, actor=actor, op="revert")
        check_expected_version(record, expected_version)
        state = revision.after_state if to == "after" else revision.before_state
        if to == "before" and revision.op == "create":
            raise Invalid("Before its first revision the record did not exist; forget it instead.")
        if to == "after" and revision.op == "forget":
            raise Invalid("That revision deleted the record; revert to before it instead.")
        text_field, text = _revision_text(spec, revision, to)
        values = {
            text_field: text,
            **restorable_values(
                spec, state, spec.revertable_fields, agent=record.agent, record_id=record.pk
            ),
        }
        changed = {name: value for name, value in values.items() if getattr(record, name) != value}
        if not changed:
            raise NoChangeError("The record already matches that revision; nothing to change.")
        change = Change(
            op="revert",
            values=changed,
            text_field=text_field,
            status=Status.REVERTED,
            details={"reverted_to": revision.pk, "reverted_revision": revision.pk, "side": to},
            reverted_revision=revision.pk,
        )
        result = commit(spec, record, actor=actor, change=change, dry_run=dry_run)
        if not dry_run:
            _mark_reviewed(revision, actor, to)
        return result


@returns_result
def record_undo(
    *,
    surface_key: str,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    revision_id: int,
    expected_version: int | None = None,
    dry_run: bool = False,
) -> WriteResult:
    """Take back the change one revision made, keeping every change since: a new revision.

    The revision's change, reversed, is merged into today's text line by line. Where later
    edits touched the same lines the undo is refused as a conflict naming those revisions;
    where they already took the change back it is no_change. Distinct from a revert, which
    brings back a whole version. Undoing an agent's change settles its pending review as
    reverted; `dry_run` answers what the undo would, writing and settling nothing.
    """
    spec = surface(surface_key)
    undone: list[Revision] = []

    def build(record: VersionedRecord) -> Change:
        revision = _revision_of(spec, record.agent, record.pk, revision_id)
        text_field, before = _revision_text(spec, revision, "before")
        after = validation.text(revision.after_text, text_field)
        if not revision.before_state:
            raise Invalid(
                f"Revision {revision.pk} brought the record into being ({revision.op}); "
                "undoing it would remove the record: forget it instead."
            )
        if before == after:
            raise Invalid(
                f"Revision {revision.pk} ({revision.op}) changed no {text_field} text, so there "
                "is nothing in the text to undo. To bring back the fields it set, revert to "
                "before it."
            )
        try:
            text = undo_change(
                before, after, getattr(record, text_field), max_length=text_limit(spec)
            )
        except UndoConflict as clash:
            raise _undo_conflict(spec, record, revision, text_field, clash) from None
        if not text.strip() and text_field == spec.primary_text_field:
            raise Invalid(
                f"Undoing revision {revision.pk} would leave the {text_field} empty, which "
                "would erase the record; forget it instead."
            )
        undone.append(revision)
        return Change(
            op="undo",
            values={text_field: text},
            text_field=text_field,
            details={"undone_revision": revision.pk},
            reverted_revision=revision.pk,
        )

    with atomic(dry_run):
        record = find_record(spec, agent=agent, ref=ref, actor=actor, lock=not dry_run)
        result = apply_change(
            spec,
            record,
            actor=actor,
            op="undo",
            expected_version=expected_version,
            build=build,
            dry_run=dry_run,
        )
        if not dry_run:
            _mark_reviewed(undone[0], actor, "before")
        return result


def _undo_conflict(
    spec: SurfaceSpec,
    record: VersionedRecord,
    revision: Revision,
    text_field: str,
    clash: UndoConflict,
) -> Conflict:
    """The refusal of an undo that meets later edits, naming the later revisions that made
    them: the conflict's lines are followed through each later change of the text."""
    later = text_changes_after(
        record.agent, spec.key, record.pk, text_field, revision.version_after
    )
    ids = list(later.values_list("pk", flat=True)[: UNDO_TRACE_LIMIT + 1])
    traced = ids[:UNDO_TRACE_LIMIT]
    # Streamed, so the texts of many long revisions are never all held at once.
    texts = (
        (change.before_text, change.after_text)
        for change in later.filter(pk__in=traced)
        .only("before_text", "after_text")
        .iterator(chunk_size=10)
    )
    # A history the changes do not chain through (an import wrote it) may lose the trail:
    # then every later change is named.
    named = [traced[position] for position in touched_by(clash.regions, texts)] or traced
    where = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in clash.lines)
    lines = "lines" if len(clash.lines) > 1 or clash.lines[0][0] != clash.lines[0][1] else "line"
    if not named:
        who, them = "later edits", "them"
    elif len(named) == 1:
        who, them = f"later revision {named[0]}", "it"
    else:
        who, them = f"later revisions {', '.join(map(str, named))}", "them"
    if len(ids) > UNDO_TRACE_LIMIT:
        who += f" (of the {UNDO_TRACE_LIMIT} revisions after it; later ones were not searched)"
    return Conflict(
        f"Revision {revision.pk} cannot be undone on its own: {who} changed the same lines "
        f"(today's {lines} {where}). Undo {them} first, newest first, then undo revision "
        f"{revision.pk} again; or edit today's text by hand.",
        revisions=named,
        lines=[list(span) for span in clash.lines],
        current_version=record.version,
    )


def _restore_forgotten(
    spec: SurfaceSpec,
    *,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    revision_id: int,
    to: str,
    expected_version: int | None,
    dry_run: bool = False,
) -> WriteResult:
    if not actor.can_see(agent) or not str(ref).strip().isdecimal():
        raise NotFound(f"No {spec.key} record {ref} in this agent's banks.")
    record_id = int(str(ref).strip())
    last = last_revision(agent, spec.key, record_id)
    if last is None or last.op != "forget":
        raise NotFound(f"No {spec.key} record {ref} in this agent's banks.")
    revision = _revision_of(spec, agent, record_id, revision_id)
    state = revision.after_state if to == "after" else revision.before_state
    if not state:
        raise Invalid("That side of the revision holds no record to bring back.")
    text_field, text = _revision_text(spec, revision, to)
    check_text_size(spec, text)
    values = restorable_values(spec, state, spec.state_fields, agent=agent, record_id=record_id)
    if spec.store_policy:
        policy.check_agent(
            agent,
            actor=actor,
            op="revert",
            store=values.get("store"),
            subject=Subject.objects.filter(pk=values.get("subject_id")).first(),
        )
    else:
        policy.check_agent(agent, actor=actor, op="revert")
    if expected_version is not None and int(expected_version) != last.version_after:
        # The version a client read of a forgotten record is the forget's; anything older is stale.
        raise Conflict(
            f"The record changed since version {expected_version}; it was forgotten at version "
            f"{last.version_after}. Re-read its history before restoring it.",
            current_version=last.version_after,
            expected_version=int(expected_version),
        )
    if spec.model.objects.filter(pk=record_id).exists():
        # Only a crafted history names an id another record holds; never write over it.
        raise Invalid(f"Id {record_id} now belongs to another record; it cannot be restored.")
    values[text_field] = text
    values.setdefault("created_at", timezone.now())
    record = spec.model(pk=record_id, agent=agent, **values)
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
        op="revert",
        text_field=text_field,
        version_before=last.version_after,
        before_text="",
        after_text=getattr(record, text_field),
        before_state={},
        reverted_revision=revision.pk,
    )
    if isinstance(record, EmbeddedRecord):
        schedule_reembed(spec.key, record.pk)
    _mark_reviewed(revision, actor, to)
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


def _revision_text(spec: SurfaceSpec, revision: Revision, to: str) -> tuple[str, str]:
    """The text field a revision changed and its text on side `to`, checked like any write.

    A revision row is stored data that imports write too, so its field name is input: only the
    surface's text fields may be set from it.
    """
    text_field = revision.field or spec.primary_text_field
    if text_field not in spec.text_fields:
        raise Invalid(
            f"Revision {revision.pk} records a change of {text_field!r}, which is not a text "
            f"field of a {spec.key} ({', '.join(spec.text_fields)}); it cannot be reverted. "
            "Revert to another revision of the record."
        )
    text = revision.after_text if to == "after" else revision.before_text
    return text_field, validation.text(text, text_field)


def restorable_values(
    spec: SurfaceSpec,
    state: dict[str, Any],
    names: tuple[str, ...],
    *,
    agent: Agent,
    record_id: int,
) -> dict[str, Any]:
    """Model values (attnames) for `names` read back from a snapshot, each checked as a write.

    A snapshot is input like any other: keys outside `names` are never read, a value no write
    could set is refused, and a link to a record that is gone or is not this agent's is dropped
    (the restore's own revision then shows it empty).
    """
    if not isinstance(state, dict):
        raise Invalid("That revision holds no readable state to bring back.")
    values: dict[str, Any] = {}
    for name in names:
        if name not in state:
            continue
        field = spec.model._meta.get_field(name)
        value = state[name]
        if field.many_to_one:
            values[field.attname] = _live_link(field, value, agent=agent, record_id=record_id)
        else:
            try:
                values[field.attname] = validation.field_value(field, value)
            except Invalid as error:
                raise Invalid(
                    f"The revision's state holds what no write could set: {error.message}"
                ) from None
    return values


def _live_link(field: models.ForeignKey, value: Any, *, agent: Agent, record_id: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(f"The revision's state holds {field.name} {value!r}, which is not an id.")
    targets = field.related_model.objects.filter(pk=value, agent=agent)
    if field.related_model is field.model:
        targets = targets.exclude(pk=record_id)
    return value if targets.exists() else None


def _revision_of(spec: SurfaceSpec, agent: Agent, record_id: int, revision_id: int) -> Revision:
    try:
        revision = record_revision_of(agent, spec.key, record_id, int(revision_id))
    except (TypeError, ValueError):
        revision = None
    if revision is None:
        raise NotFound(f"Revision {revision_id} is not a revision of this record.")
    return revision


def _mark_reviewed(revision: Revision, actor: Actor, to: str) -> None:
    """Reverting what an agent wrote settles its pending review."""
    if to == "before":
        settle_review(revision, Revision.Review.REVERTED, actor)


def text_field_of(spec: SurfaceSpec, field: str | None) -> str:
    """The text field an op edits: `field`, checked, or the surface's primary one."""
    if field is None:
        return spec.primary_text_field
    if field not in spec.text_fields:
        raise Invalid(
            f"{field!r} is not an editable text field of a {spec.key}; use one of "
            f"{', '.join(spec.text_fields)}."
        )
    return field
