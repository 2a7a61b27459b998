"""Reading surface records as plain data, the same for the REST API and the tool registry."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.db.models import Q, QuerySet
from django.utils import timezone

from stores.editing import PREVIEW_LENGTH, cut_preview, text_sha256, view_lines
from stores.errors import Invalid
from stores.models import (
    Agent,
    ScheduledTask,
    Skill,
    Subject,
    VersionedRecord,
    WorkingMemoryEntry,
)
from stores.selectors.revisions import moment, record_origin
from stores.surfaces import SurfaceSpec, surface_of

# The furthest a page may start: the database's OFFSET is a 64-bit integer, and a larger
# one was a 500. Every door that pages (REST lists, the recall tool) takes this bound.
MAX_OFFSET = 2**31 - 1


def preview(text: str) -> dict[str, Any]:
    """The first characters of `text`; a cut preview ends in an ellipsis and says so.

    A full read is the only way to see the whole text, which is what a full replacement must
    start from; the engine's truncation guard knows this shape (stores.editing.previews).
    """
    return {
        "preview": cut_preview(text),
        "truncated": len(text) > PREVIEW_LENGTH,
        "full_length": len(text),
    }


def records_for_agent(spec: SurfaceSpec, agent: Agent) -> QuerySet[VersionedRecord]:
    """The live records of `agent` on one surface (expired working memory is gone already)."""
    records = spec.model.objects.filter(agent=agent)
    if spec.select_related:
        records = records.select_related(*spec.select_related)
    if spec.expires:
        records = records.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
    return records


def working_entry_id(agent: Agent, *, namespace: str, key: str) -> int | None:
    """The id of the live working-memory entry `namespace/key` of `agent`, if any."""
    return (
        WorkingMemoryEntry.objects.filter(agent=agent, namespace=namespace, key=key)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
        .values_list("pk", flat=True)
        .first()
    )


def named_record_id(model: type[Skill | ScheduledTask], agent: Agent, name: str) -> int | None:
    """The id of the skill or scheduled task of `agent` called `name` (case-insensitive)."""
    return (
        model.objects.filter(agent=agent, name__iexact=name.strip())
        .values_list("pk", flat=True)
        .first()
    )


def only_record_id(spec: SurfaceSpec, agent: Agent) -> int | None:
    """The id of `agent`'s one record of a surface it has one of at most (its rules)."""
    return spec.model.objects.filter(agent=agent).values_list("pk", flat=True).first()


def subject_data(subject: Subject | None) -> dict[str, Any] | None:
    if subject is None:
        return None
    return {
        "id": subject.pk,
        "display_name": subject.display_name,
        "external_id": subject.external_id,
        "privacy_level": subject.privacy_level,
    }


def _read_value(record: VersionedRecord, name: str) -> Any:
    try:
        field = record._meta.get_field(name)
    except FieldDoesNotExist:
        value = getattr(record, name)  # a derived attribute, such as a memory's bank
    else:
        if field.is_relation:
            if field.related_model is Subject:
                return subject_data(getattr(record, name))
            return getattr(record, field.attname)  # the id: reading the row costs a query
        value = getattr(record, name)
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, list):
        return list(value)
    return value


def sha256_key(text_field: str) -> str:
    """Where a full read gives the SHA-256 of `text_field` (content_sha256 for content)."""
    return f"{text_field}_sha256"


def record_data(record: VersionedRecord) -> dict[str, Any]:
    """The full record: every field an agent may read, with its whole text and version, and
    each text's SHA-256 (`<field>_sha256`), the proof of this full read a replacement sends."""
    spec = surface_of(record)
    data: dict[str, Any] = {
        "id": record.pk,
        "alias": record.alias,
        "version": record.version,
        "created_at": moment(record.created_at),
        "updated_at": moment(record.updated_at),
    }
    for name in spec.read_fields:
        data[name] = _read_value(record, name)
    for name in spec.text_fields:
        data[sha256_key(name)] = text_sha256(getattr(record, name) or "")
    return data


def record_read(record: VersionedRecord) -> dict[str, Any]:
    """A full read: the record (`record_data`), and the writes that created and last changed
    it, with where they came from."""
    return {**record_data(record), **record_origin(surface_of(record).key, record.pk)}


def record_summary(spec: SurfaceSpec, record: VersionedRecord) -> dict[str, Any]:
    """A list entry: the record's identifying fields and a preview of its main text (and
    never that text's SHA-256, which would prove a full read the list never gave)."""
    data = record_data(record)
    text = data.pop(spec.primary_text_field)
    del data[sha256_key(spec.primary_text_field)]
    return {**data, **preview(text)}


def record_lines(
    record: VersionedRecord, *, field: str | None = None, start: int = 1, end: int | None = None
) -> dict[str, Any]:
    """Lines `start` to `end` (-1 or None: the last) of a record's text, numbered as
    Anthropic's memory tool views a file: each line's number right-aligned to six places, a
    tab and the line. A range outside the text is refused (TextEditError) naming the range."""
    spec = surface_of(record)
    name = spec.primary_text_field if field is None else field
    if name not in spec.text_fields:
        raise Invalid(
            f"{name!r} is not a text field of a {spec.key}; use one of "
            f"{', '.join(spec.text_fields)}."
        )
    view = view_lines(getattr(record, name), start, end)
    return {
        "id": record.pk,
        "version": record.version,
        "field": name,
        "numbered": view.text,
        "first": view.first,
        "last": view.last,
        "total": view.total,
    }
