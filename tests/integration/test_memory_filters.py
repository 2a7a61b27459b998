"""Every door filters memories alike: the REST recall, the recall tool and the web list.

One data set, one case per filter (and a few together); each door is asked in its own
words and must list the same memories. The web list used to match a category whatever its
case, a subject by display name, and showed memories superseded by another.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from stores.engine.actors import Actor
from stores.engine.sources import Source
from stores.models import Memory
from stores.selectors.filters import MEMORY_FILTERS
from stores.services import memory_invalidate, record_edit
from tests.api.conftest import client_for
from tests.factories import SubjectFactory, UserFactory, agent_token

pytestmark = pytest.mark.django_db

PARAM = {spec.name: spec.param for spec in MEMORY_FILTERS}

# (filters by MemoryFilters name, the memories each door must list)
CASES: list[tuple[dict[str, Any], set[str]]] = [
    ({}, {"jazz", "rock", "birthday", "episode", "new"}),
    ({"category": "taste"}, {"jazz", "episode"}),
    ({"category": "Taste"}, {"rock"}),
    ({"store": "episodic"}, {"episode"}),
    ({"tag": "music"}, {"jazz", "episode"}),
    ({"tag": "mus"}, set()),
    ({"subject": "u-1"}, {"birthday"}),
    ({"subject": "Sam"}, set()),
    ({"subject": "shared"}, {"jazz", "rock", "episode", "new"}),
    ({"importance_min": 0.5}, {"jazz", "birthday", "episode"}),
    ({"importance_max": 0.5}, {"rock", "birthday", "new"}),
    ({"include_invalidated": True}, {"jazz", "rock", "birthday", "episode", "old", "moved", "new"}),
    ({"query": "address"}, {"new"}),
    ({"query": "address", "include_invalidated": True}, {"old", "new"}),
    ({"query": "likes", "category": "taste", "importance_min": 0.5}, {"jazz"}),
    ({"store": "working", "tag": "music", "subject": "shared"}, {"jazz"}),
    ({"source_conversation": "c-9"}, {"rock"}),
    ({"source_conversation": "c-1"}, set()),
]


@pytest.fixture
def memories(agent, other_agent, make) -> dict[str, Memory]:
    person = SubjectFactory(agent=agent, external_id="u-1", display_name="Sam")
    made = {
        "jazz": make.memory(agent, "Likes jazz.", category="taste", tags=["music"], importance=0.9),
        "rock": make.memory(agent, "Likes rock.", category="Taste", tags=["loud"], importance=0.2),
        "birthday": make.memory(
            agent, "Birthday in May.", category="dates", subject=person, importance=0.5
        ),
        "episode": make.memory(
            agent,
            "An episode.",
            store="episodic",
            category="taste",
            tags=["music"],
            importance=0.6,
        ),
        "old": make.memory(agent, "Old address.", importance=0.3),
        "moved": make.memory(agent, "Moved house.", importance=0.3),
        "new": make.memory(agent, "New address.", importance=0.3),
    }
    make.memory(other_agent, "Likes jazz too.", category="taste", tags=["music"])
    memory_invalidate(agent=agent, ref=made["old"].pk, actor=Actor.maintainer("tests"))
    in_conversation = Actor.maintainer("tests").with_source(Source(conversation="c-9"))
    edited = record_edit(
        surface_key="memory",
        agent=agent,
        ref=made["rock"].pk,
        actor=in_conversation,
        old_string="rock",
        new_string="hard rock",
    )
    assert edited.ok, edited
    # An import links a successor without an invalidation time: superseded all the same.
    Memory.objects.filter(pk=made["moved"].pk).update(superseded_by=made["new"])
    return made


def through_api(agent, filters: dict[str, Any]) -> list[int]:
    query = {PARAM[name]: _as_text(value) for name, value in filters.items()}
    answer = client_for(agent_token(agent)[1]).get("/api/v1/memories/", query)
    assert answer.status_code == 200, answer.json()
    return [hit["id"] for hit in answer.json()["results"]]


def through_tool(agent, filters: dict[str, Any]) -> list[int]:
    answer = client_for(agent_token(agent)[1]).post(
        "/api/v1/tools/recall_memories/", filters, format="json"
    )
    assert answer.status_code == 200, answer.json()
    return [hit["id"] for hit in answer.json()["results"]]


def through_web(agent, filters: dict[str, Any]) -> list[int]:
    client = Client()
    client.force_login(UserFactory(is_staff=True))
    query = {PARAM[name]: _as_text(value) for name, value in filters.items()}
    # The list asks for include_invalidated with its three-way choice.
    if query.pop("include_invalidated", None) == "true":
        query["invalidated"] = "include"
    page = client.get(reverse("web:record_list", args=[agent.name, "memory"]), query)
    assert page.status_code == 200, page.context["refused"]
    return [row.pk for row, _ in page.context["rows"]]


def _as_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@pytest.mark.parametrize("door", [through_api, through_tool, through_web])
@pytest.mark.parametrize(("filters", "expected"), CASES)
def test_every_door_lists_the_same_memories(agent, memories, door, filters, expected):
    by_id = {memory.pk: name for name, memory in memories.items()}
    assert {by_id[pk] for pk in door(agent, filters)} == expected


def test_the_cases_cover_every_declared_filter():
    assert {name for filters, _ in CASES for name in filters} == set(PARAM)


def test_every_door_declares_each_filter_as_memory_filters_does(agent):
    """The REST parameters, the tool's JSON Schema and the web form come from one place."""
    api = client_for(agent_token(agent)[1])
    staff_client = Client()
    staff_client.force_login(UserFactory(is_staff=True))
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    parameters = {
        parameter["name"]: parameter
        for parameter in schema["paths"]["/api/v1/memories/"]["get"]["parameters"]
    }
    tool = api.get("/api/v1/tools/recall_memories/").json()["tool"]
    properties = tool["function"]["parameters"]["properties"]
    form = staff_client.get(reverse("web:record_list", args=[agent.name, "memory"])).context["form"]
    for spec in MEMORY_FILTERS:
        parameter, prop = parameters[spec.param], properties[spec.name]
        assert parameter["description"].startswith(spec.description)
        assert prop["description"] == spec.description
        # A text filter is the text (no NUL) or the empty string (either may match a blank).
        stated = parameter["schema"].get("anyOf", [parameter["schema"]])[0]
        assert stated.get("maxLength") == prop.get("maxLength") == spec.max_length
        assert stated.get("minimum") == prop.get("minimum") == spec.minimum
        # An empty text filter is no filter, and the schema says it may be sent.
        assert "minLength" not in parameter["schema"]
        if spec.choices:
            assert parameter["schema"]["enum"] == [value for value, _ in spec.choices] + [""]
            assert prop["enum"] == [value for value, _ in spec.choices]
        assert getattr(form.fields[spec.param], "max_length", None) == spec.max_length


