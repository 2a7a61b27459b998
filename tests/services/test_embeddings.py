"""Keeping vectors fresh: enqueue on commit, compare-and-swap on the text, the sweep."""

from __future__ import annotations

import pytest
from kombu.exceptions import OperationalError

from stores import tasks
from stores.embeddings.fake import FakeBackend
from stores.engine.actors import Actor
from stores.models import Memory, Skill
from stores.selectors.embeddings import embedding_status
from stores.services import record_edit, skill_replace_section
from stores.services.embeddings import reembed, reembed_sweep
from stores.surfaces import SURFACES

MAINTAINER = Actor.maintainer("tests")


@pytest.fixture
def enqueued(monkeypatch):
    """Every re-embed the service asks for, still run (eagerly) as it would be."""
    calls: list[tuple[str, list[int]]] = []
    original = tasks.reembed_records.delay

    def spy(surface_key, record_ids):
        calls.append((surface_key, list(record_ids)))
        return original(surface_key, record_ids)

    monkeypatch.setattr(tasks.reembed_records, "delay", spy)
    return calls


def fresh(record) -> bool:
    record.refresh_from_db()
    return record.embedding is not None and record.embedding_hash == record.text_hash


def test_an_edit_enqueues_exactly_one_reembed_after_commit(
    agent, make, enqueued, django_capture_on_commit_callbacks
):
    memory = make.memory(agent, "The user drinks tea.")
    enqueued.clear()

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        result = record_edit(
            surface_key="memory",
            agent=agent,
            ref=memory.pk,
            actor=MAINTAINER,
            old_string="tea",
            new_string="green tea",
        )
        assert enqueued == []  # nothing is sent before the edit commits

    assert result.ok
    assert len(callbacks) == 1
    assert enqueued == [("memory", [memory.pk])]
    assert fresh(memory)


def test_a_skill_body_edit_does_not_reembed(
    agent, make, enqueued, django_capture_on_commit_callbacks
):
    skill = make.skill(agent, content="# Deploy\n\n## Steps\nRun it.\n", summary="How to deploy")
    enqueued.clear()

    with django_capture_on_commit_callbacks(execute=True):
        result = skill_replace_section(
            agent=agent, ref=skill.pk, actor=MAINTAINER, heading="Steps", content="Run it twice.\n"
        )

    assert result.ok, result
    assert enqueued == []


def test_a_skill_summary_edit_reembeds(agent, make, enqueued, django_capture_on_commit_callbacks):
    skill = make.skill(agent, summary="How to deploy")
    enqueued.clear()

    with django_capture_on_commit_callbacks(execute=True):
        record_edit(
            surface_key="skill",
            agent=agent,
            ref=skill.pk,
            actor=MAINTAINER,
            field="summary",
            old_string="deploy",
            new_string="ship",
        )

    assert enqueued == [("skill", [skill.pk])]


class EditingWhileEmbedding(FakeBackend):
    """A backend during whose work an agent edits the record: the edit lands mid-embed."""

    edit = None

    def embed_documents(self, texts):
        vectors = super().embed_documents(texts)
        type(self).edit()
        return vectors


def test_a_reembed_racing_a_newer_edit_stores_nothing_stale(agent, make, settings):
    memory = make.memory(agent, "The user drinks tea.")
    EditingWhileEmbedding.edit = lambda: record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=MAINTAINER,
        old_string="tea",
        new_string="coffee",
    )
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "EMBEDDINGS": {
            "BACKEND": f"{__name__}.EditingWhileEmbedding",
            "OPTIONS": {"model_name": FakeBackend.model_name},
        },
    }

    outcome = reembed("memory", [memory.pk])

    memory.refresh_from_db()
    assert memory.content == "The user drinks coffee."
    assert outcome.stored == 0 and outcome.skipped_changed == 1
    assert memory.embedding is None and memory.embedding_hash == ""


def test_reembed_skips_fresh_records_and_ignores_gone_ones(agent, make):
    memory = make.memory(agent)
    assert reembed("memory", [memory.pk]).stored == 1

    again = reembed("memory", [memory.pk, 999_999])

    assert again.stored == 0
    assert reembed("memory", [memory.pk], force=True).stored == 1


def test_the_sweep_heals_vectors_left_stale_by_a_broker_outage(
    agent, make, monkeypatch, django_capture_on_commit_callbacks
):
    def broker_down(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(tasks.reembed_records, "delay", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        memories = [make.memory(agent, f"Fact number {n} about the patrol.") for n in range(5)]
        entry = make.working(agent)
    assert all(not fresh(record) for record in [*memories, entry])  # the edits still stand

    outcomes = reembed_sweep(batch_size=2)

    assert outcomes["memory"].stored == 5
    assert outcomes["working"].stored == 1
    assert all(fresh(record) for record in [*memories, entry])
    assert all(status.stale == 0 for status in embedding_status())
    assert reembed_sweep()["memory"].stored == 0  # idempotent


def test_the_sweep_task_reports_per_surface(agent, make):
    make.memory(agent)

    result = tasks.sweep_stale_embeddings.delay().get()

    assert result["memory"]["stored"] == 1
    assert set(result) == {key for key, spec in SURFACES.items() if spec.embedded}
    assert Memory.objects.get().embedding_model == FakeBackend.model_name
    assert Skill.objects.count() == 0
