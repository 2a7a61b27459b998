"""A database outage answers 503 with a retry hint on the API and in the UI, never 500."""

from __future__ import annotations

import pytest
from django.db import OperationalError

from tests.api.conftest import client_for
from tests.factories import agent_token


@pytest.fixture
def database_outage(monkeypatch):
    """Every lookup of the logged-in user (the first query of most requests) fails."""

    def refuse(request):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr("django.contrib.auth.get_user", refuse)
    monkeypatch.setattr(
        "memoryadmin.api.authentication.BearerTokenAuthentication.authenticate",
        lambda self, request: refuse(request),
    )


def test_the_api_answers_503_json(agent, database_outage):
    api = client_for(agent_token(agent)[1])

    response = api.call("get", "memories/")

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["status"] == "unavailable"
    assert response.json()["code"] == "database_unavailable"


def test_the_ui_answers_503_html(client, staff_user, database_outage):
    client.force_login(staff_user)

    response = client.get("/")

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert b"unavailable" in response.content


def test_other_errors_stay_errors(client, staff_user, monkeypatch):
    def crash(request):
        raise RuntimeError("a real bug")

    monkeypatch.setattr("django.contrib.auth.get_user", crash)
    client.raise_request_exception = False
    client.force_login(staff_user)

    assert client.get("/").status_code == 500
