"""Who may write: token scope, read-only tokens and viewers, the self-editing switch, privacy."""

from __future__ import annotations

from stores.editing import Status
from stores.engine.actors import Actor
from stores.models import AgentAccess, Revision, Subject
from stores.services import record_create, record_edit, record_forget
from tests.factories import SubjectFactory, UserFactory, agent_token


def edit(agent, ref, actor):
    return record_edit(
        surface_key="memory", agent=agent, ref=ref, actor=actor, old_string="tea", new_string="mate"
    )


def test_a_token_never_sees_another_agents_records(agent, other_agent, make):
    foreign = make.memory(other_agent)
    token, _ = agent_token(agent)
    actor = Actor.for_token(token)
    # Whether addressed through the other agent or its own, the record does not exist for it.
    assert edit(other_agent, foreign.pk, actor).status is Status.NOT_FOUND
    assert edit(agent, foreign.pk, actor).status is Status.NOT_FOUND
    absent = edit(agent, 999_999, actor)
    hidden = edit(agent, foreign.pk, actor)
    assert (absent.as_dict() | {"message": ""}) == (hidden.as_dict() | {"message": ""})
    assert hidden.message == absent.message.replace("999999", str(foreign.pk))


def test_read_only_tokens_and_viewers_are_forbidden(agent, make):
    memory = make.memory(agent)
    token, _ = agent_token(agent, read_only=True)
    assert edit(agent, memory.pk, Actor.for_token(token)).status is Status.FORBIDDEN
    viewer = UserFactory()
    AgentAccess.objects.create(user=viewer, agent=agent, role=AgentAccess.Role.VIEWER)
    assert edit(agent, memory.pk, Actor.for_user(viewer)).status is Status.FORBIDDEN
    editor = UserFactory()
    AgentAccess.objects.create(user=editor, agent=agent, role=AgentAccess.Role.EDITOR)
    assert edit(agent, memory.pk, Actor.for_user(editor)).status is Status.UPDATED


def test_users_without_a_grant_see_nothing(agent, make):
    memory = make.memory(agent)
    assert edit(agent, memory.pk, Actor.for_user(UserFactory())).status is Status.NOT_FOUND


def test_self_editing_switch_disables_agents_but_not_humans(agent, make):
    memory = make.memory(agent)
    agent.self_editing_enabled = False
    agent.save()
    token, _ = agent_token(agent)
    assert edit(agent, memory.pk, Actor.for_token(token)).status is Status.DISABLED
    created = record_create(
        surface_key="memory", agent=agent, actor=Actor.for_token(token), values={"content": "new"}
    )
    assert created.status is Status.DISABLED
    assert edit(agent, memory.pk, Actor.for_user(UserFactory(is_staff=True))).ok


def test_privacy_forbids_agent_updates_of_personal_memories_but_not_forgetting(agent, make):
    private = SubjectFactory(agent=agent, privacy_level=Subject.Privacy.PARTIAL)
    memory = make.memory(agent, subject=private)
    token, _ = agent_token(agent)
    actor = Actor.for_token(token)
    assert edit(agent, memory.pk, actor).status is Status.PRIVACY_RESTRICTED
    assert edit(agent, memory.pk, Actor.for_user(UserFactory(is_staff=True))).ok
    forgotten = record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=actor)
    assert forgotten.status is Status.DELETED


def test_results_name_the_bank(agent, make):
    person = SubjectFactory(agent=agent, external_id="discord-42")
    personal = make.memory(agent, subject=person)
    shared = make.memory(agent, content="Server rules: be nice to tea drinkers.")
    assert edit(agent, personal.pk, Actor.maintainer()).bank == "subject:discord-42"
    assert edit(agent, shared.pk, Actor.maintainer()).bank == "shared"


def test_agent_writes_await_review_when_the_agent_is_reviewed(agent, make):
    agent.review_mode = "all"
    agent.save()
    memory = make.memory(agent)
    token, _ = agent_token(agent)
    result = edit(agent, memory.pk, Actor.for_token(token))
    assert Revision.objects.get(pk=result.revision).review == Revision.Review.PENDING
    human = edit(agent, memory.pk, Actor.for_user(UserFactory(is_staff=True)))
    assert human.status is Status.NO_MATCH  # "tea" is gone: the agent's edit stands until reviewed