def test_empty_filters_are_no_filters_at_every_door(agent, memories):
    everything = set(through_api(agent, {}))
    empty = {"category": "", "store": "", "tag": "", "subject": "", "query": ""}
    for door in (through_api, through_web):
        assert set(door(agent, empty)) == everything
    assert set(through_tool(agent, {k: v for k, v in empty.items() if k != "store"})) == everything
    blank = client_for(agent_token(agent)[1]).get(
        "/api/v1/memories/", {"tag": " ", "agent": "", "category": "  "}
    )
    assert blank.status_code == 200, blank.json()
    assert {hit["id"] for hit in blank.json()["results"]} == everything
    api = client_for(agent_token(agent)[1])
    revisions = api.get("/api/v1/revisions/", {"surface": ""})
    assert revisions.status_code == 200
    assert revisions.json()["count"] == api.get("/api/v1/revisions/").json()["count"] > 0


RECALLED = [
    "The user is allergic to peanuts and carries an EpiPen.",
    "Biscuit is the user's golden retriever.",
    "Deploys to production happen on Tuesdays after the standup.",
    "The user's daughter plays violin in the school orchestra.",
    "The office wifi password rotates every month.",
    "The courier code word is zanzibarite.",
]


def test_every_door_counts_only_the_memories_relevant_to_the_query(agent, make, settings):
    """Regression: the vector side ranked every memory, so the MCP recall
    said "6 memories match" for "Lyon", the REST count was 6 and the web list showed the
    nearest five. Now each door lists and counts the memories passing the cut-off."""
    from memoryadmin.mcp.results import summary
    from stores.services.embeddings import reembed_sweep

    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "EMBEDDINGS": {"BACKEND": "stores.embeddings.local.LocalE5Backend", "OPTIONS": {}},
    }
    for text in RECALLED:
        make.memory(agent, text)
    reembed_sweep()
    api = client_for(agent_token(agent)[1])
    staff = Client()
    staff.force_login(UserFactory(is_staff=True))
    for query in ("Lyon", "golden retriever", "peanuts allergy"):
        rest = api.get("/api/v1/memories/", {"q": query}).json()
        tool = api.post("/api/v1/tools/recall_memories/", {"query": query}, format="json").json()
        page = staff.get(reverse("web:record_list", args=[agent.name, "memory"]), {"q": query})
        counts = {rest["count"], tool["count"], page.context["page"].paginator.count}
        assert counts == {len(rest["results"])}, (query, counts)
        assert summary(tool).startswith(f"ok: {tool['count']} memories match the query")
        if query == "Lyon":
            assert counts == {0}
        else:
            assert rest["results"][0]["preview"] in RECALLED[:2]
