"""/metrics sums every gunicorn worker's counters, whichever worker answers (PostgreSQL pass)."""

from __future__ import annotations

import pytest
import requests
from django.db import connection
from prometheus_client.parser import text_string_to_metric_families

from tests.factories import AgentFactory, RecordMaker, agent_token
from tests.load.server import gunicorn

TOKEN = "scrape-secret-9b2e"
WRITES = 12


def written(text: str) -> float:
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "memoryadmin_writes_total"
        and sample.labels == {"op": "record_edit", "status": "updated", "door": "api"}
    )


@pytest.mark.django_db(transaction=True)
def test_every_worker_reports_the_writes_of_all(tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: gunicorn's processes must share the test database")
    agent = AgentFactory()
    memory = RecordMaker().memory(agent, "The counter stands at 0.")
    raw = agent_token(agent)[1]
    with gunicorn(workers=3, threads=1, METRICS_TOKEN=TOKEN, METRICS_DIR=str(tmp_path)) as base:
        for step in range(WRITES):
            # A fresh connection each time, so the writes spread over the workers.
            answer = requests.post(
                f"{base}/api/v1/memories/{memory.pk}/edit/",
                json={"old_string": f"at {step}.", "new_string": f"at {step + 1}."},
                headers={"Authorization": f"Bearer {raw}"},
                timeout=30,
            )
            assert answer.json()["status"] == "updated", answer.text
        scrapes = [
            requests.get(
                f"{base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
            )
            for _ in range(6)
        ]
        refused = requests.get(f"{base}/metrics", timeout=30)
    assert {scrape.status_code for scrape in scrapes} == {200}
    assert [written(scrape.text) for scrape in scrapes] == [WRITES] * 6
    assert refused.status_code == 401
    # Each process that counted left its file there.
    assert len(list(tmp_path.glob("counter_*.db"))) >= 2
