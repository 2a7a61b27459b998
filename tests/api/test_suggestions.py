"""The suggestions inbox over REST: list, propose, accept (409 on moved records), dismiss;
another agent's token sees none (404), a read-only token settles none (403)."""

from __future__ import annotations

import pytest

from stores.engine.actors import Actor
from stores.models import Memory, Revision, Suggestion
from stores.services import record_edit
from stores.services.suggestions import suggestion_create

ME = Actor.maintainer("tests")


@pytest.fixture
def conflict(agent, make):
    paris = make.memory(agent, content="The user lives in Paris.")
    lyon = make.memory(agent, content="The user lives in Lyon.")
    suggestion = suggestion_create(
        agent=agent,
        kind="conflict",
        memories=[paris, lyon],
        reason="differ only in 'Paris' → 'Lyon'",
        proposal={"keep": lyon.pk},
    )
    return suggestion, paris, lyon


def test_the_inbox_lists_open_suggestions_with_their_records(api, conflict):
    suggestion, paris, lyon = conflict
    answer = api.call("get", "suggestions/?kind=conflict")
    assert answer.status_code == 200
    body = answer.json()
    assert body["status"] == "ok" and body["count"] == 1
    row = body["results"][0]
    assert row["id"] == suggestion.pk and row["kind"] == "conflict" and row["status"] == "open"
    assert row["reason"] == "differ only in 'Paris' → 'Lyon'"
    assert row["proposal"] == {"keep": lyon.pk}
    assert [(r["id"], r["version"], r["preview"]) for r in row["records"]] == [
        (paris.pk, 1, "The user lives in Paris."),
        (lyon.pk, 1, "The user lives in Lyon."),
    ]
    assert api.call("get", "suggestions/?kind=duplicate").json()["count"] == 0


def test_accept_keeps_one_and_supersedes_the_other(api, conflict):
    suggestion, paris, lyon = conflict
    answer = api.call("post", f"suggestions/{suggestion.pk}/accept/", {"keep": lyon.pk})
    assert answer.status_code == 200, answer.json()
    assert answer.json()["suggestion"] == suggestion.pk
    paris.refresh_from_db()
    assert paris.superseded_by_id == lyon.pk
    assert api.call("get", "suggestions/").json()["count"] == 0
    accepted = api.call("get", "suggestions/?status=accepted").json()["results"][0]
    assert accepted["status"] == "accepted" and accepted["settled_by"].startswith("agent:")


def test_accept_on_a_moved_record_is_409_and_writes_nothing(api, agent, conflict):
    suggestion, paris, lyon = conflict
    assert record_edit(
        surface_key="memory", agent=agent, ref=lyon.pk, actor=ME,
        old_string="Lyon", new_string="Lille",
    ).ok  # fmt: skip
    revisions = Revision.objects.count()
    answer = api.call("post", f"suggestions/{suggestion.pk}/accept/", {"keep": paris.pk})
    assert answer.status_code == 409
    body = answer.json()
    assert body["status"] == "conflict"
    assert body["records"] == [{"id": lyon.pk, "version": 1, "current_version": 2}]
    assert Revision.objects.count() == revisions


def test_a_dry_run_accept_writes_nothing(api, conflict):
    suggestion, paris, lyon = conflict
    answer = api.call(
        "post", f"suggestions/{suggestion.pk}/accept/",
        {"keep": lyon.pk, "content": "The user lives in Lyon now.", "dry_run": True},
    )  # fmt: skip
    assert answer.status_code == 200 and answer.json()["dry_run"] is True
    body = answer.json()
    # Worded as every dry run is (an edit's below): the status the write would answer, the
    # version it would be checked against, the would-be text and its diff, no revision.
    edit = api.call(
        "post", f"memories/{lyon.pk}/edit/",
        {"old_string": "Lyon.", "new_string": "Lyon now.", "dry_run": True},
    ).json()  # fmt: skip
    assert body["status"] == edit["status"] and body["version"] == edit["version"] == 1
    assert body["text"] == edit["text"] == "The user lives in Lyon now."
    assert body["diff"] == edit["diff"] and body["field"] == edit["field"] == "content"
    assert "revision" not in body and "revisions" not in body
    assert body["message"].startswith("Preview, nothing written: accepting keeps memory")
    assert body["kept"] == lyon.pk and body["others"] == [paris.pk]
    lyon.refresh_from_db()
    paris.refresh_from_db()
    assert lyon.content == "The user lives in Lyon." and paris.superseded_by_id is None
    suggestion.refresh_from_db()
    assert suggestion.status == "open"


def test_dismiss_is_remembered(api, conflict):
    suggestion, _, _ = conflict
    answer = api.call("post", f"suggestions/{suggestion.pk}/dismiss/")
    assert answer.status_code == 200
    again = api.call("post", f"suggestions/{suggestion.pk}/dismiss/")
    assert again.status_code == 409
    suggestion.refresh_from_db()
    assert suggestion.status == Suggestion.State.DISMISSED


def test_another_agents_token_sees_and_settles_none(other_api, conflict):
    suggestion, _, _ = conflict
    assert other_api.call("get", "suggestions/").json()["count"] == 0
    assert other_api.call("get", f"suggestions/{suggestion.pk}/").status_code == 404
    for verb in ("accept", "dismiss"):
        answer = other_api.call("post", f"suggestions/{suggestion.pk}/{verb}/")
        assert answer.status_code == 404, verb
        assert answer.json()["status"] == "not_found"
    suggestion.refresh_from_db()
    assert suggestion.status == "open"


