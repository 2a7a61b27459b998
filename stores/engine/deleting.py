"""Forgetting a record: a hard delete whose revision keeps the last text, after every link to the
record is cleared through the engine, each with a revision of its own.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from django.db import DEFAULT_DB_ALIAS, models

from stores.editing import Status
from stores.engine.actors import Actor
from stores.engine.commit import Change, commit
from stores.engine.lookup import LOCKED
from stores.engine.results import WriteResult, record_diff, success
from stores.engine.revisions import record_revision
from stores.errors import Conflict
from stores.models import (
    VersionedRecord,
)
from stores.opnames import OpName
from stores.runtime.prepared import PreparedQuery
from stores.surfaces import SURFACES, SurfaceSpec


def delete(spec: SurfaceSpec, record: VersionedRecord, *, actor: Actor) -> WriteResult:
    """Hard-delete a record; its revision keeps the last text and state.

    Records that point at it lose that link first, each as a revision of its own in the same
    transaction, so the database never changes them behind their history.
    """
    text_field = spec.primary_text_field
    before_text = getattr(record, text_field)
    before_state = spec.snapshot(record)
    if (locked := LOCKED.get()) is not None:
        locked.wrote(spec, record, deleted=True)
    unlinked = _unlink_dependants(spec, record, actor=actor)
    # A plain DELETE: every link to the record was cleared just above, each with its revision,
    # and the database's constraints refuse one that was not. Django's delete() would read the
    # row again and clear the same links a second time, behind their history.
    deleted = spec.model._default_manager.filter(pk=record.pk, version=record.version)._raw_delete(
        using=DEFAULT_DB_ALIAS
    )
    if not deleted:
        raise Conflict("Another write changed the record at the same moment; re-read it.")
    version_before = record.version
    record.version = version_before + 1
    revision = record_revision(
        spec,
        record,
        actor=actor,
        op=OpName.FORGET,
        text_field=text_field,
        version_before=version_before,
        before_text=before_text,
        after_text="",
        before_state=before_state,
        after_state={},
    )
    return success(
        spec,
        record,
        revision,
        status=Status.DELETED,
        diff=record_diff(spec, record, before_text, ""),
        message=" ".join(_unlinked_sentence(link) for link in unlinked),
        details={"unlinked": unlinked} if unlinked else None,
    )


def _unlinked_sentence(link: Mapping[str, Any]) -> str:
    """What forgetting a record did to one that pointed at it, for the caller to read: the
    caller may not be allowed to change that record, and should know it was touched."""
    named = f"{link['surface']} {link['id']}"
    return (
        f"{named.capitalize()} pointed at it; that link was cleared in unlink revision "
        f"{link['revision']} and nothing else of {named} changed (a superseded memory stays "
        "superseded)."
    )


@functools.cache
def _links_to(spec: SurfaceSpec) -> list[tuple[SurfaceSpec, str, PreparedQuery[Any]]]:
    """The foreign keys of surface records that point at records of `spec` (a memory's
    successor is the one today), each with the locking read of the records that point at one
    record, compiled once: every forget runs it."""
    return [
        (other, field.attname, _dependants(other, field.attname))
        for other in SURFACES.values()
        for field in other.model._meta.concrete_fields
        if field.many_to_one and field.related_model is spec.model
    ]


def _dependants(other: SurfaceSpec, attname: str) -> PreparedQuery[Any]:
    manager: Any = other.model._default_manager

    def build(target: int, same: int) -> models.QuerySet[Any]:
        dependants = manager.filter(**{attname: target}).exclude(pk=same)
        if other.embedded:
            dependants = dependants.defer("embedding")
        return dependants.select_for_update(of=("self",)).order_by("pk")

    return PreparedQuery(build, int, int)


def _unlink_dependants(
    spec: SurfaceSpec, record: VersionedRecord, *, actor: Actor
) -> list[dict[str, Any]]:
    """Clear every link to `record` through the compare-and-swap, one `unlink` revision each.

    Deliberately no policy check of the dependant: the actor may forget `record`, and a link
    to a record that no longer exists cannot stay. Refusing instead would let any record the
    actor may not change (an episodic or fact memory, a private subject's) block forgetting its
    successor for good. The unlink keeps everything else (a superseded memory stays
    invalidated), names the forget's actor, and is reviewable and revertible like any write.
    """
    unlinked: list[dict[str, Any]] = []
    for other, attname, dependants in _links_to(spec):
        for dependant in dependants.run(record.pk, record.pk):
            if dependant.agent_id == record.agent_id:
                dependant.agent = record.agent  # spares a query for the revision
            result = commit(
                other,
                dependant,
                actor=actor,
                change=Change(op=OpName.UNLINK, values={attname: None}),
            )
            unlinked.append(
                {
                    "surface": other.key,
                    "id": dependant.pk,
                    "version": result.version,
                    "revision": result.revision,
                }
            )
    return unlinked
