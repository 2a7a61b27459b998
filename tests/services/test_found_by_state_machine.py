"""Defects the edit-service state machine found, each pinned by the smallest case that shows it."""

from __future__ import annotations

from django.contrib.auth.models import Permission

from stores.editing import Status
from stores.engine.actors import Actor
from stores.models import AgentAccess, Memory, Revision, Skill
from stores.services import record_edit, record_forget, record_revert, record_update
from tests.factories import UserFactory

ME = Actor.maintainer("tests")


def revisions_of(surface: str, record_id: int) -> list[tuple[int, str]]:
    return list(
        Revision.objects.filter(surface=surface, record_id=record_id)
        .order_by("version_after")
        .values_list("version_after", "op")
    )


def test_renaming_onto_another_records_name_is_refused_not_a_crash(agent, make):
    make.skill(agent, name="deploy")
    patrol = make.skill(agent, name="patrol")

    result = record_update(
        surface_key="skill",
        agent=agent,
        ref=patrol.pk,
        actor=ME,
        changes={"name": "deploy"},
        expected_version=1,
    )

    assert result.status == Status.CONFLICT
    assert "already has that name" in result.message
    patrol.refresh_from_db()
    assert (patrol.name, patrol.version) == ("patrol", 1)
    assert revisions_of("skill", patrol.pk) == [(1, "create")]


def test_restoring_a_forgotten_record_checks_the_version_the_caller_read(agent, make):
    memory = make.memory(agent, content="The user likes tea.")
    created = Revision.objects.get(surface="memory", record_id=memory.pk)
    assert record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=ME).ok

    stale = record_revert(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        revision_id=created.pk,
        expected_version=1,
    )
    assert stale.status == Status.CONFLICT
    assert stale.details["current_version"] == 2
    assert not Memory.objects.filter(pk=memory.pk).exists()

    restored = record_revert(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        revision_id=created.pk,
        expected_version=2,
    )
    assert restored.status == Status.REVERTED
    assert restored.version == 3


def test_restoring_a_record_whose_name_was_taken_meanwhile_is_refused(agent, make):
    first = make.skill(agent, name="deploy")
    created = Revision.objects.get(surface="skill", record_id=first.pk)
    assert record_forget(surface_key="skill", agent=agent, ref=first.pk, actor=ME).ok
    make.skill(agent, name="deploy")

    result = record_revert(
        surface_key="skill", agent=agent, ref=first.pk, actor=ME, revision_id=created.pk
    )

    assert result.status == Status.INVALID
    assert not Skill.objects.filter(pk=first.pk).exists()
    assert revisions_of("skill", first.pk) == [(1, "create"), (2, "forget")]


def test_the_store_rules_permission_can_be_granted_to_a_human(agent, make):
    fact = make.memory(agent, content="Paris is in France.", store="fact")
    reviewer = UserFactory()
    AgentAccess.objects.create(user=reviewer, agent=agent, role="editor")

    def edit(user):
        return record_edit(
            surface_key="memory",
            agent=agent,
            ref=fact.pk,
            actor=Actor.for_user(user),
            old_string="Paris",
            new_string="Lyon" if user.has_perm("stores.bypass_store_rules") else "Nice",
        )

    assert edit(reviewer).status == Status.NOT_EDITABLE
    reviewer.user_permissions.add(Permission.objects.get(codename="bypass_store_rules"))
    reviewer = type(reviewer).objects.get(pk=reviewer.pk)  # permissions are cached per instance
    assert edit(reviewer).status == Status.UPDATED
    fact.refresh_from_db()
    assert fact.content == "Lyon is in France."
