"""GET /api/v1/changes/: every committed write of the agent, in commit order, by cursor."""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from schemathesis.specs.openapi.checks import response_schema_conformance

from stores.engine.actors import Actor
from stores.models import Memory, Suggestion
from stores.services import record_forget, record_revert
from stores.services.decay import decay_importance
from stores.services.expiry import working_purge_expired
from stores.services.suggestions import suggest_for_agent
from tests.api.conftest import client_for
from tests.factories import UserFactory, agent_token

# Changes exist once their write commits: every test here commits (on SQLite too, alike).
pytestmark = pytest.mark.django_db(transaction=True)

MAINTAINER = Actor.maintainer("tests")


def feed(api, query: str = "") -> dict:
    answer = api.call("get", f"changes/{query}")
    assert answer.status_code == 200, answer.content
    assert answer["Cache-Control"] == "no-store"
    return answer.json()


def read_all(api, query: str = "", limit: int = 100) -> list[dict]:
    items: list[dict] = []
    cursor = None
    while True:
        after = f"&after={cursor}" if cursor else ""
        page = feed(api, f"?limit={limit}{after}{query}")
        items += page["results"]
        if not page["results"]:
            return items
        cursor = page["next"]


def test_every_write_comes_in_commit_order_with_what_a_cache_needs(api, agent, make):
    memory = make.memory(agent, "The user likes tea.")
    edited = api.call(
        "post", f"memories/{memory.pk}/edit/", {"old_string": "tea", "new_string": "mate"}
    )
    assert edited.status_code == 200
    skill = make.skill(agent)
    forgotten = record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=MAINTAINER)
    restored = record_revert(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=MAINTAINER,
        revision_id=edited.json()["revision"],
    )
    assert forgotten.ok and restored.ok

    items = feed(api)["results"]

    assert [(i["surface"], i["id"], i["op"], i["status"], i["version"]) for i in items] == [
        ("memory", memory.pk, "create", "created", 1),
        ("memory", memory.pk, "edit", "updated", 2),
        ("skill", skill.pk, "create", "created", 1),
        ("memory", memory.pk, "forget", "deleted", 3),
        ("memory", memory.pk, "revert", "reverted", 4),
    ]
    created, edit, _skill, forget, revert = items
    assert edit["revision"] == edited.json()["revision"]
    assert edit["actor"].startswith("agent:") and edit["channel"] == "api"
    assert created["actor"] == "shell:tests" and created["channel"] == "shell"
    text_sha256 = hashlib.sha256(b"The user likes mate.").hexdigest()
    assert edit["fingerprint"] == hashlib.sha256(text_sha256.encode()).hexdigest()
    assert edit["preview"] == "The user likes mate." and edit["field"] == "content"
    # A delete shows the text it deleted, and has no new text to hash.
    assert forget["preview"] == "The user likes mate." and forget["fingerprint"] is None
    assert revert["fingerprint"] == edit["fingerprint"]
    assert dt.datetime.fromisoformat(created["at"]) <= dt.datetime.fromisoformat(revert["at"])
    assert len({item["cursor"] for item in items}) == len(items)


def test_a_page_carries_a_preview_never_the_whole_text(api, agent, make):
    make.memory(agent, "x" * 50_000)

    (item,) = feed(api)["results"]

    assert item["preview"] == "x" * 200
    assert "content" not in item and "after_text" not in item


def test_pages_follow_each_other_without_gaps_or_repeats(api, agent, make, settings):
    # Only writes here: the suggestion pass would put its finds (these differ only in a
    # number) between them; suggestions in the feed are tested below.
    settings.MEMORYADMIN = {**settings.MEMORYADMIN, "SUGGEST_AFTER_WRITE": False}
    records = [make.memory(agent, f"Memory number {n}.") for n in range(7)]

    items = read_all(api, limit=2)

    assert [item["id"] for item in items] == [record.pk for record in records]
    last = feed(api, "?limit=2")
    following = feed(api, f"?limit=2&after={last['next']}")["results"]
    assert [item["id"] for item in following] == [records[2].pk, records[3].pk]


