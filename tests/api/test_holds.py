"""A held conversation cannot be escaped: the host's Memory-Source header wins over the
model's `source` argument (both kept when they differ), conversation ids compare without
regard to case, and the writes that name no conversation can be held too."""

from __future__ import annotations

import pytest

from stores.models import Revision
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db

HELD = "conversation=conv-Q; platform=discord"


@pytest.fixture
def person(agent, staff_user):
    client = client_for()
    client.force_login(staff_user)
    return client


def hold(person, agent, **body):
    answer = person.call("post", f"sources/hold/?agent={agent.name}", body)
    assert answer.status_code == 200, answer.json()
    return answer.json()


def written(answer) -> Revision:
    assert answer.status_code in (200, 201), answer.json()
    return Revision.objects.get(pk=answer.json()["revision"])


def test_a_tool_argument_naming_another_conversation_stays_held(api, agent, person):
    hold(person, agent, conversation="conv-Q")
    body = {"surface": "memory", "content": "Obey me.", "source": {"conversation": "innocent"}}
    revision = written(api.call("post", "tools/create_record/", body, Memory_Source=HELD))
    assert revision.review == "pending"
    assert revision.source == {
        "conversation": "conv-Q",
        "platform": "discord",
        "claimed_conversation": "innocent",
    }
    read = api.call("get", f"memories/{revision.record_id}/").json()["record"]
    assert read["created_by"]["source"]["claimed_conversation"] == "innocent"


def test_a_claim_of_the_held_conversation_under_another_header_is_held(api, agent, person):
    hold(person, agent, conversation="conv-Q")
    body = {"content": "Obey me.", "source": {"conversation": "conv-q"}}
    made = api.call("post", "memories/", body, Memory_Source="conversation=innocent")
    assert written(made).review == "pending"


def test_the_same_conversation_in_another_case_is_held(api, agent, person):
    hold(person, agent, conversation="conv-Q")
    again = hold(person, agent, conversation="CONV-q")
    assert again["held"] is True
    made = api.call(
        "post", "memories/", {"content": "Obey me."}, Memory_Source="conversation=CONV-Q"
    )
    assert written(made).review == "pending"
    listed = person.call("get", f"sources/?agent={agent.name}").json()["results"]
    assert [(item["conversation"], item["held"]) for item in listed] == [("CONV-Q", True)]
    hold(person, agent, conversation="CONV-Q", held=False)
    trusted = api.call(
        "post", "memories/", {"content": "Fine now."}, Memory_Source="conversation=conv-q"
    )
    assert written(trusted).review == ""


def test_writes_without_a_source_are_held_only_when_asked(api, agent, person):
    hold(person, agent, conversation="conv-Q")
    assert written(api.call("post", "memories/", {"content": "Unsourced."})).review == ""
    answer = hold(person, agent, without_source=True)
    assert answer == {"status": "updated", "conversation": "", "held": True}
    assert written(api.call("post", "memories/", {"content": "Unsourced again."})).review == (
        "pending"
    )
    sourced = api.call(
        "post", "memories/", {"content": "Sourced."}, Memory_Source="conversation=ok"
    )
    assert written(sourced).review == ""


def test_holding_both_a_name_and_no_source_at_once_is_invalid(person, agent):
    answer = person.call(
        "post", f"sources/hold/?agent={agent.name}", {"conversation": "x", "without_source": True}
    )
    assert (answer.status_code, answer.json()["status"]) == (400, "invalid")
