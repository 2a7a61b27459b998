"""Versions, preconditions and the truncation guard: nothing is written on a refusal."""

from __future__ import annotations

from stores.editing import Status, text_sha256
from stores.engine.actors import Actor
from stores.models import Memory, Revision
from stores.services import record_edit, record_replace, record_update

ME = Actor.maintainer("tests")
LONG = "The user is allergic to peanuts and shellfish; carries an epinephrine pen at all times."


def unchanged(memory: Memory, text: str, version: int) -> bool:
    memory.refresh_from_db()
    revisions = Revision.objects.filter(surface="memory", record_id=memory.pk).count()
    return memory.content == text and memory.version == version and revisions == version


def test_stale_expected_version_is_a_conflict_with_the_current_version(agent, make):
    memory = make.memory(agent, content=LONG)
    record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        old_string="peanuts",
        new_string="tree nuts",
    )
    result = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        old_string="shellfish",
        new_string="fish",
        expected_version=1,
    )
    assert result.status is Status.CONFLICT
    assert result.details["current_version"] == 2
    assert unchanged(memory, LONG.replace("peanuts", "tree nuts"), 2)


def test_full_replace_without_a_precondition_is_refused(agent, make):
    memory = make.memory(agent, content=LONG)
    result = record_replace(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        text="Allergic to nothing.",
        expected_version=None,
    )
    assert result.status is Status.PRECONDITION_REQUIRED
    patch = record_update(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        changes={"content": "Allergic to nothing."},
    )
    assert patch.status is Status.PRECONDITION_REQUIRED
    assert unchanged(memory, LONG, 1)


def test_truncated_prefix_replacement_is_suspected_truncation(agent, make):
    memory = make.memory(agent, content=LONG)
    for preview in (LONG[:40], LONG[:40] + "…"):
        result = record_replace(
            surface_key="memory",
            agent=agent,
            ref=memory.pk,
            actor=ME,
            text=preview,
            expected_version=1,
        )
        assert result.status is Status.SUSPECTED_TRUNCATION
        assert result.details["current_length"] == len(LONG)
    assert unchanged(memory, LONG, 1)


def test_full_replace_with_the_read_version_succeeds(agent, make):
    memory = make.memory(agent, content=LONG)
    merged = LONG.replace("at all times", "when travelling")
    result = record_replace(
        surface_key="memory", agent=agent, ref=memory.pk, actor=ME, text=merged, expected_version=1
    )
    assert result.status is Status.UPDATED and result.version == 2
    assert "-" + LONG in result.diff and "+" + merged in result.diff
    assert unchanged(memory, merged, 2)


def test_refused_phrase_edits_carry_their_hints_and_write_nothing(agent, make):
    memory = make.memory(agent, content="tea in the morning, tea at night")
    no_match = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        old_string="coffee in the morning",
        new_string="x",
    )
    ambiguous = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        old_string="tea",
        new_string="water",
    )
    no_change = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        old_string="tea",
        new_string="tea",
    )
    assert no_match.status is Status.NO_MATCH and no_match.details["near_miss"]["line"] == 1
    assert ambiguous.status is Status.AMBIGUOUS and ambiguous.details["count"] == 2
    assert no_change.status is Status.NO_CHANGE
    assert unchanged(memory, "tea in the morning, tea at night", 1)


def test_text_over_the_limit_is_invalid_not_truncated(agent, make, settings):
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "MAX_TEXT_LENGTH": {**settings.MEMORYADMIN["MAX_TEXT_LENGTH"], "memory": 50},
    }
    memory = make.memory(agent, content="short")
    result = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        old_string="short",
        new_string="x" * 51,
    )
    assert result.status is Status.INVALID and result.details["limit"] == 50
    assert unchanged(memory, "short", 1)


def test_batch_of_edits_is_all_or_nothing(agent, make):
    from stores.editing import PhraseEdit

    memory = make.memory(agent, content="red green blue")
    refused = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        edits=[PhraseEdit("red", "crimson"), PhraseEdit("purple", "violet")],
    )
    assert refused.status is Status.NO_MATCH
    assert unchanged(memory, "red green blue", 1)
    applied = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        edits=[PhraseEdit("red", "crimson"), PhraseEdit("blue", "navy")],
    )
    assert applied.ok and applied.version == 2
    assert unchanged(memory, "crimson green navy", 2)


def test_records_resolve_by_alias(agent, make):
    memory = make.memory(agent, content="Imported.", alias="6f1c2a9e-guid")
    result = record_edit(
        surface_key="memory",
        agent=agent,
        ref="6f1c2a9e-guid",
        actor=ME,
        old_string="Imported",
        new_string="Imported and corrected",
    )
    assert result.ok and result.id == memory.pk


GARDEN = " ".join(
    f"Note {i}: the balcony tomatoes in Lisbon need water every evening in July." for i in range(30)
)[:2000]


def recall_preview_with_an_addition(text: str) -> str:
    """What an agent sends when it takes a recall preview for the text: cut, '…' dropped."""
    from stores.selectors.records import preview

    return preview(text)["preview"].removesuffix("…") + " Also water the ferns."


def test_an_edited_recall_preview_is_suspected_truncation_even_with_the_proof(agent, make):
    # The second line, behind the proof of a full read: a caller who read in full may still
    # send a preview back.
    memory = make.memory(agent, content=GARDEN)
    replacement = recall_preview_with_an_addition(GARDEN)
    assert (len(GARDEN), len(replacement)) == (2000, 521)
    replaced = record_replace(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        text=replacement,
        expected_version=1,
        expected_sha256=text_sha256(GARDEN),
    )
    assert replaced.status is Status.SUSPECTED_TRUNCATION
    assert (replaced.details["current_length"], replaced.details["new_length"]) == (2000, 521)
    for way in (f"GET /api/v1/memories/{memory.pk}/", f"memory://{memory.pk}", "read_record"):
        assert way in replaced.message
    assert "allow_shorter" in replaced.message
    updated = record_update(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        changes={"content": replacement},
        expected_version=1,
        expected_sha256=text_sha256(GARDEN),
    )
    assert updated.status is Status.SUSPECTED_TRUNCATION
    assert unchanged(memory, GARDEN, 1)


def test_allow_shorter_says_the_caller_means_to_shorten(agent, make):
    memory = make.memory(agent, content=GARDEN)
    replacement = recall_preview_with_an_addition(GARDEN)
    replaced = record_replace(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        text=replacement,
        expected_version=1,
        expected_sha256=text_sha256(GARDEN),
        allow_shorter=True,
    )
    assert replaced.status is Status.UPDATED
    assert unchanged(memory, replacement, 2)
    updated = record_update(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        changes={"content": replacement[:100]},
        expected_version=2,
        expected_sha256=text_sha256(replacement),
        allow_shorter=True,
    )
    assert updated.status is Status.UPDATED
    assert unchanged(memory, replacement[:100], 3)


def test_a_short_memory_rewritten_whole_or_shortened_in_place_is_replaced(agent, make):
    memory = make.memory(agent, content=LONG)
    for version, text in enumerate(
        (
            "The user is allergic to peanuts; carries an epinephrine pen at all times.",
            "No known allergies.",
        ),
        start=1,
    ):
        result = record_replace(
            surface_key="memory",
            agent=agent,
            ref=memory.pk,
            actor=ME,
            text=text,
            expected_version=version,
        )
        assert result.status is Status.UPDATED
        assert unchanged(memory, text, version + 1)
