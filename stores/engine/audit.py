"""Writing the audit log: erasures, redactions, overrides and memory stores' own changes, each
one row added."""

from __future__ import annotations

from typing import Any

from stores.engine.actors import Actor
from stores.models import Agent, AuditEntry


def record_audit(
    kind: str, *, actor: Actor | str, agent: Agent | None, details: dict[str, Any]
) -> AuditEntry:
    """Add one entry to the audit log, in the caller's transaction.

    `details` must be JSON and name what was done (ids, counts, hashes), never text that was
    removed: the log is kept for good, and whoever reads it may not read the text.
    """
    if kind not in AuditEntry.Kind.values:
        raise ValueError(f"Unknown audit kind {kind!r}; one of {', '.join(AuditEntry.Kind)}.")
    return AuditEntry.objects.create(
        kind=kind,
        actor=actor.label if isinstance(actor, Actor) else actor,
        agent=agent,
        agent_name=agent.name if agent is not None else "",
        details=details,
    )
