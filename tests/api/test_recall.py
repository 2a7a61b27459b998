"""Recall answers previews, never the full text; a replacement must start from a full read."""

from __future__ import annotations

from stores.editing import text_sha256
from stores.models import Memory
from stores.services.embeddings import reembed_sweep
from tests.factories import SubjectFactory

LONG = "The user's travel plans. " + "They visit Lisbon every spring. " * 40 + "TAIL: allergic."


def test_recall_ranks_by_words_and_returns_previews_only(api, agent, make):
    best = make.memory(agent, "Alice likes green tea in the morning.", importance=0.2)
    weaker = make.memory(agent, "Bob drinks tea.", importance=0.9)
    # Unrelated memories give the typical level a partial match stands out from: holding
    # only "tea" of "green tea" is relevant when its meaning is closer than theirs.
    for text in ("Unrelated note about cars.", "The garage door sticks.", "Bins go out Monday."):
        make.memory(agent, text)
    reembed_sweep()
    answer = api.call("get", "memories/?q=green tea")
    assert answer.status_code == 200
    body = answer.json()
    assert body["status"] == "ok"
    assert [hit["id"] for hit in body["results"]] == [best.pk, weaker.pk]
    hit = body["results"][0]
    assert set(hit) >= {"id", "version", "store", "bank", "score", "preview", "truncated"}
    assert hit["full_length"] == len(best.content)
    assert "content" not in hit
    assert 0 < body["results"][1]["score"] < hit["score"] <= 1


def test_long_memories_are_cut_at_500_characters(api, agent, make):
    make.memory(agent, LONG)
    hit = api.call("get", "memories/?q=lisbon").json()["results"][0]
    assert hit["truncated"] is True
    assert len(hit["preview"]) == 500
    assert hit["preview"].endswith("…")
    assert hit["full_length"] == len(LONG)
    assert "TAIL" not in hit["preview"]


def test_recall_filters_and_pagination(api, agent, make):
    person = SubjectFactory(agent=agent, external_id="discord:42")
    about = make.memory(agent, "Tea with milk.", subject=person, tags=["drinks"], store="episodic")
    shared = make.memory(agent, "Tea at five.", category="habits", importance=0.8)
    gone = make.memory(agent, "Tea is banned.")
    Memory.objects.filter(pk=gone.pk).update(invalidated_at=shared.updated_at)

    def ids(query: str) -> list[int]:
        answer = api.call("get", f"memories/?q=tea&{query}")
        assert answer.status_code == 200, answer.json()
        return [hit["id"] for hit in answer.json()["results"]]

    assert set(ids("")) == {about.pk, shared.pk}
    assert set(ids("include_invalidated=true")) == {about.pk, shared.pk, gone.pk}
    assert ids("subject=discord:42") == [about.pk]
    assert ids("subject=shared") == [shared.pk]
    assert ids("tag=drinks") == [about.pk]
    assert ids("category=habits") == [shared.pk]
    assert ids("store=episodic") == [about.pk]
    assert ids("importance_min=0.7") == [shared.pk]
    assert ids("importance_max=0.6") == [about.pk]

    first = api.call("get", "memories/?q=tea&limit=1").json()
    assert first["count"] == 2
    assert len(first["results"]) == 1
    second = api.call("get", first["next"]).json()
    assert second["next"] is None
    assert {first["results"][0]["id"], second["results"][0]["id"]} == {about.pk, shared.pk}


def test_bad_recall_parameters_are_invalid(api):
    answer = api.call("get", "memories/?importance_min=2")
    assert (answer.status_code, answer.json()["status"]) == (400, "invalid")


def test_a_recall_preview_copied_back_as_a_replacement_is_refused(api, agent, make):
    memory = make.memory(agent, LONG)
    hit = api.call("get", "memories/?q=lisbon").json()["results"][0]
    answer = api.call(
        "post",
        f"memories/{hit['id']}/replace/",
        {"text": hit["preview"], "expected_version": hit["version"]},
    )
    # A preview carries the version but never the text's hash: no proof of a full read.
    assert answer.status_code == 428
    assert answer.json()["status"] == "precondition_required"
    assert "content_sha256" in answer.json()["message"]
    assert Memory.objects.get(pk=memory.pk).content == LONG


