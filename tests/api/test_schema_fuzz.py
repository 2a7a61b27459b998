"""schemathesis against /api/schema/: no server errors, answers conform to the schema.

The checks are schemathesis' response checks. Its two "data acceptance" checks are left
out on purpose: a schema-valid edit of a record that does not exist is rightly refused
(404 not_found, 422 no_match), and the API answers such refusals as documented.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from stores.services import Actor, rules_add
from tests.factories import agent_token

# Generating the schema touches no database, so it can be loaded while tests are collected.
schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())


RESPONSE_CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    """Requests through the raw WSGI app would close the connection holding the test's
    transaction (Django's own test client switches this off the same way)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def bearer(agent, make, settings) -> dict[str, str]:
    settings.MEMORYADMIN = {**settings.MEMORYADMIN, "API": {"RATE_LIMIT": "100000/minute"}}
    # Some records at low ids, so generated paths hit real ones as well as missing ones.
    make.memory(agent)
    make.working(agent)
    make.skill(agent)
    make.task(agent)
    rules_add(agent=agent, actor=Actor.maintainer("tests"), rule="Be kind.")
    return {"Authorization": f"Bearer {agent_token(agent)[1]}"}


@schema.parametrize()
@settings(
    max_examples=2,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_api_conforms_to_its_schema(case, bearer):
    case.call_and_validate(headers=bearer, checks=RESPONSE_CHECKS)
