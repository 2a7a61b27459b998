"""The scan at the door: what a write holding credentials or personal data meets.

The engine asks `screen` once per write, before anything is stored, whatever door the write
came through. Each category found is met with the agent's policy for it: allowed (and the
writer told), stored masked, held for a person's review, or refused. A refusal names the
kinds found and what to do, never the text. A person may store one held or refused write
(`overriding`); that is recorded by `record_override`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from stores import scanning
from stores.engine.actors import Actor
from stores.engine.audit import record_audit
from stores.engine.sources import Source
from stores.errors import SensitiveData
from stores.models import Agent, AuditEntry, ScanOverride, ScanPolicy
from stores.scanning import Category, Finding

# The parts of a write's source its revision keeps that a writer could paste anything into.
SCANNED_SOURCE_PARTS = ("excerpt", "url")
SOURCE_KEY = "source."
POLICY_FIELDS = {
    Category.CREDENTIALS: "credentials_policy",
    Category.PERSONAL_DATA: "personal_data_policy",
}
# What the writer is told to do instead, per category refused.
REMEDIES = {
    Category.CREDENTIALS: "Remove it from the text and keep it in a secret store; a memory may "
    "say where it is kept (for example 'the deploy key is in the team vault'), not the value.",
    Category.PERSONAL_DATA: "Remove it or describe it without the value (for example 'has a "
    "work email address').",
}


@dataclass
class Screened:
    """A write's values after the scan, and what the writer is to be told of it."""

    values: dict[str, Any]
    # The writer, its source's excerpt and link masked where the values are.
    actor: Actor
    held: bool = False
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    # What a person's override let through, for `record_override` once the write has an id.
    overridden: list[dict[str, str]] = field(default_factory=list)


_OVERRIDE: ContextVar[str | None] = ContextVar("scan_override", default=None)


@contextmanager
def overriding(reason: str) -> Iterator[None]:
    """Writes inside, by a person, are stored though the scan would hold or refuse them."""
    token = _OVERRIDE.set(reason)
    try:
        yield
    finally:
        _OVERRIDE.reset(token)


def policy_for(agent: Agent, category: Category) -> str:
    return str(getattr(agent, POLICY_FIELDS[category]))


def screen(
    *,
    agent: Agent,
    actor: Actor,
    text_fields: tuple[str, ...] | list[str],
    values: Mapping[str, Any],
    before: Mapping[str, str] | None = None,
) -> Screened:
    """Scan the text fields `values` sets (only the lines each adds to its `before` text), and
    the excerpt and link of the writer's source, which its revision keeps too; apply `agent`'s
    policy. A refusal is raised as SensitiveData, nothing written."""
    region = settings.MEMORYADMIN["PHONE_REGION"]
    source = actor.source or Source()
    texts = {name: values.get(name) for name in text_fields}
    texts.update({SOURCE_KEY + part: getattr(source, part) for part in SCANNED_SOURCE_PARTS})
    found: dict[str, list[Finding]] = {}
    for name, text in texts.items():
        if not isinstance(text, str) or not text:
            continue
        earlier = (before or {}).get(name) or ""
        findings = scanning.scan(text, region=region, skip_lines=earlier.splitlines(keepends=True))
        if findings:
            found[name] = findings
    if not found:
        return Screened(values=dict(values), actor=actor)
    everything = [finding for findings in found.values() for finding in findings]
    by_category = {
        category: [finding for finding in everything if finding.category == category]
        for category in Category
    }
    actions = {
        category: policy_for(agent, category) for category, hits in by_category.items() if hits
    }
    override = _OVERRIDE.get()
    overridden: list[dict[str, str]] = []
    if override is not None and actor.kind == "user":
        for category, action in actions.items():
            if action in (ScanPolicy.HOLD, ScanPolicy.REFUSE):
                overridden.extend(finding.describe() for finding in by_category[category])
                actions[category] = ScanPolicy.ALLOW
    refused = [category for category, action in actions.items() if action == ScanPolicy.REFUSE]
    if refused:
        raise SensitiveData(
            _refusal_message(refused, by_category),
            found=_described(f for category in refused for f in by_category[category]),
            policy={str(category): str(actions[category]) for category in refused},
        )
    screened = dict(values)
    masked_source: dict[str, str] = {}
    masking = {category for category, action in actions.items() if action == ScanPolicy.MASK}
    for name, findings in found.items():
        mine = [finding for finding in findings if finding.category in masking]
        if not mine:
            continue
        if name.startswith(SOURCE_KEY):
            part = name.removeprefix(SOURCE_KEY)
            masked_source[part] = scanning.masked(getattr(source, part), mine)
        else:
            screened[name] = scanning.masked(screened[name], mine)
    if masked_source:
        masked = dataclasses.replace(
            source,
            excerpt=masked_source.get("excerpt", source.excerpt),
            url=masked_source.get("url", source.url),
        )
        actor = dataclasses.replace(actor, source=masked)
    sentences = [
        _sentence(category, action, by_category[category]) for category, action in actions.items()
    ]
    if overridden:
        sentences.append("A person chose to store it as written.")
    return Screened(
        values=screened,
        actor=actor,
        held=ScanPolicy.HOLD in actions.values(),
        message=" ".join(sentences),
        details={
            "scan": {
                "found": _described(everything),
                "policy": {str(category): str(action) for category, action in actions.items()},
            }
        },
        overridden=overridden,
    )


