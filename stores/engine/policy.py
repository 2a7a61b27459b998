"""Who may do which op on which record: permissions, store rules, privacy, the self-edit switch."""

from __future__ import annotations

from stores.engine.actors import Actor
from stores.errors import Disabled, Forbidden, NotEditable, PrivacyRestricted
from stores.models import Agent, Memory, Subject, VersionedRecord
from stores.opnames import OpName
from stores.surfaces import surface_of

# Long-term memory stores: `working` rows take every op, `episodic` rows are history that
# may only be superseded, and `fact` rows are a read-only projection.
OPS_BY_STORE: dict[str, frozenset[OpName] | None] = {
    Memory.Store.WORKING: None,
    Memory.Store.EPISODIC: frozenset({OpName.INVALIDATE}),
    Memory.Store.FACT: frozenset(),
}

STORE_REFUSALS: dict[str, str] = {
    Memory.Store.EPISODIC: "Episodic memories are history: they can be invalidated (superseded) "
    "but not rewritten, re-weighted or deleted.",
    Memory.Store.FACT: "Fact memories are a read-only projection; no op changes them. Read it "
    "with a full read instead.",
}

# Privacy of a subject restricts agent-initiated changes to that subject's memories;
# an agent may still forget them.
PRIVACY_EXEMPT_OPS = frozenset({OpName.FORGET})


def check(record: VersionedRecord, *, actor: Actor, op: OpName | str) -> None:
    """Raise the refusal for `actor` doing `op` on `record`, or return quietly."""
    if surface_of(record).store_policy:
        check_agent(
            record.agent,
            actor=actor,
            op=op,
            store=record.store,
            subject=record.subject,
            bank=record.bank,
        )
    else:
        check_agent(record.agent, actor=actor, op=op)


def check_agent(
    agent: Agent,
    *,
    actor: Actor,
    op: OpName | str,
    store: str | None = None,
    subject: Subject | None = None,
    bank: str | None = None,
) -> None:
    """The checks for `op` on a record of `agent` (in `store`, about `subject`, for memories)."""
    if not actor.can_write(agent):
        raise Forbidden("This caller may read but not write this agent's memory.")
    if actor.is_agent and not agent.self_editing_enabled:
        raise Disabled(
            "Self-editing is switched off for this agent; a human must make this change."
        )
    if store is not None:
        check_store(store, op, actor=actor, bank=bank)
    if (
        actor.is_agent
        and subject is not None
        and subject.restricts_agent_updates
        and op not in PRIVACY_EXEMPT_OPS
    ):
        raise PrivacyRestricted(
            "The subject of this memory has restricted privacy; agents may not change their "
            "personal memories."
        )


def check_store(store: str, op: OpName | str, *, actor: Actor, bank: str | None = None) -> None:
    allowed = OPS_BY_STORE.get(store)
    if allowed is None or op in allowed or actor.may_bypass_store_rules:
        return
    details = {"store": str(store)}
    if bank is not None:
        details["bank"] = bank
    raise NotEditable(STORE_REFUSALS[store], **details)


def allowed_ops(store: str, *, actor: Actor) -> frozenset[OpName] | None:
    """The ops `actor` may apply to a memory in `store`; None means all of them."""
    if actor.may_bypass_store_rules:
        return None
    return OPS_BY_STORE.get(store)
