"""Ops on an agent's rules document, as the shell calls them (`stores/ops/rules/`)."""

from __future__ import annotations

from stores.models import Agent, RulesDocument
from stores.ops.rules import add_rule, remove_rule, replace_rule
from stores.services.actors import Actor
from stores.services.documents import agent_document
from stores.surfaces import RULES

rules_add = add_rule.OP.execute
rules_remove = remove_rule.OP.execute
rules_replace = replace_rule.OP.execute


def rules_document(*, agent: Agent, actor: Actor) -> RulesDocument:
    """The agent's rules document, created empty (with its first revision) on first use."""
    document = agent_document(RULES, agent=agent, actor=actor)
    assert isinstance(document, RulesDocument)
    return document
