"""What an op may set: field values checked as every write takes them, the text field an
op edits, and what a replacement must say to change anything."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from django.utils import timezone

from stores.editing import NoChange
from stores.engine import validation
from stores.errors import Invalid, NotFound
from stores.models import Agent, Subject, VersionedRecord
from stores.surfaces import SurfaceSpec


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


def subject_of(agent: Agent, external_id: str) -> Subject:
    subject = Subject.objects.filter(agent=agent, external_id=external_id).first()
    if subject is None:
        raise NotFound(f"No subject {external_id!r} among this agent's people.")
    return subject


def check_replacement(
    spec: SurfaceSpec, record: VersionedRecord, text_field: str, new_text: str
) -> None:
    """What a replacement must say for the op to have something to write; the proof of a full
    read and the shape guard are the engine's (`wholetext`), for every whole-text write."""
    if new_text == getattr(record, text_field):
        raise NoChange(f"The {text_field} already reads exactly that; nothing to change.")
    if not new_text.strip() and text_field == spec.primary_text_field:
        raise Invalid(f"An empty {text_field} would erase the record; forget it instead.")


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
