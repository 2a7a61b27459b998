"""check_integrity finds what bypassed the edit service, and reports the passes' backlog."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from stores.engine.actors import Actor
from stores.models import Memory, WorkingMemoryEntry
from stores.selectors.integrity import check_integrity
from stores.services import memory_invalidate, record_edit
from stores.services.embeddings import reembed_sweep


def counts(findings) -> dict[str, int]:
    return {finding.check: finding.count for finding in findings if finding.count}


def test_a_consistent_store_has_no_problems(agent, make, capsys):
    first = make.memory(agent, "Old fact.")
    second = make.memory(agent, "New fact.")
    memory_invalidate(
        agent=agent, ref=first.pk, actor=Actor.maintainer("tests"), replacement_ref=second.pk
    )
    make.skill(agent)
    reembed_sweep()

    report = check_integrity()

    assert report.ok
    assert counts(report.backlog) == {}
    call_command("check_integrity")
    assert "No integrity problems." in capsys.readouterr().out


def test_writes_around_the_service_and_backlog_are_reported(agent, other_agent, make, capsys):
    memory = make.memory(agent, "Fact.")
    foreign = make.memory(other_agent, "Someone else's fact.")
    entry = make.working(agent)
    # What a raw SQL fix or a bug would leave behind:
    Memory.objects.filter(pk=memory.pk).update(version=7, superseded_by=foreign)
    WorkingMemoryEntry.objects.filter(pk=entry.pk).update(
        expires_at=timezone.now() - dt.timedelta(minutes=1)
    )

    report = check_integrity()

    assert not report.ok
    assert counts(report.problems) == {
        "memory superseded by another agent's memory": 1,
        "memory superseded but not invalidated": 1,
        "memory: version differs from its revision history": 1,
    }
    assert counts(report.backlog) == {
        "memory: stale vectors": 2,
        "working: stale vectors": 1,
        "working: expired entries not purged yet": 1,
    }
    with pytest.raises(CommandError, match="3 integrity problems"):
        call_command("check_integrity")
    out = capsys.readouterr().out
    assert f"{memory.pk}: version 7, history says 1" in out


def test_the_vector_counts_add_up(agent, make, capsys):
    edited = make.memory(agent, "The user drinks tea.")
    make.memory(agent, "The user walks the dog.")
    reembed_sweep()
    record_edit(
        surface_key="memory",
        agent=agent,
        ref=edited.pk,
        actor=Actor.maintainer("tests"),
        old_string="tea",
        new_string="coffee",
    )
    make.memory(agent, "The user sings.")  # no vector yet

    call_command("check_integrity")

    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("memory:"))
    assert line.startswith("memory: 1/3 vectors fresh, 1 missing, 1 outdated"), line
