"""Each status word answers with its HTTP code and what the caller needs to act on it."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from memoryadmin.doors.statuses import HTTP_CODES
from stores.editing import Status
from stores.engine.actors import Actor
from stores.models import Memory, Subject
from stores.services.agents import token_revoke
from tests.api.conftest import client_for
from tests.factories import SubjectFactory, agent_token


def test_every_status_word_has_an_http_code():
    assert set(HTTP_CODES) == set(Status)


def test_no_match_carries_the_near_miss_hint(api, agent, make):
    memory = make.memory(agent, "The user prefers tea over coffee.")
    answer = api.call(
        "post", f"memories/{memory.pk}/edit/", {"old_string": "prefers  tea", "new_string": "x"}
    )
    assert answer.status_code == 422
    body = answer.json()
    assert body["status"] == "no_match"
    assert body["near_miss"]["line"] == 1
    assert "tea" in body["near_miss"]["text"]


def test_ambiguous_carries_count_and_lines(api, agent, make):
    memory = make.memory(agent, "tea\ncoffee\ntea")
    answer = api.call(
        "post", f"memories/{memory.pk}/edit/", {"old_string": "tea", "new_string": "x"}
    )
    assert answer.status_code == 422
    assert answer.json()["status"] == "ambiguous"
    assert answer.json()["count"] == 2
    assert answer.json()["lines"] == [1, 3]


def test_ambiguous_on_one_line_gives_each_column_and_context(api, agent, make):
    memory = make.memory(agent, "tea, then more tea")
    answer = api.call(
        "post", f"memories/{memory.pk}/edit/", {"old_string": "tea", "new_string": "x"}
    )
    body = answer.json()
    assert (answer.status_code, body["lines"]) == (422, [1])
    assert body["occurrences"] == [
        {"line": 1, "column": 1, "context": "tea, then more tea"},
        {"line": 1, "column": 16, "context": "tea, then more tea"},
    ]
    assert "(lines 1)" not in body["message"] and "column 16" in body["message"]


def test_no_change(api, agent, make):
    memory = make.memory(agent)
    answer = api.call(
        "post", f"memories/{memory.pk}/edit/", {"old_string": "tea", "new_string": "tea"}
    )
    assert (answer.status_code, answer.json()["status"]) == (422, "no_change")


def test_body_precondition_conflict_is_409_with_current_version(api, agent, make):
    memory = make.memory(agent)
    answer = api.call(
        "post",
        f"memories/{memory.pk}/edit/",
        {"old_string": "tea", "new_string": "mate", "expected_version": 7},
    )
    assert answer.status_code == 409
    assert answer.json()["status"] == "conflict"
    assert answer.json()["current_version"] == 1


def test_if_match_conflict_is_412_with_current_version(api, agent, make):
    memory = make.memory(agent)
    answer = api.call(
        "post",
        f"memories/{memory.pk}/replace/",
        {"text": "Something new."},
        if_match='"5"',
    )
    assert answer.status_code == 412
    assert answer.json()["status"] == "conflict"
    assert answer.json()["current_version"] == 1


def test_full_replacement_without_precondition_is_428(api, agent, make):
    memory = make.memory(agent)
    answer = api.call("post", f"memories/{memory.pk}/replace/", {"text": "Something new."})
    assert (answer.status_code, answer.json()["status"]) == (428, "precondition_required")
    assert Memory.objects.get(pk=memory.pk).version == 1


def test_not_editable_is_409_with_store(api, agent, make):
    fact = make.memory(agent, store="fact")
    answer = api.call("post", f"memories/{fact.pk}/edit/", {"old_string": "tea", "new_string": "x"})
    assert answer.status_code == 409
    assert answer.json()["status"] == "not_editable"
    assert answer.json()["store"] == "fact"


def test_not_found_is_404(api):
    answer = api.call("get", "memories/99999/")
    assert (answer.status_code, answer.json()["status"]) == (404, "not_found")


def test_unknown_path_is_a_json_404(api):
    answer = api.call("get", "/api/v1/nothing-here/")
    assert (answer.status_code, answer.json()["status"]) == (404, "not_found")


def test_invalid_body_is_400_and_names_the_field(api, agent, make):
    memory = make.memory(agent)
    answer = api.call("post", f"memories/{memory.pk}/edit/", {"old_str": "tea", "new_string": "x"})
    assert answer.status_code == 400
    assert answer.json()["status"] == "invalid"
    assert "old_str" in answer.json()["errors"]


def test_text_over_the_size_limit_is_400_invalid_and_nothing_is_written(api, agent, make, settings):
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "MAX_TEXT_LENGTH": {**settings.MEMORYADMIN["MAX_TEXT_LENGTH"], "memory": 50},
    }
    memory = make.memory(agent)
    answer = api.call(
        "post", f"memories/{memory.pk}/edit/", {"old_string": "tea", "new_string": "t" * 60}
    )
    assert (answer.status_code, answer.json()["status"]) == (400, "invalid")
    assert answer.json()["limit"] == 50
    assert Memory.objects.get(pk=memory.pk).content == "The user prefers tea over coffee."


def test_read_only_token_reads_but_writes_are_403_forbidden(read_only_api, agent, make):
    memory = make.memory(agent)
    assert read_only_api.call("get", f"memories/{memory.pk}/").status_code == 200
    answer = read_only_api.call(
        "post", f"memories/{memory.pk}/edit/", {"old_string": "tea", "new_string": "x"}
    )
    assert (answer.status_code, answer.json()["status"]) == (403, "forbidden")


def test_self_editing_switched_off_is_403_disabled(api, agent, make):
    memory = make.memory(agent)
    agent.self_editing_enabled = False
    agent.save()
    answer = api.call(
        "post", f"memories/{memory.pk}/edit/", {"old_string": "tea", "new_string": "x"}
    )
    assert (answer.status_code, answer.json()["status"]) == (403, "disabled")


def test_privacy_restricted_subject_is_403(api, agent, make):
    subject = SubjectFactory(agent=agent, privacy_level=Subject.Privacy.FULL)
    memory = make.memory(agent, subject=subject)
    answer = api.call(
        "post", f"memories/{memory.pk}/edit/", {"old_string": "tea", "new_string": "x"}
    )
    assert (answer.status_code, answer.json()["status"]) == (403, "privacy_restricted")


def test_missing_unknown_expired_and_revoked_tokens_are_401(agent):
    assert client_for().call("get", "memories/").status_code == 401
    unknown = client_for("ma_nope_nope").call("get", "memories/")
    assert unknown.status_code == 401
    assert unknown.json()["status"] == "forbidden"
    assert unknown["WWW-Authenticate"].startswith("Bearer")

    token, raw = agent_token(agent)
    token.expires_at = timezone.now() - dt.timedelta(seconds=1)
    token.save()
    assert client_for(raw).call("get", "memories/").status_code == 401

    token, raw = agent_token(agent)
    assert client_for(raw).call("get", "memories/").status_code == 200
    token_revoke(actor=Actor.maintainer("tests"), token=token)
    assert client_for(raw).call("get", "memories/").status_code == 401


def test_token_use_is_recorded(agent):
    token, raw = agent_token(agent)
    client_for(raw).call("get", "memories/")
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_rate_limit_is_429_with_a_status_and_retry_after(api, settings):
    settings.MEMORYADMIN = {**settings.MEMORYADMIN, "API": {"RATE_LIMIT": "3/minute"}}
    codes = [api.call("get", "memories/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    limited = api.call("get", "memories/")
    assert limited.json()["status"] == "forbidden"
    assert limited.json()["code"] == "rate_limited"
    assert limited.json()["retry_after"] >= 1
    assert "Retry-After" in limited


def test_rate_limit_is_per_token(api, other_api, settings):
    settings.MEMORYADMIN = {**settings.MEMORYADMIN, "API": {"RATE_LIMIT": "1/minute"}}
    assert api.call("get", "memories/").status_code == 200
    assert api.call("get", "memories/").status_code == 429
    assert other_api.call("get", "memories/").status_code == 200
