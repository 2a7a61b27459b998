"""Section ops on a skill's markdown body; each previews with `dry_run`, writing nothing."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Literal

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
    keep_subsections: bool = False,
    expected_version: int | None = None,
    dry_run: bool = False,
) -> WriteResult:
    """Replace what stands under `heading`, keeping its heading line once: content that opens
    with that same heading has it dropped, and the result says so (`dropped_heading`). Its
    subsections go too, unless `keep_subsections` keeps them and replaces only the text
    before the first one."""
    content = validation.text(content, "content")
    keep_subsections = validation.flag(keep_subsections, "keep_subsections")
    return _section_write(
        agent=agent,
        ref=ref,
        actor=actor,
        op="replace_section",
        expected_version=expected_version,
        dry_run=dry_run,
        transform=lambda body: sections.replace_section(
            body,
            heading,
            content,
            keep_subsections=keep_subsections,
            max_length=text_limit(SKILL),
        ),
    )


@returns_result
def skill_insert_at_section(
    *,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    heading: str,
    content: str,
    where: Literal["before", "after"],
    expected_version: int | None = None,
    dry_run: bool = False,
) -> WriteResult:
    """Insert `content` as whole lines just above (`before`) or just below (`after`, before
    the section's own text) the heading line of `heading`."""
    insert = {"before": sections.insert_before_section, "after": sections.insert_after_section}
    content = validation.text(content, "content")
    return _section_write(
        agent=agent,
        ref=ref,
        actor=actor,
        op=f"insert_{where}_section",
        expected_version=expected_version,
        dry_run=dry_run,
        transform=lambda body: insert[where](body, heading, content, max_length=text_limit(SKILL)),
    )


skill_insert_before_section = partial(skill_insert_at_section, where="before")
skill_insert_after_section = partial(skill_insert_at_section, where="after")


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
