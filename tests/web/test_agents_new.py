"""A new administrator's way to a first agent: *New agent* on the home page for staff,
through `agent_create`, then the agent's tokens page to create its first token."""

from __future__ import annotations

import pytest
from django.urls import reverse

from stores.models import Agent
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_staff_with_no_agents_are_offered_the_first_one(staff_client):
    home = staff_client.get(reverse("web:agents")).content.decode()

    assert "No agents yet." in home
    assert f'href="{reverse("web:agent_new")}"' in home
    assert "Ask an administrator" not in home


def test_others_with_no_agents_are_told_whom_to_ask(client):
    client.force_login(UserFactory())

    home = client.get(reverse("web:agents")).content.decode()

    assert "Ask an administrator for access." in home
    assert reverse("web:agent_new") not in home
    refused = client.get(reverse("web:agent_new"))
    assert refused.status_code == 403
    assert "Only staff create agents." in refused.content.decode()


def test_a_new_agent_leads_to_its_first_token(staff_client):
    answer = staff_client.post(
        reverse("web:agent_new"), {"name": "RockBot", "description": "Home help."}, follow=True
    )

    agent = Agent.objects.get(name="rockbot")
    assert (agent.display_name, agent.description) == ("RockBot", "Home help.")
    assert answer.redirect_chain == [(reverse("web:tokens", args=["rockbot"]), 302)]
    page = answer.content.decode()
    assert "RockBot is ready. Create its first token below" in page
    assert 'name="name"' in page and "Create token" in page


def test_a_name_taken_is_refused_in_place(staff_client, agent):
    answer = staff_client.post(reverse("web:agent_new"), {"name": agent.name})

    assert answer.status_code == 400
    assert "name: Agent with this Name already exists." in answer.content.decode()
    assert Agent.objects.count() == 1
