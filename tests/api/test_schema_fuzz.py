"""schemathesis against /api/schema/: no server errors, answers conform to the schema.

Two runs: every operation on its own, and stateful sequences that follow the schema's
links (a create's `id` is the `ref` of the record's read, update, delete and ops; listed
revisions lead to their reads, approvals and reverts), so generated calls reach records
that exist, in random orders.

The checks are schemathesis' response checks and, on every operation alone, that a request
the schema allows is not refused as invalid (the statuses schemathesis.toml expects: a
schema-valid edit of a record that does not exist is rightly 404 not_found or 422 no_match).
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, transaction
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from stores.engine.actors import Actor
from stores.services import rules_add
from tests.factories import agent_token

# Generating the schema touches no database, so it can be loaded while tests are collected.
# As JSON: the same document, read in a fraction of the time its YAML takes each process.
schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", get_wsgi_application())


@pytest.fixture
def api_schema() -> schemathesis.BaseSchema:
    return schema


# Built when the test runs rather than when it is collected: schemathesis draws every
# operation's coverage cases as it builds its tests, most of the suite's collection time,
# which each pytest-xdist worker would otherwise spend again.
lazy_schema = schemathesis.pytest.from_fixture("api_schema")

# The operations dealt into a few tests, so pytest-xdist spreads them over its workers: as
# one test they were a third of a pass, all of it on one worker. Listing them draws no cases.
SHARDS = 8
OPERATIONS = sorted(result.ok().label for result in schema.get_all_operations())


@pytest.fixture(autouse=True)
def _node_id_where_schemathesis_reads_it(request):
    """schemathesis' lazy tests read and restore the test's id as `_nodeid`, which pytest 9.2
    keeps elsewhere: give them the id where they look (each operation is still reported)."""
    request.node._nodeid = request.node.nodeid


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


def _operations_conform_to_the_schema(shard: int):
    @pytest.mark.django_db
    @lazy_schema.include(name=OPERATIONS[shard::SHARDS]).parametrize()
    @settings(
        max_examples=2,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    def test(case, bearer):
        # The operations share the test's rows: each case starts from them as the fixture
        # made them (a generated delete must not take the records later operations hit).
        with transaction.atomic():
            case.call_and_validate(
                headers=bearer, checks=[*RESPONSE_CHECKS, positive_data_acceptance]
            )
            transaction.set_rollback(True)

    return test


for _shard in range(SHARDS):
    globals()[f"test_api_conforms_to_its_schema_{_shard}"] = _operations_conform_to_the_schema(
        _shard
    )


APIWorkflow = schema.as_state_machine()


class AgentWorkflow(APIWorkflow):
    headers: dict[str, str] = {}

    def setup(self):
        # Every sequence starts from the same rows: hypothesis replays a failing sequence to
        # report it, and one that met the rows an earlier sequence left would go elsewhere.
        self._rows = transaction.atomic()
        self._rows.__enter__()

    def teardown(self):
        transaction.set_rollback(True)
        self._rows.__exit__(None, None, None)

    def before_call(self, case):
        # The token acts on its own agent; a generated ?agent= only ever answers 404, which
        # would keep most sequences from reaching a record.
        if case.query:
            case.query.pop("agent", None)

    def get_call_kwargs(self, case):
        return {"headers": self.headers}

    def validate_response(self, response, case, additional_checks=None, **kwargs):
        case.validate_response(response, checks=RESPONSE_CHECKS)


def test_api_stateful_sequences_conform_to_the_schema(bearer):
    AgentWorkflow.headers = bearer
    AgentWorkflow.run(
        settings=settings(
            max_examples=int(os.environ.get("MEMORYADMIN_STATEFUL_API_EXAMPLES", "30")),
            stateful_step_count=8,
            deadline=None,
            database=None,
            # Shrinking a long stateful failure can take minutes; the failing sequence as
            # found is reported as it is.
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
    )
