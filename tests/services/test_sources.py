"""A write's source through the shell's services: kept on the revision, or refused whole."""

from __future__ import annotations

import pytest

from stores.editing import Status
from stores.models import Revision
from stores.services import Actor, record_create, record_edit
from stores.services.sources import Source, parse_source_header

pytestmark = pytest.mark.django_db

ME = Actor.maintainer("tests")


def test_every_service_takes_a_source(agent, make):
    memory = make.memory(agent, "Likes tea.")

    result = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        old_string="tea",
        new_string="coffee",
        source={"conversation": "c-1", "excerpt": "I said:\n  coffee, please"},
    )

    assert result.ok, result
    revision = Revision.objects.get(pk=result.revision)
    assert revision.source == {"conversation": "c-1", "excerpt": "I said:\n  coffee, please"}
    assert (revision.actor, revision.channel) == ("shell:tests", "shell")


def test_a_malformed_source_is_refused_and_nothing_written(agent):
    result = record_create(
        surface_key="memory",
        agent=agent,
        actor=ME,
        values={"content": "Likes tea."},
        source={"url": "file:///etc/passwd"},
    )

    assert (result.status, "source.url" in result.message) == (Status.INVALID, True)
    assert not Revision.objects.exists()


def test_an_actors_session_source_is_kept_and_a_writes_own_parts_win(agent):
    session = ME.with_source(parse_source_header("conversation=c-1; platform=slack"))

    result = record_create(
        surface_key="memory",
        agent=agent,
        actor=session,
        values={"content": "Likes tea."},
        source={"message": "m-9", "platform": "discord"},
    )

    assert Revision.objects.get(pk=result.revision).source == {
        "conversation": "c-1",
        "message": "m-9",
        "platform": "discord",
    }
    assert session.source == Source(conversation="c-1", platform="slack")
