"""Reading a record's past for a revert or an undo: its revisions, their texts and states,
each checked as a write's input, and the review a take-back settles."""

from __future__ import annotations

from typing import Any

from django.db import models

from stores.editing.numbers import is_whole_number
from stores.engine import validation
from stores.engine.actors import Actor
from stores.engine.revisions import settle_review
from stores.errors import Invalid, NotFound
from stores.models import Agent, Revision
from stores.selectors.revisions import record_revision_of
from stores.surfaces import SurfaceSpec


def revision_text(spec: SurfaceSpec, revision: Revision, to: str) -> tuple[str, str]:
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
    refuse_redacted(revision, to)
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
        assert isinstance(field, models.Field)  # a state names the record's own fields
        value = state[name]
        if isinstance(field, models.ForeignKey):
            values[field.attname] = _live_link(field, value, agent=agent, record_id=record_id)
        else:
            try:
                values[field.attname] = validation.field_value(field, value)
            except Invalid as error:
                raise Invalid(
                    f"The revision's state holds what no write could set: {error.message}"
                ) from None
    return values


def _live_link(
    field: models.ForeignKey[Any, Any], value: Any, *, agent: Agent, record_id: int
) -> int | None:
    if value is None:
        return None
    if not is_whole_number(value):
        raise Invalid(f"The revision's state holds {field.name} {value!r}, which is not an id.")
    targets = field.related_model._default_manager.filter(pk=value, agent=agent)
    if field.related_model is field.model:
        targets = targets.exclude(pk=record_id)
    return value if targets.exists() else None


def revision_of(spec: SurfaceSpec, agent: Agent, record_id: int, revision_id: int) -> Revision:
    try:
        revision = record_revision_of(agent, spec.key, record_id, int(revision_id))
    except (TypeError, ValueError):
        revision = None
    if revision is None:
        raise NotFound(f"Revision {revision_id} is not a revision of this record.")
    return revision


def mark_reviewed(revision: Revision, actor: Actor, to: str) -> None:
    """Reverting what an agent wrote settles its pending review."""
    if to == "before":
        settle_review(revision, Revision.Review.REVERTED, actor)


def refuse_redacted(revision: Revision, side: str) -> None:
    """A write that would bring back a redacted side's text (a revert, an undo) is refused:
    the text is gone, and an empty one in its place would lose what the record says."""
    if side in revision.redacted:
        tombstone = revision.redacted[side]
        raise Invalid(
            f"The text {side} revision {revision.pk} was redacted by {tombstone['by']} on "
            f"{tombstone['at']}; there is nothing to go back to. Choose another revision.",
            revision=revision.pk,
        )
