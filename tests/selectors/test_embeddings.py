"""Staleness is visible: counts and lists per surface."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from stores.engine.actors import Actor
from stores.selectors.embeddings import embedding_status, stale_records
from stores.services import record_edit
from stores.services.embeddings import reembed_sweep


def status_of(surface: str, **kwargs):
    return next(status for status in embedding_status(**kwargs) if status.surface == surface)


def test_new_and_edited_records_are_stale_until_embedded(agent, make):
    first = make.memory(agent, "The user drinks tea.")
    make.memory(agent, "The user walks the dog.")
    assert status_of("memory").stale == 2 and status_of("memory").missing == 2

    reembed_sweep()
    assert (status_of("memory").total, status_of("memory").stale) == (2, 0)

    record_edit(
        surface_key="memory",
        agent=agent,
        ref=first.pk,
        actor=Actor.maintainer("tests"),
        old_string="tea",
        new_string="coffee",
    )
    memory_status = status_of("memory")
    assert (memory_status.stale, memory_status.missing, memory_status.fresh) == (1, 0, 1)
    assert [record.pk for record in stale_records("memory")] == [first.pk]


def test_switching_models_marks_every_vector_stale(agent, make, settings):
    make.memory(agent)
    make.working(agent)
    make.skill(agent, summary="How to deploy")
    reembed_sweep()
    assert all(status.stale == 0 for status in embedding_status())

    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "EMBEDDINGS": {
            "BACKEND": "stores.embeddings.fake.FakeBackend",
            "OPTIONS": {"model_name": "fake/another-model"},
        },
    }

    statuses = {status.surface: status for status in embedding_status()}
    assert {key: (s.total, s.stale) for key, s in statuses.items()} == {
        "memory": (1, 1),
        "working": (1, 1),
        "skill": (1, 1),
        "task": (0, 0),
        "file": (0, 0),
    }
    assert statuses["memory"].model_name == "fake/another-model"
    assert reembed_sweep()["memory"].stored == 1
    assert status_of("memory").stale == 0


def test_counts_can_be_limited_to_one_agent(agent, other_agent, make):
    make.memory(agent)
    make.memory(other_agent)
    make.memory(other_agent, "Another.")

    assert status_of("memory", agent=agent).total == 1
    assert [record.agent_id for record in stale_records("memory", agent=agent)] == [agent.pk]


def test_reembed_command(agent, other_agent, make, capsys):
    make.memory(agent)
    make.memory(other_agent)

    call_command("reembed", "--surface", "memory", "--agent", agent.name)
    out = capsys.readouterr().out
    assert "memory: 1 stored" in out
    assert "memory: 1/1 fresh, 0 stale" in out
    assert status_of("memory").stale == 1  # the other agent's record was left alone

    call_command("reembed", "--all", "--surface", "memory")
    assert "memory: 2 stored" in capsys.readouterr().out

    with pytest.raises(CommandError, match=r"No agent 'nobody' \(agents: "):
        call_command("reembed", "--agent", "nobody")
