"""What the services answer for the engine's choices and refusals: where a
rule went, a duplicate left alone, a restated heading dropped, each ambiguous occurrence."""

from __future__ import annotations

from stores.editing import Status
from stores.engine.actors import Actor
from stores.models import RulesDocument
from stores.services import (
    record_create,
    record_edit,
    rules_add,
    rules_remove,
    skill_append,
    skill_replace_section,
)

ME = Actor.maintainer("tests")

RULES = """# Rules

- Be brief.
- Cite sources.

## Notes
These rules were agreed with Ann in May.
"""


def _rules(agent, content: str = RULES) -> None:
    assert record_create(surface_key="rules", agent=agent, actor=ME, values={"content": content}).ok


def test_add_rule_goes_after_the_last_rule_and_says_where(agent):
    _rules(agent)
    added = rules_add(agent=agent, actor=ME, rule="Answer in the user's language.")
    document = RulesDocument.objects.get(agent=agent)
    assert added.status is Status.UPDATED
    assert document.content == RULES.replace(
        "- Cite sources.\n", "- Cite sources.\n- Answer in the user's language.\n"
    )
    assert added.details == {"lines": [5], "placed": "after_last_rule"}
    assert added.message == "Added the rule at line 5, after the last rule (line 4)."
    assert added.as_dict()["placed"] == "after_last_rule"


def test_a_rule_already_there_in_another_case_is_no_change_and_writes_nothing(agent):
    _rules(agent)
    refused = rules_add(agent=agent, actor=ME, rule="be BRIEF.")
    document = RulesDocument.objects.get(agent=agent)
    assert refused.status is Status.NO_CHANGE
    assert refused.details == {"existing_rule": {"line": 3, "text": "Be brief."}}
    assert "'Be brief.' (line 3)" in refused.message
    assert (document.content, document.version) == (RULES, 1)


def test_a_preview_of_add_rule_says_the_same(agent):
    _rules(agent)
    preview = rules_add(agent=agent, actor=ME, rule="Be kind.", dry_run=True)
    assert preview.details["dry_run"] and preview.details["placed"] == "after_last_rule"
    assert preview.message.startswith("Added the rule at line 5")
    assert RulesDocument.objects.get(agent=agent).version == 1


def test_removing_a_rule_in_another_case_is_refused_with_the_reason(agent):
    _rules(agent)
    refused = rules_remove(agent=agent, actor=ME, rule="cite sources.")
    assert refused.status is Status.NO_MATCH
    assert refused.details["near_miss"] == {
        "line": 4,
        "text": "Cite sources.",
        "similarity": 1.0,
        "explanation": "only letter case differs",
    }


def test_replace_section_with_its_own_heading_keeps_one_and_later_ops_still_work(agent, make):
    skill = make.skill(agent, content="# Guide\n\n## Testing\nOld content.\n\n## Release\nTag.\n")
    replaced = skill_replace_section(
        agent=agent, ref=skill.pk, actor=ME, heading="## Testing", content="## Testing\nNew."
    )
    assert replaced.status is Status.UPDATED
    assert replaced.details == {"dropped_heading": "## Testing"}
    assert "keeps one heading" in replaced.message
    # With the heading written twice, this was refused as ambiguous.
    appended = skill_append(agent=agent, ref=skill.pk, actor=ME, heading="Testing", content="More.")
    skill.refresh_from_db()
    assert appended.status is Status.UPDATED
    assert skill.content == "# Guide\n\n## Testing\nNew.\nMore.\n\n## Release\nTag.\n"


def test_an_ambiguous_edit_locates_each_occurrence(agent, make):
    memory = make.memory(agent, "The user lives in Paris and visits Paris often.")
    refused = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        old_string="Paris",
        new_string="Lyon",
    )
    assert refused.status is Status.AMBIGUOUS
    assert refused.details["lines"] == [1]
    assert refused.details["occurrences"] == [
        {"line": 1, "column": 19, "context": "user lives in Paris and visits"},
        {"line": 1, "column": 36, "context": "and visits Paris often."},
    ]
