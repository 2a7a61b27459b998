"""Tokens, subjects, grants and agent settings: each service checks its actor itself."""

from __future__ import annotations

import pytest

from stores.editing import Status
from stores.engine.actors import Actor
from stores.models import Agent, AgentAccess, AgentToken, Subject
from stores.services.agents import (
    access_grant,
    access_revoke,
    agent_create,
    agent_update,
    subject_create,
    subject_update,
    token_authenticate,
    token_create,
    token_revoke,
)
from stores.services.reviews import agent_set_review_mode
from tests.factories import UserFactory, agent_token


@pytest.fixture
def people(agent):
    editor, viewer = UserFactory(), UserFactory()
    AgentAccess.objects.create(user=editor, agent=agent, role=AgentAccess.Role.EDITOR)
    AgentAccess.objects.create(user=viewer, agent=agent, role=AgentAccess.Role.VIEWER)
    return {
        "editor": Actor.for_user(editor),
        "viewer": Actor.for_user(viewer),
        "stranger": Actor.for_user(UserFactory()),
        "staff": Actor.for_user(UserFactory(is_staff=True)),
        "agent": Actor.for_token(agent_token(agent)[0]),
    }


def test_staff_and_maintainers_create_agents(agent, people):
    made = agent_create(actor=people["staff"], name="Home Bot", description="Kitchen help.")

    assert made.status is Status.CREATED
    assert (made.record.name, made.record.display_name) == ("home-bot", "Home Bot")
    assert Agent.objects.get(pk=made.id).description == "Kitchen help."
    assert agent_create(actor=Actor.maintainer(), name="cron-bot").ok


@pytest.mark.parametrize("who", ["editor", "viewer", "stranger", "agent"])
def test_nobody_else_creates_an_agent(agent, people, who):
    result = agent_create(actor=people[who], name="sneaky")

    assert result.status is Status.FORBIDDEN
    assert not Agent.objects.filter(name="sneaky").exists()


@pytest.mark.parametrize(
    ("name", "extra", "words"),
    [
        ("!!!", {}, "name: '!!!' is not a usable agent name"),
        ("RockBot", {}, "name: Agent with this Name already exists."),
        ("new-bot", {"review_mode": "sometimes"}, "review_mode: Value 'sometimes'"),
        ("new-bot", {"token": "x"}, "Cannot set token"),
    ],
)
def test_an_agent_that_cannot_be_created_says_which_field(agent, people, name, extra, words):
    agent.name = "rockbot"
    agent.save()

    result = agent_create(actor=people["staff"], name=name, **extra)

    assert result.status is Status.INVALID
    assert words in result.message
    assert Agent.objects.count() == 1


def test_staff_and_editors_create_tokens_and_the_secret_is_given_once(agent, people):
    result = token_create(actor=people["editor"], agent=agent, name="laptop")

    assert result.status is Status.CREATED
    assert token_authenticate(result.details["token"]) == result.record
    assert result.record.created_by == people["editor"].user
    assert token_create(actor=people["staff"], agent=agent, name="ci").ok


@pytest.mark.parametrize(
    ("who", "status"),
    [("viewer", Status.FORBIDDEN), ("agent", Status.FORBIDDEN), ("stranger", Status.NOT_FOUND)],
)
def test_viewers_agents_and_strangers_create_no_token(agent, people, who, status):
    before = AgentToken.objects.count()

    result = token_create(actor=people[who], agent=agent, name="mine")

    assert result.status is status
    assert "token" not in result.details
    assert AgentToken.objects.count() == before


def test_revoking_needs_an_editor_and_says_when_it_was_already_done(agent, people):
    token, raw = agent_token(agent)

    assert token_revoke(actor=people["viewer"], token=token).status is Status.FORBIDDEN
    assert token_revoke(actor=people["agent"], token=token).status is Status.FORBIDDEN
    assert token_authenticate(raw) == token
    assert token_revoke(actor=people["editor"], token=token).status is Status.INVALIDATED
    assert token_authenticate(raw) is None
    assert token_revoke(actor=people["editor"], token=token).status is Status.NO_CHANGE