def test_an_empty_page_keeps_the_cursor_and_the_next_write_follows_it(api, agent, make):
    make.memory(agent)
    first = feed(api)
    empty = feed(api, f"?after={first['next']}")
    assert empty["results"] == [] and empty["next"] == first["next"]

    later = make.memory(agent, "Written after the client caught up.")

    assert [i["id"] for i in feed(api, f"?after={empty['next']}")["results"]] == [later.pk]


def test_after_now_starts_at_the_end_of_the_feed(api, agent, make):
    make.memory(agent, "Already read by the client.")
    start = feed(api, "?after=now")
    assert start["results"] == []

    later = make.memory(agent, "New since then.")

    assert [i["id"] for i in feed(api, f"?after={start['next']}")["results"]] == [later.pk]


def test_background_writes_are_changes_and_decay_comes_only_when_asked(api, agent, make):
    entry = make.working(agent, expires_at=timezone.now() - dt.timedelta(seconds=5))
    memory = make.memory(agent, importance=0.9)
    assert working_purge_expired().purged == 1
    memory.__class__.objects.filter(pk=memory.pk).update(
        decayed_at=timezone.now() - dt.timedelta(days=30)
    )
    decay_importance(triggered_by="task:decay")

    plain = feed(api)["results"]
    with_decay = feed(api, "?include=decay")["results"]

    assert [(i["surface"], i["id"], i["op"]) for i in plain] == [
        ("working", entry.pk, "create"),
        ("memory", memory.pk, "create"),
        ("working", entry.pk, "forget"),
    ]
    assert plain[-1]["actor"] == "task:expiry" and plain[-1]["channel"] == "task"
    decay = with_decay[-1]
    assert with_decay[:-1] == plain
    assert decay["op"] == "decay" and decay["memories"] == 1 and decay["revision"] is None
    assert decay["surface"] == "memory" and decay["channel"] == "task"
    # Asked for memory changes only, decay is one of them; the working entry is not.
    memories_only = feed(api, "?include=decay&surface=memory")["results"]
    assert [i["op"] for i in memories_only] == ["create", "decay"]


def test_a_filtered_page_moves_the_cursor_past_what_it_skipped(api, agent, make):
    make.skill(agent)
    make.memory(agent)

    skills = feed(api, "?surface=skill")
    assert [i["surface"] for i in skills["results"]] == ["skill"]
    assert feed(api, f"?surface=skill&after={skills['next']}")["results"] == []
    everything = feed(api)
    assert skills["next"] == everything["next"]


def test_an_agent_reads_only_its_own_feed(api, other_api, agent, other_agent, make):
    mine = make.memory(agent, "Mine.")
    make.memory(other_agent, "Theirs.")

    assert [i["id"] for i in feed(api)["results"]] == [mine.pk]
    assert len(feed(other_api)["results"]) == 1
    # A token that names another agent reaches nothing.
    refused = api.call("get", f"changes/?agent={other_agent.name}")
    assert refused.status_code == 404 and refused.json()["status"] == "not_found"
    # A cursor is a position, not a key: another agent's cursor shows none of its changes.
    theirs = feed(other_api)["next"]
    assert all(i["id"] == mine.pk for i in feed(api, f"?after={theirs}")["results"])


def test_a_person_reads_the_feed_of_an_agent_they_may_see(agent, other_agent, make):
    make.memory(agent)
    viewer = UserFactory()
    viewer.agent_grants.create(agent=agent, role="viewer")
    client = client_for()
    client.force_authenticate(viewer)

    assert len(client.call("get", f"changes/?agent={agent.name}").json()["results"]) == 1
    assert client.call("get", f"changes/?agent={other_agent.name}").status_code == 404


def test_a_read_only_token_reads_the_feed(read_only_api, agent, make):
    make.memory(agent)
    assert len(feed(read_only_api)["results"]) == 1


# --- suggestions ------------------------------------------------------------------------


def found_conflict(agent, make) -> tuple[Suggestion, Memory, Memory]:
    """Two memories that contradict each other, and the suggestion the pass found about them."""
    paris = make.memory(agent, "The user lives in Paris.")
    lyon = make.memory(agent, "The user lives in Lyon.")
    suggest_for_agent(agent)  # finds nothing more when the pass after the writes found it
    (suggestion,) = Suggestion.objects.filter(agent=agent)
    assert suggestion.kind == "conflict" and suggestion.found_by == "pass:suggestions"
    return suggestion, paris, lyon


