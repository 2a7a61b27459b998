"""The browsable API's login page (/api/auth/login/) renders and logs in."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"  # tests/factories.py UserFactory


def test_the_browsable_api_login_page_renders(client):
    response = client.get("/api/auth/login/")

    assert response.status_code == 200
    assert 'name="password"' in response.content.decode()


def test_the_browsable_api_login_logs_in(client, agent):
    staff = UserFactory(is_staff=True)
    page = f"/api/v1/memories/?agent={agent.name}"

    response = client.post(
        f"/api/auth/login/?next={quote(page)}",
        {"username": staff.username, "password": PASSWORD},
    )

    assert (response.status_code, response["Location"]) == (302, page)
    browsable = client.get(page, HTTP_ACCEPT="text/html")
    assert browsable.status_code == 200
    assert staff.username in browsable.content.decode()


def test_the_browsable_api_offers_its_login(client, agent):
    page = client.get(f"/api/v1/memories/?agent={agent.name}", HTTP_ACCEPT="text/html")

    assert "href='/api/auth/login/?next=/api/v1/memories/'" in page.content.decode()