def test_subjects_are_added_by_editors_and_validated(agent, people):
    refused = subject_create(actor=people["viewer"], agent=agent, display_name="A", external_id="a")
    assert refused.status is Status.FORBIDDEN

    created = subject_create(actor=people["editor"], agent=agent, display_name="A", external_id="a")
    assert created.status is Status.CREATED
    assert created.record.agent == agent

    again = subject_create(actor=people["editor"], agent=agent, display_name="B", external_id="a")
    assert again.status is Status.INVALID
    assert Subject.objects.filter(agent=agent).count() == 1


def test_a_subjects_privacy_is_raised_by_an_editor_not_by_the_agent(agent, people):
    subject = subject_create(
        actor=Actor.maintainer(), agent=agent, display_name="Ann", external_id="ann"
    ).record
    full = {"privacy_level": Subject.Privacy.FULL}

    assert subject_update(actor=people["agent"], subject=subject, values=full).status is (
        Status.FORBIDDEN
    )
    assert subject_update(actor=people["editor"], subject=subject, values=full).ok
    assert Subject.objects.get(pk=subject.pk).privacy_level == Subject.Privacy.FULL
    assert subject_update(actor=people["editor"], subject=subject, values=full).status is (
        Status.NO_CHANGE
    )
    unknown = subject_update(actor=people["editor"], subject=subject, values={"agent": None})
    assert unknown.status is Status.INVALID


def test_an_agent_cannot_lift_its_own_limits(agent, people):
    agent.self_editing_enabled = False
    agent.save()

    lifted = agent_update(actor=people["agent"], agent=agent, values={"self_editing_enabled": True})
    mode = agent_set_review_mode(agent=agent, actor=people["agent"], review_mode="none")

    assert (lifted.status, mode.status) == (Status.FORBIDDEN, Status.FORBIDDEN)
    agent.refresh_from_db()
    assert agent.self_editing_enabled is False


def test_editors_change_an_agents_settings(agent, people):
    switched = agent_update(
        actor=people["editor"], agent=agent, values={"self_editing_enabled": False}
    )

    assert switched.status is Status.UPDATED
    agent.refresh_from_db()
    assert agent.self_editing_enabled is False
    assert agent_update(actor=people["viewer"], agent=agent, values={}).status is Status.FORBIDDEN
    assert agent_update(actor=people["editor"], agent=agent, values={"name": "x"}).status is (
        Status.INVALID
    )


def test_only_staff_say_who_sees_an_agent(agent, people):
    newcomer = UserFactory()

    refused = access_grant(actor=people["editor"], agent=agent, user=newcomer)
    granted = access_grant(actor=people["staff"], agent=agent, user=newcomer, role="viewer")
    changed = access_grant(actor=people["staff"], agent=agent, user=newcomer, role="editor")

    assert (refused.status, granted.status, changed.status) == (
        Status.FORBIDDEN,
        Status.CREATED,
        Status.UPDATED,
    )
    access = AgentAccess.objects.get(user=newcomer, agent=agent)
    assert access.role == "editor"
    assert access_revoke(actor=people["editor"], access=access).status is Status.FORBIDDEN
    assert access_revoke(actor=Actor.maintainer(), access=access).status is Status.DELETED
    assert not AgentAccess.objects.filter(user=newcomer).exists()


def test_administration_leaves_a_log_line_naming_the_actor_but_never_the_secret(
    agent, people, caplog
):
    caplog.set_level("INFO", logger="memoryadmin.administration")

    token_create(actor=people["viewer"], agent=agent, name="x")
    secret = token_create(actor=people["editor"], agent=agent, name="y").details["token"]

    lines = [(r.op, r.status, r.actor) for r in caplog.records]
    assert lines == [
        ("token_create", "forbidden", people["viewer"].label),
        ("token_create", "created", people["editor"].label),
    ]
    assert secret not in caplog.text
