"""An agent's one document of a surface (its rules): found, or created empty on first use.

A write to it names no record: the document is found (or, for the first write, created with
its own first revision) and the op's change goes through the engine. A dry run creates
nothing: on no document yet, it previews on the empty one the write would create.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import IntegrityError, transaction

from stores.engine import policy
from stores.engine.actors import Actor
from stores.engine.commit import Change, apply_change, atomic, create
from stores.engine.lookup import find_record
from stores.engine.results import WriteResult
from stores.errors import NotFound
from stores.models import Agent, RulesDocument, VersionedRecord
from stores.opnames import OpName
from stores.surfaces import RULES, SurfaceSpec


def unwritten_document(spec: SurfaceSpec, agent: Agent) -> VersionedRecord:
    """The empty document (version 1) the first write to `agent`'s record of `spec` would
    create, unsaved: what a preview and a page show before there is one."""
    return spec.model(**{"agent": agent, "version": 1, spec.primary_text_field: ""})


def agent_document(
    spec: SurfaceSpec, *, agent: Agent, actor: Actor, dry_run: bool = False
) -> VersionedRecord:
    """The agent's record of `spec`, created empty (with its first revision) on first use.

    With `dry_run` nothing is created: on no document yet, the empty one (version 1) the
    first write would create, unsaved.
    """
    if not actor.can_see(agent):
        raise NotFound(f"No agent {agent.name!r}.")
    # Every surface's model has its agent; the abstract base the spec names does not say so.
    documents: Any = spec.model._default_manager
    document = documents.filter(agent=agent).first()
    if document is not None:
        document.agent = agent  # already loaded by the caller; spares a query
        return document
    policy.check_agent(agent, actor=actor, op=OpName.CREATE)
    if dry_run:
        return unwritten_document(spec, agent)
    try:
        with transaction.atomic():
            created = create(spec, agent=agent, actor=actor, values={spec.primary_text_field: ""})
    except IntegrityError:
        return documents.get(agent=agent)
    if created.record is None:
        return documents.get(agent=agent)
    return created.record


def document_write(
    spec: SurfaceSpec,
    *,
    agent: Agent,
    actor: Actor,
    op: OpName,
    expected_version: int | None,
    build: Callable[[VersionedRecord], Change],
    dry_run: bool,
) -> WriteResult:
    """`build`'s change to the agent's document of `spec`, as `commit.write` makes any."""
    with atomic(dry_run):
        document = agent_document(spec, agent=agent, actor=actor, dry_run=dry_run)
        if not dry_run:
            # Read again under its row lock, as `commit.write` reads the record it changes.
            document = find_record(spec, agent=agent, ref=document.pk, actor=actor, lock=True)
        return apply_change(
            spec,
            document,
            actor=actor,
            op=op,
            expected_version=expected_version,
            build=build,
            dry_run=dry_run,
        )


def rules_document(*, agent: Agent, actor: Actor) -> RulesDocument:
    """The agent's rules document, created empty (with its first revision) on first use."""
    document = agent_document(RULES, agent=agent, actor=actor)
    assert isinstance(document, RulesDocument)
    return document
