"""Ops on an agent's rules document: add, remove or rewrite one rule, byte for byte elsewhere.

Each previews with `dry_run`, writing nothing (not even the empty document of a first rule).
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import IntegrityError, transaction

from stores.editing import Edited
from stores.editing import rules as rule_text
from stores.errors import NotFound
from stores.models import Agent, RulesDocument, VersionedRecord
from stores.services import policy, validation
from stores.services.actors import Actor
from stores.services.engine import (
    Change,
    apply_change,
    create,
    document_change,
    returns_result,
    text_limit,
    write,
)
from stores.services.results import WriteResult
from stores.surfaces import RULES


def rules_document(*, agent: Agent, actor: Actor) -> RulesDocument:
    """The agent's rules document, created empty (with its first revision) on first use."""
    if not actor.can_see(agent):
        raise NotFound(f"No agent {agent.name!r}.")
    document = RulesDocument.objects.filter(agent=agent).first()
    if document is not None:
        return document
    policy.check_agent(agent, actor=actor, op="create")
    try:
        with transaction.atomic():
            created = create(RULES, agent=agent, actor=actor, values={"content": ""})
    except IntegrityError:
        return RulesDocument.objects.get(agent=agent)
    if created.record is None:
        return RulesDocument.objects.get(agent=agent)
    return created.record


def _rule_write(
    *,
    agent: Agent,
    actor: Actor,
    op: str,
    expected_version: int | None,
    transform: Callable[[str], str | Edited],
    dry_run: bool,
) -> WriteResult:
    def build(record: VersionedRecord) -> Change:
        return document_change(op, transform(record.content))

    if dry_run:
        if not actor.can_see(agent):
            raise NotFound(f"No agent {agent.name!r}.")
        document = RulesDocument.objects.filter(agent=agent).first()
        if document is None:
            # The write would create the empty document (version 1) first; preview on that,
            # creating nothing.
            policy.check_agent(agent, actor=actor, op="create")
            document = RulesDocument(agent=agent, content="", version=1)
        document.agent = agent  # already loaded by the caller; spares a query
        return apply_change(
            RULES,
            document,
            actor=actor,
            op=op,
            expected_version=expected_version,
            build=build,
            dry_run=True,
        )
    with transaction.atomic():
        document = rules_document(agent=agent, actor=actor)
        return write(
            RULES,
            agent=agent,
            ref=document.pk,
            actor=actor,
            op=op,
            expected_version=expected_version,
            build=build,
        )


@returns_result
def rules_add(
    *,
    agent: Agent,
    actor: Actor,
    rule: str,
    section: str | None = None,
    expected_version: int | None = None,
    dry_run: bool = False,
) -> WriteResult:
    """Add one rule after the last rule (of `section`), in the document's own bullet style.

    As RockBot's rules store does: after the last bullet, so prose below the list stays below
    it; a rule already there in another letter case is not added again (no_change). The
    result's message and details (`lines`, `placed`) say where the rule went.
    """
    rule = validation.text(rule, "rule")
    return _rule_write(
        agent=agent,
        actor=actor,
        op="add_rule",
        expected_version=expected_version,
        dry_run=dry_run,
        transform=lambda text: rule_text.add_rule(
            text, rule, section=section, max_length=text_limit(RULES)
        ),
    )


@returns_result
def rules_remove(
    *,
    agent: Agent,
    actor: Actor,
    rule: str,
    expected_version: int | None = None,
    dry_run: bool = False,
) -> WriteResult:
    """Remove the one rule that reads `rule` (its bullet and continuation lines)."""
    rule = validation.text(rule, "rule")
    return _rule_write(
        agent=agent,
        actor=actor,
        op="remove_rule",
        expected_version=expected_version,
        dry_run=dry_run,
        transform=lambda text: rule_text.remove_rule(text, rule),
    )


@returns_result
def rules_replace(
    *,
    agent: Agent,
    actor: Actor,
    rule: str,
    new_rule: str,
    expected_version: int | None = None,
    dry_run: bool = False,
) -> WriteResult:
    """Rewrite one rule in place, keeping its bullet."""
    rule = validation.text(rule, "rule")
    new_rule = validation.text(new_rule, "new_rule")
    return _rule_write(
        agent=agent,
        actor=actor,
        op="replace_rule",
        expected_version=expected_version,
        dry_run=dry_run,
        transform=lambda text: rule_text.replace_rule(
            text, rule, new_rule, max_length=text_limit(RULES)
        ),
    )
