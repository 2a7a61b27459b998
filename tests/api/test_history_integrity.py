"""Revert and restore over HTTP with the agent's own token: a crafted revision moves nothing
into another agent, and a restore after its successor was forgotten commits cleanly."""

from __future__ import annotations

import pytest

from stores.models import Memory
from tests.services.test_history_integrity import crafted_revision, hostile_state, superseded_pair


def test_restore_over_the_api_keeps_the_record_in_its_agent(
    api, other_api, agent, other_agent, make
):
    memory = make.memory(agent, content="The user parks in spot 12.")
    crafted = crafted_revision(
        memory,
        field="agent_id",
        after_text=str(other_agent.pk),
        after_state=hostile_state(memory),
    )
    assert api.call("delete", f"memories/{memory.pk}/").status_code == 200

    answer = api.call(
        "post", f"memories/{memory.pk}/revert/", {"revision_id": crafted.pk, "to": "after"}
    )

    assert answer.status_code == 400, answer.json()
    assert answer.json()["status"] == "invalid"
    assert other_api.call("get", f"memories/{memory.pk}/").status_code == 404
    assert other_api.call("get", "memories/").json()["count"] == 0
    assert api.call("get", f"memories/{memory.pk}/").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_restore_over_the_api_after_the_successor_was_forgotten_commits(api, agent, make):
    old, new = superseded_pair(agent, make)
    forgotten = api.call("delete", f"memories/{old.pk}/").json()
    assert api.call("delete", f"memories/{new.pk}/").status_code == 200

    answer = api.call(
        "post", f"memories/{old.pk}/revert/", {"revision_id": forgotten["revision"], "to": "before"}
    )

    assert answer.status_code == 200, answer.content
    assert answer.json()["status"] == "reverted"
    assert Memory.objects.get(pk=old.pk).superseded_by_id is None