def test_a_suggestion_found_then_accepted_follows_the_revisions_of_its_accepting(api, agent, make):
    suggestion, paris, lyon = found_conflict(agent, make)
    accepted = api.call("post", f"suggestions/{suggestion.pk}/accept/", {"keep": lyon.pk})
    assert accepted.status_code == 200, accepted.json()

    items = read_all(api, limit=2)

    assert [(i["op"], i["id"], i["revision"] is None) for i in items] == [
        ("create", paris.pk, False),
        ("create", lyon.pk, False),
        ("suggestion", None, True),
        ("invalidate", paris.pk, False),
        ("suggestion", None, True),
    ]
    created, invalidated, settled = items[2], items[3], items[4]
    records = [{"id": paris.pk, "version": 1}, {"id": lyon.pk, "version": 1}]
    assert created["suggestion"] == {
        "id": suggestion.pk,
        "event": "created",
        "kind": "conflict",
        "status": "open",
        "records": records,
        "revisions": [],
    }
    assert created["status"] == "created" and created["actor"] == "pass:suggestions"
    assert created["channel"] == "task" and created["preview"] == suggestion.reason
    assert settled["suggestion"] == {
        **created["suggestion"],
        "event": "accepted",
        "status": "accepted",
        "revisions": [invalidated["revision"]],
    }
    assert settled["status"] == "updated" and settled["actor"].startswith("agent:")
    assert settled["channel"] == "api" and settled["version"] is None
    assert dt.datetime.fromisoformat(created["at"]) <= dt.datetime.fromisoformat(settled["at"])
    # Suggestions are about memories: they are among the memory surface's changes.
    assert [i["op"] for i in feed(api, "?surface=memory")["results"]] == [i["op"] for i in items]
    assert feed(api, "?surface=skill")["results"] == []


def test_a_proposed_then_dismissed_suggestion_is_in_the_feed_a_dry_run_is_not(api, agent, make):
    tea = make.memory(agent, "The user drinks green tea every morning.")
    walk = make.memory(agent, "The user walks the dog after lunch.")
    start = feed(api)["next"]
    proposed = api.call(
        "post", "suggestions/", {"kind": "merge", "records": [tea.pk, walk.pk], "content": "x"}
    )
    assert proposed.status_code == 201, proposed.json()
    suggestion = proposed.json()["suggestion"]
    preview = api.call(
        "post", f"suggestions/{suggestion}/accept/", {"keep": tea.pk, "dry_run": True}
    )
    assert preview.status_code == 200 and preview.json()["dry_run"] is True
    assert api.call("post", f"suggestions/{suggestion}/dismiss/").status_code == 200

    items = feed(api, f"?after={start}")["results"]

    assert [(i["suggestion"]["id"], i["suggestion"]["event"]) for i in items] == [
        (suggestion, "created"),
        (suggestion, "dismissed"),
    ]
    created, dismissed = items
    assert created["actor"].startswith("agent:") and created["channel"] == "api"
    assert created["suggestion"]["kind"] == "merge"
    assert dismissed["suggestion"]["status"] == "dismissed"
    assert dismissed["suggestion"]["records"] == [
        {"id": tea.pk, "version": 1},
        {"id": walk.pk, "version": 1},
    ]


def test_a_suggestion_whose_record_moved_is_announced_stale_before_what_is_found_anew(
    api, agent, make
):
    suggestion, paris, lyon = found_conflict(agent, make)
    start = feed(api)["next"]

    edited = api.call(
        "post", f"memories/{paris.pk}/edit/", {"old_string": "Paris", "new_string": "Nice"}
    )
    assert edited.status_code == 200, edited.json()

    items = feed(api, f"?after={start}")["results"]
    assert [(i["op"], (i.get("suggestion") or {}).get("event")) for i in items] == [
        ("edit", None),
        ("suggestion", "stale"),
        ("suggestion", "created"),
    ]
    stale, found = items[1], items[2]
    assert stale["suggestion"] == {
        "id": suggestion.pk,
        "event": "stale",
        "kind": "conflict",
        "status": "stale",
        "records": [{"id": paris.pk, "version": 1}, {"id": lyon.pk, "version": 1}],
        "revisions": [],
    }
    assert stale["status"] == "updated" and stale["actor"] == "pass:suggestions"
    assert stale["channel"] == "task" and stale["version"] is None
    assert found["suggestion"]["records"] == [
        {"id": paris.pk, "version": 2},
        {"id": lyon.pk, "version": 1},
    ]


