"""The Django admin writes agents' settings, subjects and grants through their services,
and only revokes tokens."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memoryadmin.web.rendering import BIDI_CONTROLS, name_controls
from stores.models import Agent, AgentAccess, AgentToken, Subject
from tests.factories import RecordMaker, SubjectFactory, UserFactory, agent_token


@pytest.fixture
def admin_client(client, db):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


def traced(caplog) -> list[tuple[str, str]]:
    return [(r.op, r.status) for r in caplog.records if r.name == "memoryadmin.administration"]


def change_url(obj) -> str:
    return reverse(f"admin:stores_{obj._meta.model_name}_change", args=[obj.pk])


def test_switching_self_editing_off_goes_through_the_service(admin_client, agent, caplog):
    caplog.set_level("INFO", logger="memoryadmin.administration")
    form = {
        "display_name": "Rock",
        "description": "",
        "review_mode": "none",
        "credentials_policy": "hold",
        "personal_data_policy": "allow",
    }  # box unticked

    response = admin_client.post(change_url(agent), form)

    assert response.status_code == 302
    agent.refresh_from_db()
    assert (agent.self_editing_enabled, agent.display_name) == (False, "Rock")
    assert agent.credentials_policy == "hold"
    assert traced(caplog) == [("agent_update", "updated")]


def test_an_agent_is_added_through_the_service_and_never_deleted_here(admin_client, agent, caplog):
    caplog.set_level("INFO", logger="memoryadmin.administration")
    add = reverse("admin:stores_agent_add")
    assert admin_client.get(add).status_code == 200
    form = {
        "name": "homebot",
        "display_name": "",
        "description": "",
        "review_mode": "none",
        "credentials_policy": "refuse",
        "personal_data_policy": "allow",
    }

    assert admin_client.post(add, form).status_code == 302

    added = Agent.objects.get(name="homebot")
    assert (added.display_name, added.self_editing_enabled) == ("homebot", False)
    assert traced(caplog) == [("agent_create", "created")]
    delete = reverse("admin:stores_agent_delete", args=[agent.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert Agent.objects.filter(pk=agent.pk).exists()


def test_a_refused_admin_page_is_the_apps_own(client, agent):
    client.force_login(UserFactory(is_staff=True))  # staff, without the admin's permissions

    answer = client.get(reverse("admin:stores_agent_add"))

    assert answer.status_code == 403
    body = answer.content.decode()
    assert "<h1>Not allowed</h1>" in body
    assert "/static/web/app.css" in body  # styled as every page of the app


def test_a_subject_is_added_and_changed_through_the_services(admin_client, agent, caplog):
    caplog.set_level("INFO", logger="memoryadmin.administration")
    form = {
        "agent": agent.pk,
        "display_name": "Ann",
        "external_id": "ann",
        "aliases": "[]",
        "privacy_level": "none",
        "kind": "person",
    }

    assert admin_client.post(reverse("admin:stores_subject_add"), form).status_code == 302
    subject = Subject.objects.get(agent=agent, external_id="ann")
    changed = admin_client.post(change_url(subject), {**form, "privacy_level": "full"})

    assert changed.status_code == 302
    subject.refresh_from_db()
    assert subject.privacy_level == "full"
    assert traced(caplog) == [
        ("subject_create", "created"),
        ("subject_update", "updated"),
    ]


def test_subjects_are_not_deleted_here(admin_client, agent):
    subject = SubjectFactory(agent=agent)
    delete = reverse("admin:stores_subject_delete", args=[subject.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert Subject.objects.filter(pk=subject.pk).exists()


def test_grants_are_given_and_withdrawn_through_the_services(admin_client, agent, caplog):
    caplog.set_level("INFO", logger="memoryadmin.administration")
    person = UserFactory()
    form = {"user": person.pk, "agent": agent.pk, "role": "viewer"}

    assert admin_client.post(reverse("admin:stores_agentaccess_add"), form).status_code == 302
    access = AgentAccess.objects.get(user=person, agent=agent)
    assert admin_client.post(change_url(access), {"role": "editor"}).status_code == 302
    access.refresh_from_db()
    assert access.role == "editor"
    delete = reverse("admin:stores_agentaccess_delete", args=[access.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 302

    assert not AgentAccess.objects.filter(user=person).exists()
    assert traced(caplog) == [
        ("access_grant", "created"),
        ("access_grant", "updated"),
        ("access_revoke", "deleted"),
    ]


def test_tokens_are_read_only_but_can_be_revoked(admin_client, agent):
    token, _raw = agent_token(agent)
    assert admin_client.get(reverse("admin:stores_agenttoken_add")).status_code == 403
    assert admin_client.post(change_url(token), {"read_only": "on"}).status_code == 403

    revoked = admin_client.post(
        reverse("admin:stores_agenttoken_changelist"),
        {"action": "revoke", "_selected_action": [token.pk]},
    )

    assert revoked.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert AgentToken.objects.filter(pk=token.pk, read_only=False).exists()


def test_the_memory_page_shows_direction_controls_as_the_apps_marker(admin_client, agent):
    """Regression: U+202E reached the admin's page raw, reordering what the reviewer read."""
    memory = RecordMaker().memory(agent, "Pay the invoice to \u202egnp.exe\u202c today.")
    memory.alias = "alias\u2066x"
    memory.save(update_fields=["alias"])

    pages = [
        admin_client.get(change_url(memory)),
        admin_client.get(reverse("admin:stores_memory_changelist") + "?q=invoice"),
    ]

    for page in pages:
        html = page.content.decode()
        assert page.status_code == 200
        assert not BIDI_CONTROLS.search(html)
    shown = pages[0].content.decode()
    assert f"to {name_controls(chr(0x202E))}gnp.exe{name_controls(chr(0x202C))} today" in shown
    assert "⟨U+202E⟩" in shown
    assert "alias⟨U+2066⟩x" in shown