def test_an_edited_recall_preview_is_refused_unless_the_caller_means_to_shorten(api, agent, make):
    memory = make.memory(agent, LONG)
    hit = api.call("get", "memories/?q=lisbon").json()["results"][0]
    edited = hit["preview"].removesuffix("…") + " Also water the ferns."
    for method, path, body in (
        ("post", f"memories/{memory.pk}/replace/", {"text": edited}),
        ("patch", f"memories/{memory.pk}/", {"content": edited}),
    ):
        # The proof of a full read, and still a preview sent back: the shape guard refuses.
        proof = {"expected_version": hit["version"], "expected_sha256": text_sha256(LONG)}
        answer = api.call(method, path, {**body, **proof})
        assert answer.status_code == 422, answer.json()
        assert answer.json()["status"] == "suspected_truncation"
        assert f"GET /api/v1/memories/{memory.pk}/" in answer.json()["message"]
        assert "allow_shorter" in answer.json()["message"]
    assert Memory.objects.get(pk=memory.pk).content == LONG

    replaced = api.call(
        "post",
        f"memories/{memory.pk}/replace/",
        {"text": edited, **proof, "allow_shorter": True},
    )
    assert (replaced.status_code, replaced.json()["status"]) == (200, "updated")
    patched = api.call(
        "patch",
        f"memories/{memory.pk}/",
        {
            "content": edited[:200],
            "expected_version": 2,
            "expected_sha256": text_sha256(edited),
            "allow_shorter": True,
        },
    )
    assert (patched.status_code, patched.json()["status"]) == (200, "updated")
    assert Memory.objects.get(pk=memory.pk).content == edited[:200]


def test_full_read_merge_and_replace_with_etag_succeeds(api, agent, make):
    memory = make.memory(agent, LONG)
    read = api.call("get", f"memories/{memory.pk}/")
    full = read.json()["record"]["content"]
    digest = read.json()["record"]["content_sha256"]
    merged = full.replace("every spring", "every autumn")
    answer = api.call(
        "post",
        f"memories/{memory.pk}/replace/",
        {"text": merged, "expected_sha256": digest},
        if_match=read["ETag"],
    )
    assert answer.status_code == 200, answer.json()
    assert answer.json()["status"] == "updated"
    assert answer["ETag"] == '"2"'
    assert Memory.objects.get(pk=memory.pk).content.endswith("TAIL: allergic.")

    stale = api.call(
        "post", f"memories/{memory.pk}/replace/", {"text": full}, if_match=read["ETag"]
    )
    assert (stale.status_code, stale.json()["current_version"]) == (412, 2)


def test_a_query_over_the_limit_is_refused_naming_the_limit(api, agent, make, settings):
    """Regression: q had no maximum, and embedding a 50,000-character query took 50 s."""
    limit = settings.MEMORYADMIN["MAX_QUERY_LENGTH"]
    make.memory(agent, "The user likes tea.")
    at_limit = api.get("/api/v1/memories/", {"q": ("tea " * limit)[:limit]})
    assert at_limit.status_code == 200
    answer = api.get("/api/v1/memories/", {"q": "tea " * 5000})
    assert answer.status_code == 400
    body = answer.json()
    assert body["status"] == "invalid"
    assert str(limit) in body["message"] and body["message"].startswith("q:")


def test_a_tool_query_over_the_limit_is_refused_naming_the_limit(api, agent, settings):
    limit = settings.MEMORYADMIN["MAX_QUERY_LENGTH"]
    definition = api.call("get", "tools/recall_memories/").json()["tool"]
    assert definition["function"]["parameters"]["properties"]["query"]["maxLength"] == limit
    answer = api.call("post", "tools/recall_memories/", {"query": "x" * 20_000})
    assert answer.status_code == 400
    assert answer.json()["status"] == "invalid"
    assert answer.json()["message"] == f"query: 20000 characters long; the limit is {limit}."


def test_a_tool_offset_past_the_database_range_is_refused_not_a_500(api, agent, make):
    """Regression: the REST lists were bounded, the recall tool's offset was not, and 10**20
    overflowed the database's OFFSET (a 500)."""
    make.memory(agent, "The user likes tea.")
    for arguments in ({"offset": 10**20}, {"offset": 10**20, "query": "tea"}):
        answer = api.call("post", "tools/recall_memories/", arguments)
        assert (answer.status_code, answer.json()["status"]) == (400, "invalid")
        assert "offset" in answer.json()["message"]
    last = api.call("post", "tools/recall_memories/", {"offset": 2**31 - 1}).json()
    assert (last["status"], last["count"], last["results"]) == ("ok", 1, [])
