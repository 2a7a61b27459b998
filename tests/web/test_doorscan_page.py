"""The scan at the door from the browser: a person's write refused and stored anyway by their
override, the policies on the review page (staff's to set), a held write masked in the queue."""

from __future__ import annotations

import pytest
from django.urls import reverse

from stores.engine.actors import Actor
from stores.models import Agent, AgentAccess, Memory, Revision, ScanOverride, ScanPolicy
from stores.services import record_create
from tests.factories import UserFactory, agent_token
from tests.web.conftest import htmx

pytestmark = pytest.mark.django_db

SECRET = "AKIA" + "R4T7Y2U9I1O3P5L8"


def url(name, *args):
    return reverse(f"web:{name}", args=args)


def test_a_refused_create_is_shown_and_stored_by_the_persons_override(staff_client, agent):
    refused = staff_client.post(
        url("record_new", agent.name, "memory"), {"content": f"Old key {SECRET}."}
    )

    assert refused.status_code == 422
    body = refused.content.decode()
    assert 'data-status="sensitive_data"' in body
    assert "credentials (AWS Access Key)" in body
    assert 'name="store_despite_scan" value="1"' in body
    assert not Memory.objects.filter(agent=agent).exists()

    stored = staff_client.post(
        url("record_new", agent.name, "memory"),
        {
            "content": f"Old key {SECRET}.",
            "store_despite_scan": "1",
            "override_reason": "Revoked; kept for the incident report.",
        },
    )

    assert stored.status_code == 302
    memory = Memory.objects.get(agent=agent)
    assert memory.content == f"Old key {SECRET}."
    override = ScanOverride.objects.get()
    assert (override.record_id, override.reason) == (
        memory.pk,
        "Revoked; kept for the incident report.",
    )


def test_a_refused_edit_offers_the_override_in_place(staff_client, agent, make):
    memory = make.memory(agent, "Deploys on Fridays.")
    edit = url("record_op", agent.name, "memory", memory.pk, "edit")
    data = {"old_string": "on Fridays", "new_string": f"with {SECRET}", "expected_version": 1}

    refused = staff_client.post(edit, data, headers=htmx())

    assert refused.status_code == 422
    body = refused.content.decode()
    assert f'hx-post="{edit}"' in body and 'name="old_string" value="on Fridays"' in body

    stored = staff_client.post(
        edit, {**data, "store_despite_scan": "1", "override_reason": "test key"}, headers=htmx()
    )

    assert stored.status_code == 200
    memory.refresh_from_db()
    assert memory.content == f"Deploys with {SECRET}."
    assert ScanOverride.objects.get().revision_id == Revision.objects.latest("pk").pk


def test_staff_set_the_policies_on_the_review_page(staff_client, agent):
    page = staff_client.get(url("review", agent.name)).content.decode()
    assert "Secrets and personal data" in page
    assert '<option value="refuse" selected>' in page

    saved = staff_client.post(
        url("scan_policy", agent.name),
        {"credentials_policy": "hold", "personal_data_policy": "mask"},
        headers=htmx(),
    )

    assert saved.status_code == 200
    agent.refresh_from_db()
    assert (agent.credentials_policy, agent.personal_data_policy) == ("hold", "mask")


def test_an_editor_sees_the_policies_but_cannot_set_them(client, agent):
    editor = UserFactory()
    AgentAccess.objects.create(user=editor, agent=agent, role=AgentAccess.Role.EDITOR)
    client.force_login(editor)

    page = client.get(url("review", agent.name)).content.decode()
    refused = client.post(
        url("scan_policy", agent.name),
        {"credentials_policy": "allow", "personal_data_policy": "allow"},
        headers=htmx(),
    )

    assert "Staff set these." in page
    assert refused.status_code == 403
    assert Agent.objects.get(pk=agent.pk).credentials_policy == "refuse"


def test_a_held_write_is_masked_in_the_review_queue(staff_client, agent):
    Agent.objects.filter(pk=agent.pk).update(credentials_policy=ScanPolicy.HOLD)
    agent.refresh_from_db()
    held = record_create(
        surface_key="memory",
        agent=agent,
        actor=Actor.for_token(agent_token(agent)[0]),
        values={"content": f"The key is {SECRET} for now."},
    )
    assert held.details["review"] == "pending"

    page = staff_client.get(url("review", agent.name)).content.decode()

    assert SECRET not in page
    assert "[masked AWS Access Key]" in page
    assert "Masked on this page: AWS Access Key" in page
