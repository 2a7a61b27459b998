"""The suggestion pass and settling: found after a write, never twice, stale when a record
moves, accepted through the ops (or refused with nothing written), dismissed for good."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.management import call_command

from stores import tasks
from stores.editing import Status
from stores.engine.actors import Actor
from stores.models import Agent, Memory, Revision, Suggestion
from stores.services import record_edit
from stores.services.suggestions import (
    suggest_for_agent,
    suggestion_accept,
    suggestion_create,
    suggestion_dismiss,
    suggestion_propose,
)
from tests.factories import AgentFactory, agent_token

ME = Actor.maintainer("tests")
PAIRS = Path(__file__).parent.parent / "fixtures" / "suggestions" / "pairs.json"


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Writes whose after-commit work runs (the pass after a write among it), as in a
    request; a test's transaction never commits otherwise."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def remember(agent, make, committed):
    def memory(content: str, **values) -> Memory:
        with committed():
            return make.memory(agent, content=content, **values)

    return memory


def edited(agent: Agent, memory: Memory, committed, old: str, new: str) -> None:
    with committed():
        result = record_edit(
            surface_key="memory", agent=agent, ref=memory.pk, actor=ME,
            old_string=old, new_string=new,
        )  # fmt: skip
    assert result.ok, result


def open_of(agent: Agent, kind: str | None = None):
    found = Suggestion.objects.filter(agent=agent, status=Suggestion.State.OPEN)
    return found.filter(kind=kind) if kind else found


def pinned(suggestion: Suggestion) -> set[int]:
    return {record.memory_id for record in suggestion.records.all()}


def test_a_write_finds_its_conflict_after_commit(agent, remember, committed):
    paris = remember("The user lives in Paris.")
    lyon = remember("The user lives in Lyon.")
    found = open_of(agent).get()
    assert found.kind == Suggestion.Kind.CONFLICT
    assert pinned(found) == {paris.pk, lyon.pk}
    assert "'Paris' → 'Lyon'" in found.reason
    assert found.found_by == "pass:suggestions"


@pytest.fixture
def scheduled(monkeypatch):
    """The delayed passes the worker would send, held here instead of run (a test's Celery
    is eager, and runs a delayed task at once)."""
    sent: list[tuple[tuple, float]] = []
    monkeypatch.setattr(
        tasks.suggest_unless_written_again,
        "apply_async",
        lambda args, countdown: sent.append((args, countdown)),
    )
    cache.clear()
    yield sent
    cache.clear()


def test_a_burst_of_writes_of_a_memory_sends_one_delayed_pass(agent, make, scheduled):
    lyon = make.memory(agent, "The user lives in Lyon.")

    for _ in range(3):
        tasks.reembed_records("memory", [lyon.pk])

    assert scheduled == [(("memory", [(lyon.pk, lyon.text_hash)]), 1.0)]


def test_a_delayed_pass_waits_again_for_a_memory_written_again(agent, make, scheduled):
    make.memory(agent, "The user lives in Paris.")
    lyon = make.memory(agent, "The user lives in Lyon.")  # no commit: no pass has run

    tasks.suggest_unless_written_again("memory", [(lyon.pk, "the text before an edit")])
    assert not open_of(agent).exists()
    assert scheduled == [(("memory", [(lyon.pk, lyon.text_hash)]), 1.0)]

    tasks.suggest_unless_written_again(*scheduled[0][0])
    assert open_of(agent).get().kind == Suggestion.Kind.CONFLICT


def test_alike_but_compatible_memories_are_left_alone(agent, remember, committed):
    remember("The user's aunt lives in Dublin.")
    remember("The user's uncle lives in Dublin.")
    remember("The user likes tea.")
    remember("The user likes coffee.")
    assert not open_of(agent).exists()


def test_a_conflict_in_other_words_is_found_where_the_model_is_trusted(
    agent, remember, committed, settings
):
    # The bag-of-words vectors of the tests are trusted from any similarity for a negation,
    # as the embedded model is from 0.8 (settings SUGGEST_SIMILARITY).
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "SUGGEST_SIMILARITY": {"*": {"NEGATION": 0.0, "VALUE": 1.0, "REWORDED": 1.0, "SAME": 1.0}},
    }
    remember("I never eat breakfast.")
    remember("The user has porridge every morning.")
    found = open_of(agent).get()
    assert found.kind == Suggestion.Kind.CONFLICT
    assert "is said not to hold" in found.reason and "porridge" in found.reason


def test_an_untrusted_similarity_leaves_a_conflict_in_other_words_alone(
    agent, remember, committed, settings
):
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "SUGGEST_SIMILARITY": {"*": {"NEGATION": 1.0, "VALUE": 1.0, "REWORDED": 1.0, "SAME": 1.0}},
    }
    remember("I never eat breakfast.")
    remember("The user has porridge every morning.")
    assert not open_of(agent).exists()


def test_memories_of_different_subjects_are_never_paired(agent, remember, committed):
    from tests.factories import SubjectFactory

    remember("Lives in Paris.", subject=SubjectFactory(agent=agent))
    remember("Lives in Lyon.", subject=SubjectFactory(agent=agent))
    assert suggest_for_agent(agent) == Counter()
    assert not open_of(agent).exists()


def test_a_dismissed_pair_is_not_suggested_again_while_its_texts_stay(agent, remember, committed):
    first = remember("The user is 34 years old.")
    remember("The user is 41 years old.")
    suggestion = open_of(agent).get()
    dismissed = suggestion_dismiss(agent=agent, actor=ME, suggestion_id=suggestion.pk)
    assert dismissed.status == Status.UPDATED
    assert suggest_for_agent(agent) == Counter()
    assert not open_of(agent).exists()
    # A text that changes is a new pair to judge.
    edited(agent, first, committed, "34", "35")
    assert open_of(agent, "conflict").count() == 1


def test_a_suggestion_whose_record_moved_is_stale(agent, remember, committed):
    first = remember("Piano lessons are on Tuesday.")
    remember("Piano lessons are on Thursday.")
    suggestion = open_of(agent).get()
    edited(agent, first, committed, "Piano", "Guitar")
    suggestion.refresh_from_db()
    assert suggestion.status == Suggestion.State.STALE


def test_accept_on_moved_records_is_a_conflict_and_writes_nothing(agent, make, committed):
    first = make.memory(agent, content="The user's car is red.")
    second = make.memory(agent, content="The user's car is blue.")
    suggestion = suggestion_create(
        agent=agent, kind="conflict", memories=[first, second], reason="colour"
    )
    assert suggestion is not None
    edited(agent, second, committed, "car", "bike")
    revisions = Revision.objects.count()
    refused = suggestion_accept(agent=agent, actor=ME, suggestion_id=suggestion.pk, keep=first.pk)
    assert refused.status == Status.CONFLICT
    assert refused.details["records"] == [{"id": second.pk, "version": 1, "current_version": 2}]
    assert Revision.objects.count() == revisions
    first.refresh_from_db()
    assert first.invalidated_at is None


def test_accepting_a_duplicate_merges_into_the_kept_one(agent, remember, committed):
    older = remember("The user resides in Toronto.")
    newer = remember("The user lives in Toronto.")
    suggestion = open_of(agent, "duplicate").get()
    preview = suggestion_accept(
        agent=agent, actor=ME, suggestion_id=suggestion.pk, keep=newer.pk, dry_run=True
    )
    assert preview.ok and preview.details["dry_run"] is True
    older.refresh_from_db()
    assert older.superseded_by_id is None
    accepted = suggestion_accept(agent=agent, actor=ME, suggestion_id=suggestion.pk, keep=newer.pk)
    assert accepted.ok, accepted
    older.refresh_from_db()
    newer.refresh_from_db()
    assert older.superseded_by_id == newer.pk
    assert newer.reinforcement_count == 2
    suggestion.refresh_from_db()
    assert suggestion.status == Suggestion.State.ACCEPTED
    assert suggestion.settled_by == ME.label
    assert len(suggestion.revisions) == 2
    again = suggestion_accept(agent=agent, actor=ME, suggestion_id=suggestion.pk)
    assert again.status == Status.CONFLICT


def test_accepting_a_conflict_keeps_one_with_its_corrected_text(agent, remember, committed):
    paris = remember("The user lives in Paris.")
    lyon = remember("The user lives in Lyon.")
    suggestion = open_of(agent, "conflict").get()
    accepted = suggestion_accept(
        agent=agent, actor=ME, suggestion_id=suggestion.pk, keep=lyon.pk,
        content="The user lives in Lyon since 2025.",
    )  # fmt: skip
    assert accepted.ok, accepted
    paris.refresh_from_db()
    lyon.refresh_from_db()
    assert paris.superseded_by_id == lyon.pk and paris.content == "The user lives in Paris."
    assert lyon.content == "The user lives in Lyon since 2025."
    assert lyon.reinforcement_count == 1


def test_an_agent_proposes_a_merge_that_waits(agent, remember, committed):
    token, _secret = agent_token(agent)
    first = remember("Standup is at 9:30.")
    second = remember("The daily standup meeting starts 9:30.")
    actor = Actor.for_token(token)
    proposed = suggestion_propose(
        agent=agent, actor=actor, kind="merge", records=[first.pk, second.pk],
        content="The daily standup is at 9:30.", reason="same meeting",
    )  # fmt: skip
    assert proposed.status == Status.CREATED
    suggestion = Suggestion.objects.get(pk=proposed.details["suggestion"])
    assert suggestion.found_by == actor.label and suggestion.status == Suggestion.State.OPEN
    first.refresh_from_db()
    assert first.version == 1
    accepted = suggestion_accept(agent=agent, actor=ME, suggestion_id=suggestion.pk)
    assert accepted.ok, accepted
    first.refresh_from_db()
    assert first.content == "The daily standup is at 9:30."


def test_a_read_only_token_or_another_agent_cannot_settle(agent, remember, committed):
    remember("User has 2 cats.")
    remember("User has 3 cats.")
    suggestion = open_of(agent).get()
    reader = Actor.for_token(agent_token(agent, read_only=True)[0])
    refused = suggestion_dismiss(agent=agent, actor=reader, suggestion_id=suggestion.pk)
    assert refused.status == Status.FORBIDDEN
    stranger = Actor.for_token(agent_token(AgentFactory())[0])
    hidden = suggestion_dismiss(agent=agent, actor=stranger, suggestion_id=suggestion.pk)
    assert hidden.status == Status.NOT_FOUND
    suggestion.refresh_from_db()
    assert suggestion.status == Suggestion.State.OPEN


def test_an_agent_under_review_waits_for_a_person(agent, remember, committed):
    agent.review_mode = Agent.ReviewMode.ALL
    agent.save()
    remember("User has 2 cats.")
    remember("User has 3 cats.")
    suggestion = open_of(agent).get()
    writer = Actor.for_token(agent_token(agent)[0])
    refused = suggestion_accept(agent=agent, actor=writer, suggestion_id=suggestion.pk)
    assert refused.status == Status.FORBIDDEN


def test_the_command_prints_counts_per_kind(agent, make, capsys):
    make.memory(agent, content="The lease ends in October.")
    make.memory(agent, content="The lease ends in December.")
    make.memory(agent, content="The user lives in Berlin.")
    make.memory(agent, content="the user lives in berlin")
    call_command("suggest", "--agent", agent.name)
    out = capsys.readouterr().out
    assert "duplicate: 1 new" in out and "conflict: 1 new" in out


def test_the_labelled_set_meets_its_goals(db):
    """Each labelled pair in an agent of its own, found by the whole-agent pass."""
    pairs = json.loads(PAIRS.read_text("utf-8"))["pairs"]
    assert len(pairs) >= 60
    found: Counter[str] = Counter()
    right: Counter[str] = Counter()
    wrong = 0
    for number, pair in enumerate(pairs):
        agent = AgentFactory(name=f"pair-{number}")
        first = Memory.objects.get(pk=_create(agent, pair["first"]))
        second = Memory.objects.get(pk=_create(agent, pair["second"]))
        suggest_for_agent(agent)
        for suggestion in Suggestion.objects.filter(agent=agent):
            assert pinned(suggestion) == {first.pk, second.pk}
            if pair["label"] == "fine":
                wrong += 1
            else:
                found[pair["label"]] += 1
                right[pair["label"]] += suggestion.kind == pair["label"]
    labelled = Counter(pair["label"] for pair in pairs)
    assert found["duplicate"] / labelled["duplicate"] >= 0.9
    assert found["conflict"] / labelled["conflict"] >= 0.75
    assert sum(right.values()) / sum(found.values()) >= 0.8
    assert wrong <= 2 * len(pairs) / 15


def _create(agent: Agent, content: str) -> int:
    from stores.services import record_create

    result = record_create(surface_key="memory", agent=agent, actor=ME, values={"content": content})
    assert result.ok
    return result.id
