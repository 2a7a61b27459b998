"""Edits that would grow a text past its surface's limit are refused before the text is built."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

from django.conf import settings

from stores.editing import PhraseEdit, Status
from stores.engine.actors import Actor
from stores.engine.results import WriteResult
from stores.models import Memory, RulesDocument, Skill
from stores.services import (
    record_edit,
    rules_add,
    rules_replace,
    skill_append,
    skill_replace_section,
)

ME = Actor.maintainer("tests")
MEMORY_LIMIT = settings.MEMORYADMIN["MAX_TEXT_LENGTH"]["memory"]
SKILL_LIMIT = settings.MEMORYADMIN["MAX_TEXT_LENGTH"]["skill"]
RULES_LIMIT = settings.MEMORYADMIN["MAX_TEXT_LENGTH"]["rules"]
# What a refused write may allocate: a few copies of the stored text, never the result.
MEMORY_BUDGET = 16 * 1024 * 1024


def peak_while(write: Callable[[], WriteResult]) -> tuple[WriteResult, int]:
    tracemalloc.start()
    try:
        result = write()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return result, peak


def test_replace_all_that_would_build_200_million_characters_is_refused_unbuilt(agent, make):
    memory = make.memory(agent, "a" * MEMORY_LIMIT)
    result, peak = peak_while(
        lambda: record_edit(
            surface_key="memory",
            agent=agent,
            ref=memory.pk,
            actor=ME,
            old_string="a",
            new_string="b" * 2000,
            replace_all=True,
        )
    )
    assert result.status is Status.INVALID
    assert result.details["limit"] == MEMORY_LIMIT
    assert result.details["length"] == 200_000_000
    assert f"{MEMORY_LIMIT} occurrences" in result.message
    assert peak < MEMORY_BUDGET
    assert Memory.objects.get(pk=memory.pk).version == 1


def test_a_batch_of_doubling_edits_is_refused_at_its_first_step(agent, make):
    memory = make.memory(agent, "a" * MEMORY_LIMIT)
    result, peak = peak_while(
        lambda: record_edit(
            surface_key="memory",
            agent=agent,
            ref=memory.pk,
            actor=ME,
            edits=[PhraseEdit("a", "aa", replace_all=True)] * 10,
        )
    )
    assert result.status is Status.INVALID
    assert (result.details["limit"], result.details["length"]) == (MEMORY_LIMIT, 2 * MEMORY_LIMIT)
    assert result.message.startswith("Edit 1 of 10:")
    assert peak < MEMORY_BUDGET
    assert Memory.objects.get(pk=memory.pk).version == 1


def test_a_rule_under_a_wide_bullet_is_refused_unbuilt(agent, make):
    make("rules", agent, content="-" + " " * 100_000 + "Be brief.\n")
    many_lines = "x\n" * 2000 + "x"
    for write in (
        lambda: rules_add(agent=agent, actor=ME, rule=many_lines),
        lambda: rules_replace(agent=agent, actor=ME, rule="Be brief.", new_rule=many_lines),
    ):
        result, peak = peak_while(write)
        assert result.status is Status.INVALID
        assert result.details["limit"] == RULES_LIMIT
        assert result.details["length"] > 200_000_000
        assert peak < MEMORY_BUDGET
    assert RulesDocument.objects.get(agent=agent).version == 1


def test_section_ops_past_the_skill_limit_are_refused_by_the_engine(agent, make):
    skill = make.skill(agent, content="# Deploy\r\n\r\n## Steps\r\n" + "Run it.\r\n" * 50_000)
    # Every LF of the content is written as CRLF in this document: 200,000 + 100,000 characters.
    content = "x\n" * 100_000
    for write in (
        lambda: skill_append(agent=agent, ref=skill.pk, actor=ME, content=content),
        lambda: skill_replace_section(
            agent=agent, ref=skill.pk, actor=ME, heading="Deploy", content=content * 2
        ),
    ):
        result = write()
        assert result.status is Status.INVALID
        assert result.details["limit"] == SKILL_LIMIT
        assert result.details["length"] > SKILL_LIMIT
        assert "would make the text" in result.message
    assert Skill.objects.get(pk=skill.pk).version == 1
