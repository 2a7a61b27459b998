"""Redaction: a revision's text replaced by a tombstone that says who removed it, when, why,
and the SHA-256 of what was removed.

A revision is append-only history, so redaction is the one change a revision's text may
undergo. It removes a side's text wherever the history holds that same text on the touching
side (the previous revision's after is this one's before; a revision that changed another
field holds the text on both sides), so no neighbour gives it back. The live record is never
changed by a redaction: if it still holds the text, the redaction is refused, since removing
the text from the history alone would promise what it does not do (erase it instead).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from django.db import transaction
from django.utils import timezone

from stores.editing import Status
from stores.editing.removal import replace_within
from stores.engine.actors import Actor
from stores.engine.audit import record_audit
from stores.engine.results import WriteResult
from stores.errors import ApplicationError, Conflict, Invalid
from stores.models import Agent, AuditEntry, Revision, text_fingerprint
from stores.selectors.revisions import agent_revision
from stores.surfaces import SURFACES

SIDES = ("before", "after")
# The tombstone of a revision's source excerpt, beside those of its sides.
EXCERPT = "excerpt"
MAX_REASON = 500
# What stands where a redacted text was within a longer value of a revision's state.
REDACTED = "[redacted]"
# Every field of a revision a tombstone may stand in.
TOMBSTONED_FIELDS = (
    "before_text",
    "after_text",
    "before_state",
    "after_state",
    "source_excerpt",
    "redacted",
)


def revision_redact(
    *, agent: Agent, revision_id: int, actor: Actor, reason: str, sides: Collection[str] = SIDES
) -> WriteResult:
    """A person redacts one of `agent`'s revisions (the doors' call); an agent may not."""
    if actor.is_agent or not actor.can_see(agent):
        return WriteResult(status=Status.NOT_FOUND, message=f"No revision {revision_id}.")
    if not actor.can_write(agent):
        return WriteResult(status=Status.FORBIDDEN, message="Viewers cannot redact revisions.")
    revision = agent_revision(agent, revision_id)
    if revision is None:
        return WriteResult(status=Status.NOT_FOUND, message=f"No revision {revision_id}.")
    before = dict(revision.redacted)
    try:
        redacted = redact_revision(revision, actor=actor.label, reason=reason, sides=sides)
    except ApplicationError as refusal:
        return WriteResult(status=refusal.status, message=refusal.message, details=refusal.details)
    new = sorted(set(redacted.redacted) - set(before))
    return WriteResult(
        status=Status.UPDATED if new else Status.NO_CHANGE,
        message=f"Redacted revision {revision_id}: {', '.join(new)}."
        if new
        else f"Revision {revision_id} holds no text left to redact on that side.",
        surface=revision.surface,
        id=revision.record_id,
        revision=revision.pk,
        version=revision.version_after,
        details={"redacted": redacted.redacted},
    )


def redact_revision(
    revision: Revision,
    *,
    actor: str,
    reason: str,
    sides: Collection[str] = SIDES,
) -> Revision:
    """Replace `sides` of `revision` (and the same text next to them) with tombstones.

    Idempotent: a side already redacted keeps its first tombstone, and an empty side has
    nothing to remove. Refused (Conflict) while the live record still holds the text; refused
    (Invalid) without a reason or with an unknown side. Returns the revision as redacted.
    """
    unknown = sorted(set(sides) - set(SIDES))
    if unknown or not sides:
        raise Invalid(f"A revision's sides are {' and '.join(SIDES)}; got {', '.join(unknown)}.")
    reason = _checked_reason(reason)
    with transaction.atomic():
        rows = Revision.objects.select_for_update().filter(
            agent_id=revision.agent_id, surface=revision.surface, record_id=revision.record_id
        )
        chain = {row.pk: row for row in rows.order_by("version_after", "pk")}
        target = chain[revision.pk]
        marked = _same_text_sides(chain, target, sides)
        removed = {_side_text(row, side) for row, side in marked}
        _refuse_if_live(target, removed)
        tombstone = {"at": timezone.now().isoformat(), "by": actor, "reason": reason}
        touched: dict[int, list[str]] = {}
        for row, side in marked:
            _tombstone_side(row, side, tombstone)
            touched.setdefault(row.pk, []).append(side)
        for row in chain.values():
            excerpt = row.source_excerpt
            if excerpt and (row is target or any(text in excerpt for text in removed)):
                row.redacted[EXCERPT] = {**tombstone, "sha256": text_fingerprint(excerpt)}
                row.source_excerpt = ""
                touched.setdefault(row.pk, [])
        for pk in touched:
            chain[pk].save(update_fields=TOMBSTONED_FIELDS)
        if touched:
            record_audit(
                AuditEntry.Kind.REDACTION,
                actor=actor,
                agent=target.agent,
                details={
                    "surface": target.surface,
                    "record_id": target.record_id,
                    "revision": target.pk,
                    "reason": reason,
                    "redacted": {
                        str(pk): {
                            key: chain[pk].redacted[key]["sha256"]
                            for key in (*sides_of, EXCERPT)
                            if key in chain[pk].redacted
                        }
                        for pk, sides_of in touched.items()
                    },
                },
            )
    if revision is not target:
        revision.refresh_from_db()
    return revision


def _checked_reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise Invalid("Say why the text is removed: a redaction keeps its reason.")
    if len(reason) > MAX_REASON:
        raise Invalid(f"A reason is at most {MAX_REASON} characters; this one has {len(reason)}.")
    return reason


def _side_text(revision: Revision, side: str) -> str:
    return revision.after_text if side == "after" else revision.before_text


def _same_text_sides(
    chain: dict[int, Revision], target: Revision, sides: Collection[str]
) -> list[tuple[Revision, str]]:
    """The (revision, side) pairs to redact: `sides` of `target` holding text not yet
    redacted, and every side of the record's history reached from them through the same text
    (a revision's other side, the previous revision's after, the next one's before)."""
    by_after = {row.version_after: row for row in chain.values()}
    by_before = {row.version_before: row for row in chain.values()}
    pending = [(target, side) for side in SIDES if side in sides]
    seen: set[tuple[int, str]] = set()
    marked: list[tuple[Revision, str]] = []
    while pending:
        row, side = pending.pop()
        text = _side_text(row, side)
        if (row.pk, side) in seen or side in row.redacted or not text:
            continue
        seen.add((row.pk, side))
        marked.append((row, side))
        other = "before" if side == "after" else "after"
        if side == "after":
            touching = by_before.get(row.version_after)
        else:
            touching = by_after.get(row.version_before)
        for candidate, candidate_side in ((row, other), (touching, other)):
            if candidate is not None and _side_text(candidate, candidate_side) == text:
                pending.append((candidate, candidate_side))
    return marked


def _refuse_if_live(revision: Revision, removed: set[str]) -> None:
    spec = SURFACES.get(revision.surface)
    if spec is None or not removed:
        return
    # Every surface's model has its agent; the abstract base the spec names does not say so.
    records: Any = spec.model._default_manager
    record = records.filter(pk=revision.record_id, agent_id=revision.agent_id).first()
    if record is None:
        return
    for name in spec.text_fields:
        current = getattr(record, name) or ""
        if any(text in current for text in removed):
            raise Conflict(
                f"The {spec.label} {record.pk} still holds this text in its {name}: redacting "
                "the history alone would leave it there. Edit the text out of the record first, "
                "or erase it (which removes it from the record and its history), then redact.",
                surface=spec.key,
                id=record.pk,
            )


def _tombstone_side(revision: Revision, side: str, tombstone: dict[str, Any]) -> None:
    text = _side_text(revision, side)
    revision.redacted[side] = {**tombstone, "sha256": text_fingerprint(text)}
    setattr(revision, f"{side}_text", "")
    state_name = f"{side}_state"
    state = getattr(revision, state_name)
    if isinstance(state, dict):
        setattr(revision, state_name, redacted_state(state, text))


def redacted_state(state: dict[str, Any], text: str) -> dict[str, Any]:
    """A revision's state without `text`: a field that is the text is emptied (the side's
    tombstone says what went), and in every other value each occurrence of it is replaced
    by REDACTED, the rest kept (a path holding it keeps its folders)."""
    return {
        name: "" if value == text else replace_within(value, (text,), REDACTED)[0]
        for name, value in state.items()
    }
