"""What an op may set: field values checked as every write takes them, the text field an
op edits, and the checks a whole text's replacement makes."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from django.utils import timezone

from stores.editing import PREVIEW_LENGTH, NoChange, looks_truncated, text_sha256
from stores.errors import Conflict, Invalid, NotFound, PreconditionRequired, SuspectedTruncation
from stores.models import Agent, Subject, VersionedRecord
from stores.selectors.records import sha256_key
from stores.services import validation
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
    spec: SurfaceSpec,
    record: VersionedRecord,
    text_field: str,
    new_text: str,
    *,
    allow_shorter: bool,
    expected_sha256: str | None,
) -> None:
    current = getattr(record, text_field)
    if new_text == current:
        raise NoChange(f"The {text_field} already reads exactly that; nothing to change.")
    if not new_text.strip() and text_field == spec.primary_text_field:
        raise Invalid(f"An empty {text_field} would erase the record; forget it instead.")
    _check_full_read(spec, record, text_field, current, expected_sha256)
    # The second line: a shape cut from a preview, even from a caller who read in full.
    if not allow_shorter and looks_truncated(current, new_text):
        raise SuspectedTruncation(
            f"The new {text_field} looks cut from a preview of the current one: it is "
            f"{len(new_text)} of {len(current)} characters, begins like it and lacks the rest. "
            f"Read the full text first ({_full_reads(spec, record)}), merge your change into "
            "it and replace with the whole text, or change just a phrase with an edit. Only if "
            "you mean to drop the rest, send the replacement again with allow_shorter: true "
            "(replace_record, or the REST replace and PATCH).",
            current_length=len(current),
            new_length=len(new_text),
        )


def _full_reads(spec: SurfaceSpec, record: VersionedRecord) -> str:
    ways = [
        f"read_record (surface {spec.key}, id {record.pk})",
        f"GET /api/v1/{spec.api_path}/{record.pk}/",
    ]
    if spec.resource:
        ways.append(spec.resource.format(id=record.pk))
    return ", ".join(ways)


def _check_full_read(
    spec: SurfaceSpec,
    record: VersionedRecord,
    text_field: str,
    current: str,
    expected_sha256: str | None,
) -> None:
    """A text longer than a preview is replaced whole only by a caller who proves a full read.

    The version proves only that some read was seen, and a recall or list preview carries it
    too; an edited preview sent back with it silently dropped the rest of the text, however
    the shape guard was tuned. The SHA-256 of the current text is in full reads only, so
    sending it back is the proof (as Anthropic's memory stores take `content_sha256`). Refused
    as precondition_required, not suspected_truncation: nothing says this text is a cut (a
    full rewrite is legitimate); what is missing is the precondition, which the caller can
    supply, and the word says to read first, as a missing version does.
    """
    key = sha256_key(text_field)
    if expected_sha256 is None:
        if len(current) <= PREVIEW_LENGTH:
            return  # every preview of it is the whole text: the version is proof enough
        raise PreconditionRequired(
            f"The current {text_field} is {len(current)} characters, longer than a preview "
            f"({PREVIEW_LENGTH}): replacing it whole needs proof that you read all of it. Read "
            f"the record in full ({_full_reads(spec, record)}), merge your change into the "
            f"whole text, and send its {key} as expected_sha256 with the version; or change "
            "just a phrase with an edit. A recall, list or feed preview is never enough.",
            current_length=len(current),
            preview_length=PREVIEW_LENGTH,
            sha256_field=key,
        )
    if not isinstance(expected_sha256, str):
        raise Invalid("expected_sha256 must be a string: the 64 hex digits a full read gives.")
    if expected_sha256.lower() != text_sha256(current):
        raise Conflict(
            f"expected_sha256 is not the SHA-256 of the current {text_field}: the text changed "
            f"since you read it, or the hash was not its {key} from a full read. Read the "
            f"record in full again ({_full_reads(spec, record)}) and apply your change to what "
            "you read.",
            current_version=record.version,
        )


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
