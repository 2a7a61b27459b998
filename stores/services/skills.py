"""Section ops on a skill's markdown body; each previews with `dry_run`, writing nothing."""

from __future__ import annotations

from collections.abc import Callable

from stores.editing import Edited, sections
from stores.models import Agent, VersionedRecord
from stores.services import validation
from stores.services.actors import Actor
from stores.services.engine import (
    Change,
    RecordRef,
    document_change,
    returns_result,
    text_limit,
    write,
)
from stores.services.results import WriteResult
from stores.surfaces import SKILL


def _section_write(
    *,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    op: str,
    expected_version: int | None,
    transform: Callable[[str], str | Edited],
    dry_run: bool,
) -> WriteResult:
    def build(record: VersionedRecord) -> Change:
        return document_change(op, transform(record.content))

    return write(
        SKILL,
        agent=agent,
        ref=ref,
        actor=actor,
        op=op,
        expected_version=expected_version,
        build=build,
        dry_run=dry_run,
    )


@returns_result
def skill_append(
    *,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    content: str,
    heading: str | None = None,
    expected_version: int | None = None,
    dry_run: bool = False,
) -> WriteResult:
    """Append to the end of the body, or to the end of the section under `heading`."""
    content = validation.text(content, "content")
    return _section_write(
        agent=agent,
        ref=ref,
        actor=actor,
        op="append",
        expected_version=expected_version,
        dry_run=dry_run,
        transform=lambda body: sections.append(
            body, content, heading, max_length=text_limit(SKILL)
        ),
    )


@returns_result
def skill_replace_section(
    *,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    heading: str,
    content: str,
    expected_version: int | None = None,
    dry_run: bool = False,
) -> WriteResult:
    """Replace what stands under `heading`, keeping its heading line once: content that opens
    with that same heading has it dropped, and the result says so (`dropped_heading`)."""
    content = validation.text(content, "content")
    return _section_write(
        agent=agent,
        ref=ref,
        actor=actor,
        op="replace_section",
        expected_version=expected_version,
        dry_run=dry_run,
        transform=lambda body: sections.replace_section(
            body, heading, content, max_length=text_limit(SKILL)
        ),
    )


@returns_result
def skill_delete_section(
    *,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    heading: str,
    expected_version: int | None = None,
    dry_run: bool = False,
) -> WriteResult:
    return _section_write(
        agent=agent,
        ref=ref,
        actor=actor,
        op="delete_section",
        expected_version=expected_version,
        dry_run=dry_run,
        transform=lambda body: sections.delete_section(body, heading),
    )
