"""An entry's values, revisions and states checked as every write takes them, before anything of
the entry is written.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from stores.editing.numbers import is_number
from stores.engine import validation
from stores.engine.checks import check_text_size
from stores.errors import Invalid
from stores.models import (
    EMBEDDING_DIMENSIONS,
    Revision,
    Subject,
)
from stores.services.importing.entries import NEVER_IMPORTED
from stores.surfaces import SURFACES, SurfaceSpec


def clean_values(surface_key: str, values: dict[str, Any]) -> dict[str, Any]:
    """Check and coerce imported field values by the model's own field types.

    Raises Invalid naming the field; unknown names are refused (a parser maps file
    fields to model fields and keeps the rest elsewhere, it never drops them here).
    """
    spec = SURFACES[surface_key]
    meta = spec.model._meta
    cleaned: dict[str, Any] = {}
    for name, value in values.items():
        if name in NEVER_IMPORTED:
            raise Invalid(f"{name} cannot be imported as a field.")
        try:
            model_field = meta.get_field(name)
        except Exception:
            raise Invalid(f"{spec.key} records have no field {name!r}.") from None
        cleaned[name] = _clean_field(model_field, value)
    for name in spec.text_fields:
        if name in cleaned:
            check_text_size(spec, cleaned[name])
    return cleaned


def _clean_field(model_field: Any, value: Any) -> Any:
    """A field of an imported record or revision; a subject and a vector are the parser's."""
    if model_field.name == "subject":
        if value is not None and not isinstance(value, Subject):
            raise Invalid("subject must be a known subject of this agent.")
        return value
    if model_field.name == "embedding":
        return _vector(value)
    return validation.field_value(model_field, value)


# Revision fields an import may state; agent, surface and record are always this import's.
REVISION_FIELDS = (
    "version_before",
    "version_after",
    "op",
    "field",
    "actor",
    "channel",
    "before_text",
    "after_text",
    "review",
    "reviewed_at",
    "created_at",
)


# State values that name another row; the parser resolves them within the agent.
NAMED_IN_STATE = frozenset({"subject", "superseded_by"})


def clean_revision(spec: SurfaceSpec, values: dict[str, Any]) -> dict[str, Any]:
    """Check a revision carried by an import against its surface, before anything is stored.

    A revert or restore writes a revision's `field` and states back into the record, so
    `field` must be one of the surface's text fields and each state may hold only the
    surface's state fields, each of its field's type. Raises Invalid naming what is wrong.
    `values` holds exactly REVISION_FIELDS plus `before_state` and `after_state`.
    """
    meta = Revision._meta
    cleaned: dict[str, Any] = {}
    for name in REVISION_FIELDS:
        model_field = meta.get_field(name)
        if name == "created_at" and values[name] is None:
            cleaned[name] = None  # stored with the time of the import
            continue
        cleaned[name] = _clean_field(model_field, values[name])
    if cleaned["version_after"] <= cleaned["version_before"]:
        raise Invalid("version_after must be greater than version_before.")
    if cleaned["field"] not in spec.text_fields:
        raise Invalid(
            f"field {cleaned['field']!r} is not a text field of a {spec.key} record "
            f"(those are {', '.join(spec.text_fields)})."
        )
    for name in ("before_text", "after_text"):
        check_text_size(spec, cleaned[name])
    for name in ("before_state", "after_state"):
        cleaned[name] = clean_state(spec, values[name], name)
    return cleaned


def clean_state(spec: SurfaceSpec, state: Any, name: str) -> dict[str, Any]:
    """A revision's state as an import may store it: the surface's state fields only.

    Values are checked by their field's type and kept as `SurfaceSpec.snapshot` writes them
    (times as ISO 8601 text). `subject` and `superseded_by` stay names (an external id, a
    ref) for the caller to resolve within the agent: an id would point into any agent.
    """
    if not isinstance(state, dict):
        raise Invalid(f"{name} must be a JSON object.")
    unknown = [key for key in state if key not in spec.state_fields]
    if unknown:
        raise Invalid(
            f"{name} holds {', '.join(map(repr, unknown))}, which is not part of a {spec.key} "
            f"record's state (that is {', '.join(spec.state_fields)})."
        )
    meta = spec.model._meta
    cleaned: dict[str, Any] = {}
    for key, value in state.items():
        if key in NAMED_IN_STATE:
            if value is not None and (not isinstance(value, str) or not value):
                raise Invalid(f"{name}: {key} must name its row (text) or be null, not {value!r}.")
            cleaned[key] = value
            continue
        try:
            value = _clean_field(meta.get_field(key), value)
            if key in spec.text_fields:
                check_text_size(spec, value)
        except Invalid as error:
            raise Invalid(f"{name}: {error.message}") from None
        cleaned[key] = value.isoformat() if isinstance(value, dt.datetime) else value
    return cleaned


def _vector(value: Any) -> list[float] | None:
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or len(value) != EMBEDDING_DIMENSIONS
        or not all(is_number(x) for x in value)
    ):
        raise Invalid(f"embedding must be a list of {EMBEDDING_DIMENSIONS} numbers.")
    return [float(x) for x in value]