def _described(findings: Iterable[Finding]) -> list[dict[str, str]]:
    """Each kind found once, with its category: never the text."""
    return list({finding.kind: finding.describe() for finding in findings}.values())


def _named(findings: list[Finding]) -> str:
    return ", ".join(scanning.kinds(findings))


def _refusal_message(refused: list[Category], by_category: Mapping[Category, list[Finding]]) -> str:
    found = "; ".join(
        f"{scanning.CATEGORY_WORDS[category]} ({_named(by_category[category])})"
        for category in refused
    )
    remedies = " ".join(REMEDIES[category] for category in refused)
    return (
        f"Refused: the text holds {found}, which this agent does not store. Nothing was "
        f"written. {remedies} Then send the write again."
    )


def _sentence(category: Category, action: str, findings: list[Finding]) -> str:
    what = f"{scanning.CATEGORY_WORDS[category]} ({_named(findings)})"
    if action == ScanPolicy.MASK:
        return (
            f"The text held {what}; it was stored with each match replaced by a "
            "[masked ...] placeholder."
        )
    if action == ScanPolicy.HOLD:
        return f"The text holds {what}, so the write is held for a person's review."
    return f"Note: the text holds {what}; it was stored as written."


def shown_masked(text: str) -> tuple[str, list[str]]:
    """`text` as a reviewer's page shows it: whatever the scan finds masked, and the kinds."""
    findings = scanning.scan(text, region=settings.MEMORYADMIN["PHONE_REGION"])
    return scanning.masked(text, findings), scanning.kinds(findings)


def record_override(
    *,
    agent_id: int,
    actor: Actor,
    surface: str,
    record_id: int,
    revision_id: int | None,
    found: list[dict[str, str]],
) -> ScanOverride:
    """Keep that a person stored a write the scan would have held or refused: who, which
    record and revision, what kinds, why; and the same, without the text, in the audit log."""
    override = ScanOverride.objects.create(
        agent_id=agent_id,
        surface=surface,
        record_id=record_id,
        revision_id=revision_id,
        actor=actor.label,
        user_id=actor.user.pk if actor.user is not None and actor.kind == "user" else None,
        found=_dedupe(found),
        reason=_OVERRIDE.get() or "",
    )
    record_audit(
        AuditEntry.Kind.OVERRIDE,
        actor=actor,
        agent=Agent.objects.get(pk=agent_id),
        details={
            "surface": surface,
            "record": record_id,
            "revision": revision_id,
            "found": [item["kind"] for item in override.found],
            "reason": override.reason,
        },
    )
    return override


def _dedupe(found: list[dict[str, str]]) -> list[dict[str, str]]:
    return list({item["kind"]: item for item in found}.values())
