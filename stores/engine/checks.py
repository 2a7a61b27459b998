"""What every write checks of the values it stores: the version read, the text's size, the fields'
own rules, where the record stands, and the database's rules as a refusal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, models

from stores.errors import Conflict, Invalid
from stores.models import (
    VersionedRecord,
)
from stores.surfaces import SurfaceSpec


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
