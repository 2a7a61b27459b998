"""What is not there answers the app's own not-found page, whatever DEBUG says."""

from __future__ import annotations

import pytest
from django.urls import reverse

from stores.models import AgentAccess
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def assert_apps_not_found_page(response) -> None:
    assert response.status_code == 404
    page = response.content.decode()
    assert "Nothing here" in page
    assert "web/app.css" in page  # the app's layout
    assert "URLconf" not in page and "Django tried" not in page  # not the technical page


def test_an_unknown_agent_gets_the_apps_page_with_debug_on(staff_client, settings):
    settings.DEBUG = True

    assert_apps_not_found_page(staff_client.get(reverse("web:dashboard", args=["no-such-bot"])))
    assert_apps_not_found_page(
        staff_client.get(reverse("web:record_list", args=["no-such-bot", "memory"]))
    )


def test_an_ungranted_agent_reads_as_unknown(client, agent, other_agent, settings):
    settings.DEBUG = True
    person = UserFactory()
    AgentAccess.objects.create(user=person, agent=agent)
    client.force_login(person)

    response = client.get(reverse("web:dashboard", args=[other_agent.name]))

    assert_apps_not_found_page(response)
    assert other_agent.name not in response.content.decode()


def test_an_unknown_surface_keeps_the_agents_navigation(staff_client, agent, settings):
    settings.DEBUG = True

    response = staff_client.get(f"/a/{agent.name}/no-such-surface/")

    assert_apps_not_found_page(response)
    assert reverse("web:dashboard", args=[agent.name]) in response.content.decode()