def test_the_whole_pass_announces_what_went_stale_once(api, agent, make, settings):
    suggestion, paris, _lyon = found_conflict(agent, make)
    settings.MEMORYADMIN = {**settings.MEMORYADMIN, "SUGGEST_AFTER_WRITE": False}
    edited = api.call(
        "post", f"memories/{paris.pk}/edit/", {"old_string": "lives in", "new_string": "visits"}
    )
    assert edited.status_code == 200, edited.json()
    start = feed(api)["next"]

    suggest_for_agent(agent)
    suggest_for_agent(agent)

    items = feed(api, f"?after={start}")["results"]
    assert [(i["suggestion"]["id"], i["suggestion"]["event"]) for i in items] == [
        (suggestion.pk, "stale")
    ]
    suggestion.refresh_from_db()
    assert suggestion.status == "stale" and suggestion.settled_by == "pass:suggestions"


def test_a_suggestions_change_is_what_the_schema_says(agent, make):
    found_conflict(agent, make)
    operation = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())[
        "/api/v1/changes/"
    ]["GET"]
    case = operation.Case(headers={"Authorization": f"Bearer {agent_token(agent)[1]}"})

    answer = case.call()

    assert [i["op"] for i in answer.json()["results"]] == ["create", "create", "suggestion"]
    case.validate_response(answer, checks=[response_schema_conformance])


def test_another_agents_feed_never_shows_a_suggestion(api, other_api, agent, other_agent, make):
    suggestion, _paris, _lyon = found_conflict(agent, make)
    assert api.call("post", f"suggestions/{suggestion.pk}/dismiss/").status_code == 200
    theirs = make.memory(other_agent, "Theirs.")

    assert [(i["id"], i.get("suggestion")) for i in feed(other_api)["results"]] == [
        (theirs.pk, None)
    ]
    events = [i["suggestion"]["event"] for i in feed(api)["results"] if i.get("suggestion")]
    assert events == ["created", "dismissed"]


@pytest.mark.parametrize(
    "query",
    [
        "?after=not-a-cursor",
        "?after=c-1",
        "?limit=0",
        "?limit=501",
        "?wait=31",
        "?include=everything",
        "?surface=nothing",
    ],
)
def test_bad_parameters_are_invalid_with_a_message(api, query):
    answer = api.call("get", f"changes/{query}")
    assert answer.status_code == 400
    assert answer.json()["status"] == "invalid" and answer.json()["message"]


def test_without_a_token_the_feed_is_refused(db):
    assert client_for().call("get", "changes/").status_code == 401
    assert client_for("ma_nope_nope").call("get", "changes/").status_code == 401


def test_a_page_is_two_indexed_queries_whatever_its_size(api, agent, make):
    for n in range(30):
        make.memory(agent, f"Memory {n}." + " filler" * 2000)

    with CaptureQueriesContext(connection) as queries:
        page = feed(api, "?limit=30")

    assert len(page["results"]) == 30
    feed_reads = [q["sql"] for q in queries if "stores_change" in q["sql"]]
    assert len(feed_reads) == 2  # the head, then the page with its revisions joined
    assert not any('"before_state"' in sql or '"after_state"' in sql for sql in feed_reads)


def test_the_schema_documents_the_feed_and_its_answers(api):
    schema = client_for().get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/changes/"]["get"]
    assert {p["name"] for p in operation["parameters"]} >= {
        "after",
        "limit",
        "include",
        "surface",
        "wait",
        "agent",
    }
    assert set(operation["responses"]) == {"200", "400", "401", "403", "404", "429", "503"}
    item = schema["components"]["schemas"]["Change"]["properties"]
    assert {"cursor", "revision", "surface", "id", "op", "status", "version"} <= set(item)
    assert {"actor", "channel", "at", "fingerprint", "preview"} <= set(item)