def test_a_read_only_token_reads_but_cannot_settle_or_propose(read_only_api, conflict):
    suggestion, paris, lyon = conflict
    assert read_only_api.call("get", "suggestions/").json()["count"] == 1
    for verb in ("accept", "dismiss"):
        answer = read_only_api.call("post", f"suggestions/{suggestion.pk}/{verb}/")
        assert answer.status_code == 403, verb
    proposed = read_only_api.call("post", "suggestions/", {"records": [paris.pk, lyon.pk]})
    assert proposed.status_code == 403
    suggestion.refresh_from_db()
    assert suggestion.status == "open"


def test_an_agent_proposes_a_merge_pinned_to_what_it_saw(api, agent, make):
    first = make.memory(agent, content="Standup is at 9:30.", tags=["work"])
    second = make.memory(agent, content="The daily standup starts at 9:30.")
    answer = api.call(
        "post", "suggestions/",
        {"records": [first.pk, second.pk], "content": "Daily standup at 9:30.",
         "reason": "one meeting"},
    )  # fmt: skip
    assert answer.status_code == 201, answer.json()
    number = answer.json()["suggestion"]
    row = api.call("get", f"suggestions/{number}/").json()["record"]
    assert row["kind"] == "merge" and row["reason"] == "one meeting"
    assert row["proposal"] == {"keep": first.pk, "content": "Daily standup at 9:30."}
    assert Memory.objects.get(pk=first.pk).version == 1
    accepted = api.call("post", f"suggestions/{number}/accept/")
    assert accepted.status_code == 200, accepted.json()
    first.refresh_from_db()
    assert first.content == "Daily standup at 9:30." and first.reinforcement_count == 2


def test_bad_input_is_invalid(api, conflict):
    assert api.call("post", "suggestions/", {"records": [1]}).status_code == 400
    assert api.call("get", "suggestions/?kind=nope").status_code == 400


def test_a_proposal_naming_one_memory_twice_changes_nothing(api, agent, make):
    memory = make.memory(agent, content="Standup is at 9:30.", alias="standup")
    answer = api.call("post", "suggestions/", {"records": [memory.pk, "standup"]})
    assert (answer.status_code, answer.json()["status"]) == (422, "no_change")
    assert "records name one memory" in answer.json()["message"]
    assert api.call("get", "suggestions/").json()["count"] == 0


def test_keep_names_a_record_by_id_or_alias_and_one_elsewhere_is_not_found(api, agent, make):
    first = make.memory(agent, content="Standup is at 9:30.", alias="standup")
    second = make.memory(agent, content="The daily standup starts at 9:30.")
    elsewhere = make.memory(agent, content="The user likes tea.", alias="tea")
    records = {"records": [first.pk, second.pk]}
    for keep in (elsewhere.pk, "tea", 999999):
        refused = api.call("post", "suggestions/", {**records, "keep": keep})
        assert (refused.status_code, refused.json()["status"]) == (404, "not_found"), keep
        assert f"keep names {keep}, which is not one of the records" in refused.json()["message"]
    proposed = api.call("post", "suggestions/", {**records, "keep": "standup"})
    number = proposed.json()["suggestion"]
    assert api.call("get", f"suggestions/{number}/").json()["record"]["proposal"] == {
        "keep": first.pk
    }
    for keep in (elsewhere.pk, "tea"):
        refused = api.call("post", f"suggestions/{number}/accept/", {"keep": keep})
        assert (refused.status_code, refused.json()["status"]) == (404, "not_found"), keep
    assert Memory.objects.get(pk=second.pk).superseded_by_id is None
    accepted = api.call("post", f"suggestions/{number}/accept/", {"keep": "standup"})
    assert accepted.status_code == 200, accepted.json()
    assert Memory.objects.get(pk=second.pk).superseded_by_id == first.pk


def test_the_tools_list_propose_and_settle(api, agent, make):
    first = make.memory(agent, content="The user's cat is called Miso.")
    second = make.memory(agent, content="The user's cat is named Miso.")
    proposed = api.call(
        "post", "tools/propose_merge/",
        {"records": [first.pk, second.pk], "reason": "one cat"},
    ).json()  # fmt: skip
    assert proposed["status"] == "created"
    listed = api.call("post", "tools/list_suggestions/", {"kind": "merge"}).json()
    assert listed["count"] == 1 and listed["results"][0]["reason"] == "one cat"
    number = listed["results"][0]["id"]
    preview = api.call(
        "post", "tools/settle_suggestion/", {"id": number, "decision": "accept", "dry_run": True}
    ).json()
    assert preview["status"] == "updated" and preview["dry_run"] is True
    assert "revision" not in preview and preview["version"] == first.version
    assert preview["others_become"] == "merged" and preview["message"].startswith("Preview")
    settled = api.call(
        "post", "tools/settle_suggestion/", {"id": number, "decision": "accept"}
    ).json()
    assert settled["status"] == "updated" and settled["suggestion"] == number
    second.refresh_from_db()
    assert second.superseded_by_id == first.pk
    again = api.call("post", "tools/settle_suggestion/", {"id": number, "decision": "dismiss"})
    assert again.json()["status"] == "conflict"


def test_the_tools_answer_over_mcp(agent, make):
    from memoryadmin.mcp.server import _call
    from tests.factories import agent_token

    token, _ = agent_token(agent)
    first = make.memory(agent, content="User has 2 cats.")
    second = make.memory(agent, content="User has 3 cats.")
    suggestion_create(agent=agent, kind="conflict", memories=[first, second], reason="count")
    listed = _call(lambda request: token, None, "list_suggestions", {}).structured_content
    assert listed["status"] == "ok" and listed["count"] == 1
    number = listed["results"][0]["id"]
    settled = _call(
        lambda request: token, None, "settle_suggestion", {"id": number, "decision": "dismiss"}
    ).structured_content
    assert settled["status"] == "updated"
