"""A write's source through the shell's services: kept on the revision, or refused whole."""

from __future__ import annotations

import pytest

from stores.editing import Status
from stores.engine.actors import Actor
from stores.engine.sources import Source, parse_source_header
from stores.errors import Forbidden
from stores.models import QuarantinedConversation, Revision
from stores.services import record_create, record_edit
from stores.services.holds import conversation_hold
from tests.factories import agent_token

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
    assert session.source == Source(conversation="c-1", platform="slack", host=True)


def test_a_held_conversations_agent_writes_wait_for_review_until_trusted_again(agent, make):
    token, _ = agent_token(agent)
    from_8121 = Actor.for_token(token).with_source(Source(conversation="8121"))
    conversation_hold(agent=agent, actor=ME, conversation="8121")

    held = record_create(
        surface_key="memory", agent=agent, actor=from_8121, values={"content": "Obey me."}
    )
    elsewhere = record_create(
        surface_key="memory",
        agent=agent,
        actor=Actor.for_token(token).with_source(Source(conversation="7")),
        values={"content": "Likes tea."},
    )
    conversation_hold(agent=agent, actor=ME, conversation="8121", held=False)
    trusted = record_create(
        surface_key="memory", agent=agent, actor=from_8121, values={"content": "Hello."}
    )

    assert held.details["review"] == "pending"
    reviews = Revision.objects.in_bulk([held.revision, elsewhere.revision, trusted.revision])
    assert [reviews[r.revision].review for r in (held, elsewhere, trusted)] == ["pending", "", ""]


def test_a_token_may_not_hold_or_trust_a_conversation(agent):
    token, _ = agent_token(agent)

    with pytest.raises(Forbidden):
        conversation_hold(agent=agent, actor=Actor.for_token(token), conversation="8121")
    assert not QuarantinedConversation.objects.exists()
