"""The schema says exactly what the server takes: a value it allows is not refused as invalid,
and a refusal of a value it allows is an answer about the record (422), as schemathesis'
data-acceptance checks hold it (schemathesis.toml)."""

from __future__ import annotations

import json
import re
from functools import cache

import pytest
from jsonschema import Draft4Validator, Draft7Validator
from schemathesis.specs.openapi.warnings import enforced_pattern

from stores.engine.actors import Actor
from stores.services import rules_add
from tests.api.conftest import client_for

RULE_TEXTS = {
    "v1_rules_add_rule_create": ("rule",),
    "v1_rules_remove_rule_create": ("rule",),
    "v1_rules_replace_rule_create": ("rule", "new_rule"),
}


def _body_schema(schema: dict, operation_id: str) -> dict:
    for methods in schema["paths"].values():
        for operation in methods.values():
            if isinstance(operation, dict) and operation.get("operationId") == operation_id:
                reference = operation["requestBody"]["content"]["application/json"]["schema"]
                return schema["components"]["schemas"][reference["$ref"].rsplit("/", 1)[1]]
    raise AssertionError(f"no operation {operation_id}")


@pytest.mark.parametrize("operation_id", RULE_TEXTS)
def test_a_blank_rule_is_outside_the_schema_and_refused_as_invalid(api, agent, operation_id, db):
    schema = client_for().get("/api/schema/?format=json").json()
    properties = _body_schema(schema, operation_id)["properties"]
    document = rules_add(agent=agent, actor=Actor.maintainer("tests"), rule="Be kind.").id
    op = operation_id.removeprefix("v1_rules_").removesuffix("_create")
    for name in RULE_TEXTS[operation_id]:
        declared = properties[name]
        assert declared["minLength"] == 1
        for blank in ("", "  \n"):
            assert not re.search(declared["pattern"], blank)
            body = {"rule": "Be kind.", "new_rule": "Be brief.", name: blank}
            answer = api.call("post", f"rules/{document}/{op}/", body)
            assert (answer.status_code, answer.json()["status"]) == (400, "invalid")
            assert name in answer.json()["message"]
        assert re.search(declared["pattern"], " Be kind.")


def test_an_empty_old_string_on_a_text_is_a_parameter_error(api, agent, make):
    """It fills an empty text; on a text, `invalid` (a parameter the agent can correct), as the
    memory tools' own tests expect (RockBot, OpenHands); it was `no_match`."""
    skill = make.skill(agent)
    answer = api.call("post", f"skills/{skill.pk}/edit/", {"old_string": "", "new_string": "x"})
    assert (answer.status_code, answer.json()["status"]) == (400, "invalid")
    assert "only fills an empty text" in answer.json()["message"]


@cache
def _served_schema() -> dict:
    # Built from the code alone (no database, no setting a test changes): once is enough.
    return client_for().get("/api/schema/?format=json").json()


def _query_parameter(schema: dict, path: str, name: str) -> dict:
    (declared,) = [p for p in schema["paths"][path]["get"]["parameters"] if p["name"] == name]
    return declared["schema"]


def _valid(declared: dict, value: object) -> bool:
    return Draft4Validator(declared).is_valid(value)


def test_an_empty_agent_parameter_is_in_the_schema_and_taken_as_no_choice(api, agent, db):
    # A token reads its own agent's feed: `?agent=` left empty, or naming that agent, is
    # taken; another agent's name is answered as one this token cannot see.
    schema = _served_schema()
    for path in ("/api/v1/changes/", "/api/v1/memories/", "/api/v1/revisions/"):
        declared = _query_parameter(schema, path, "agent")
        assert _valid(declared, "") and _valid(declared, agent.name)
        assert not _valid(declared, "a\x00b")
    for query, status in (("", 200), (agent.name, 200), (str(agent.pk), 200), ("nobody", 404)):
        assert api.call("get", f"changes/?agent={query}").status_code == status, query


# Refused by the service (a loopback, private or reserved address; an empty or overlong
# label), or taken; each URL must fall on the same side of the schema's pattern.
WEBHOOK_URLS = {
    "https://hooks.example.com/memoryadmin/abc": True,
    "http://xn--bcher-kva.example:8443/h?x=1#f": True,
    "https://8.8.8.8/hook": True,
    "https://100.63.255.255/": True,
    "https://100.128.0.0/": True,
    "https://10.0.0.1.example/": True,
    "https://example.com./": True,
    "https://0.0.0.0/": False,
    "https://10.1.2.3:443/": False,
    "https://100.64.0.0/": False,
    "https://100.127.255.255/": False,
    "https://127.0.0.1/": False,
    "https://169.254.169.254/latest": False,
    "https://172.31.255.255/": False,
    "https://192.0.0.8/": False,
    "https://192.168.1.1/": False,
    "https://198.19.0.1/": False,
    "https://224.0.0.1/": False,
    "https://255.255.255.255/": False,
    "https://a..example/": False,
    "https://.example/": False,
    "https://" + "a" * 64 + ".example/": False,
    "https://\u00ce\u0081/hook": False,
    "https://b\u00fccher.example/": False,
    "https://[::1]/": False,
    "https://user:pw@example.com/": False,
    "ftp://example.com/": False,
}


@pytest.mark.parametrize("url", WEBHOOK_URLS)
def test_a_webhook_url_the_schema_allows_is_taken_and_one_it_refuses_is_refused(api, url, db):
    schema = _served_schema()
    body = schema["components"]["schemas"]["WebhookInputRequest"]
    declared = body["properties"]["url"]
    answer = api.call("post", "webhooks/", {"url": url})
    assert _valid(declared, url) is WEBHOOK_URLS[url]
    assert (answer.status_code, answer.json()["status"]) == (
        (201, "created") if WEBHOOK_URLS[url] else (400, "invalid")
    ), answer.content


# Sources a write is given: taken (True) or refused as invalid, by every door alike.
SOURCES = [
    ({"conversation": "c-1", "platform": "discord", "excerpt": "I said:\n\ttea"}, True),
    ({"url": "https://discord.com/channels/1/2/3"}, True),
    ({"url": " HTTP://example.org/a?b#c "}, True),
    ({"url": ""}, True),
    ({"url": "http://[::1]:8/"}, True),
    ({"x-extra": "1"}, False),
    ({"platform": "dis\x07cord"}, False),
    ({"conversation": "c\u0085"}, False),
    ({"message": "m\n"}, True),
    ({"message": "m\n\n"}, False),
    ({"message": "\nm"}, False),
    ({"excerpt": "a\x00b"}, False),
    ({"url": "https://example.org/a b"}, False),
    ({"url": "https://"}, False),
    ({"url": "https:///path"}, False),
    ({"url": "javascript:alert(1)"}, False),
    ({"url": "https://example.org/\u2028"}, True),
    ({"url": "https://example.org/\u2028a"}, False),
    ({"url": 5}, False),
]


@pytest.mark.parametrize(("source", "taken"), SOURCES)
def test_a_source_the_schemas_allow_is_taken_and_one_they_refuse_is_refused(
    api, agent, make, source, taken
):
    schema = _served_schema()
    body = schema["components"]["schemas"]["PatchedMemoryUpdateInputRequest"]
    tool = api.call("get", "tools/reinforce_memory/").json()["tool"]["function"]["parameters"]
    memory = make.memory(agent, "Likes tea.")
    assert _valid(body["properties"]["source"], source) is taken
    assert _valid(tool["properties"]["source"], source) is taken
    for method, path, arguments in (
        ("patch", f"memories/{memory.pk}/", {"importance": 0.25}),
        ("post", "tools/reinforce_memory/", {"id": memory.pk}),
    ):
        answer = api.call(method, path, {**arguments, "source": source})
        refused = (answer.status_code, answer.json()["status"]) == (400, "invalid")
        assert refused is not taken, (path, answer.content)


def _objects(schema: object):
    """Every object within `schema`, itself included, at any depth."""
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from _objects(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _objects(item)


def _patterns(schema: object):
    return (found["pattern"] for found in _objects(schema) if isinstance(found.get("pattern"), str))


def test_every_pattern_of_the_schema_is_one_a_test_data_generator_can_use():
    # A pattern schemathesis cannot use is dropped: it then sends values outside it, and the
    # refusals read as a schema that says less than the server takes.
    unusable = {p for p in _patterns(_served_schema()) if enforced_pattern(p) is None}
    assert unusable == set()


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/api/v1/changes/", "wait"),
        ("/api/v1/changes/", "limit"),
        ("/api/v1/memories/", "offset"),
        ("/api/v1/revisions/", "record_id"),
    ],
)
def test_a_decimal_in_a_query_integer_is_outside_the_schema_and_refused(api, path, name):
    declared = _query_parameter(_served_schema(), path, name)
    for decimal in ("0.0", "1.0", "1e2", " 1"):
        assert not _valid(declared, decimal)
        answer = api.call("get", f"{path}?{name}={decimal}")
        assert (answer.status_code, answer.json()["status"]) == (400, "invalid"), decimal
    assert api.call("get", f"{path}?{name}=1").status_code == 200


# A conversation named on its own: taken (True: an answer about the agent's writes) or refused
# as invalid, as the schema's pattern says.
CONVERSATIONS = {
    "8121": True,
    " c-1 ": True,
    "c\n": True,
    "": False,
    "   ": False,
    "c\x00": False,
    "c\u0085d": False,
    "\nc": False,
}


@pytest.mark.parametrize("conversation", CONVERSATIONS)
def test_a_conversation_to_take_back_or_hold_the_schema_allows_is_not_refused(
    api, agent, staff_user, conversation
):
    schema = _served_schema()["components"]["schemas"]
    person = client_for()
    person.force_login(staff_user)
    for component, client, path in (
        ("TakebackInputRequest", api, "sources/takeback/"),
        ("HoldConversationInputRequest", person, f"sources/hold/?agent={agent.name}"),
    ):
        declared = schema[component]["properties"]["conversation"]
        answer = client.call("post", path, {"conversation": conversation})
        refused = (answer.status_code, answer.json()["status"]) == (400, "invalid")
        assert _valid(declared, conversation) is CONVERSATIONS[conversation], component
        assert refused is not CONVERSATIONS[conversation], (path, answer.content)


def test_every_operation_declares_the_refusals_every_request_may_get():
    for path, methods in _served_schema()["paths"].items():
        for method, operation in methods.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            names = {parameter["name"] for parameter in operation.get("parameters", [])}
            expected = {"401", "429"} | ({"400", "409"} if "Idempotency-Key" in names else set())
            assert expected <= set(operation["responses"]), (method, path)


def test_an_idempotency_key_reused_for_another_webhook_is_a_declared_conflict(api):
    schema = _served_schema()
    declared = schema["paths"]["/api/v1/webhooks/"]["post"]["responses"]
    key = {"Idempotency-Key": "k"}
    first = api.call("post", "webhooks/", {"url": "https://a.example/h"}, **key)
    again = api.call("post", "webhooks/", {"url": "https://b.example/h"}, **key)
    assert first.status_code == 201
    assert (again.status_code, again.json()["status"]) == (409, "conflict")
    assert "409" in declared


def test_a_merge_beyond_its_bounds_is_outside_the_schema_and_refused(api, agent, make):
    schema = _served_schema()["components"]["schemas"]
    declared = schema["MemoryMergeInputRequest"]["properties"]["from"]
    kept = make.memory(agent, "Likes tea.")
    for merged in ([], [2] * 51, ["a" * 256]):
        assert not _valid(declared, merged)
        answer = api.call("post", f"memories/{kept.pk}/merge/", {"from": merged})
        assert (answer.status_code, answer.json()["status"]) == (400, "invalid"), merged
    assert _valid(declared, [2] * 50) and _valid(declared, ["a" * 255])


def test_every_text_of_a_tool_call_holds_no_nul_as_its_schema_says(api, agent, make):
    paths = _served_schema()["paths"]
    calls = [path for path in paths if path.startswith("/api/v1/tools/") and "post" in paths[path]]
    assert len(calls) > 20
    for path in calls:
        body = paths[path]["post"]["requestBody"]["content"]["application/json"]["schema"]
        for text in (found for found in _objects(body) if found.get("type") == "string"):
            assert {"pattern", "format", "enum"} & set(text), (path, text)
    body = paths["/api/v1/tools/update_record/"]["post"]["requestBody"]
    tags = body["content"]["application/json"]["schema"]["properties"]["tags"]
    memory = make.memory(agent)
    arguments = {"surface": "memory", "id": memory.pk, "tags": ["tea", "a\x00b"]}
    answer = api.call("post", "tools/update_record/", arguments)
    assert not _valid(tags, ["tea", "a\x00b"])
    assert (answer.status_code, answer.json()["status"]) == (400, "invalid")


def test_a_webhook_body_takes_only_its_fields(api):
    schema = _served_schema()["components"]["schemas"]
    for component in ("WebhookInputRequest", "PatchedWebhookChangeRequest"):
        assert schema[component]["additionalProperties"] is False
    url = "https://hooks.example.com/h"
    for body in ({"url": url, "colour": "red"}, {"url": url, "a\x00b": 1}):
        refused = api.call("post", "webhooks/", body)
        assert (refused.status_code, refused.json()["status"]) == (400, "invalid"), body
    created = api.call("post", "webhooks/", {"url": url}).json()
    refused = api.call("patch", f"webhooks/{created['id']}/", {"enabled": "yes"})
    assert (refused.status_code, refused.json()["status"]) == (400, "invalid")


def _with_components(schema: dict) -> dict:
    """`schema` with the components it refers to, as JSON Schema's definitions."""
    whole = {**schema, "definitions": _served_schema()["components"]["schemas"]}
    return json.loads(json.dumps(whole).replace("#/components/schemas/", "#/definitions/"))


def test_free_form_metadata_holds_no_nul_at_any_depth_as_its_schema_says(api, agent, make):
    paths = _served_schema()["paths"]
    tool = paths["/api/v1/tools/update_record/"]["post"]["requestBody"]
    declared = [
        _served_schema()["components"]["schemas"]["MemoryCreateInputRequest"]["properties"][
            "metadata"
        ],
        tool["content"]["application/json"]["schema"]["properties"]["metadata"],
    ]
    memory = make.memory(agent)
    for metadata in ({"a\x00": 1}, {"a": ["x", "y\x00"]}, {"a": {"b": {"c": "d\x00"}}}):
        for schema in declared:
            assert not Draft7Validator(_with_components(schema)).is_valid(metadata)
        answer = api.call("patch", f"memories/{memory.pk}/", {"metadata": metadata})
        assert (answer.status_code, answer.json()["status"]) == (400, "invalid"), metadata
    taken = {"a": 1.5, "b": [1, "x", True], "c": {"d": {"e": "f"}}}
    for schema in declared:
        assert Draft7Validator(_with_components(schema)).is_valid(taken)
    assert api.call("patch", f"memories/{memory.pk}/", {"metadata": taken}).status_code == 200


def test_a_blank_rule_is_whitespace_as_the_services_strip_it():
    pattern = _body_schema(_served_schema(), "v1_rules_remove_rule_create")["properties"]["rule"][
        "pattern"
    ]
    spaces = [chr(code) for code in range(0x3001) if chr(code).isspace()]
    assert all(not re.search(pattern, space * 2) for space in spaces)
    for taken in ("Be kind.", " \u001dBe kind.", "\ufeff", "a\u0085b"):
        assert re.search(pattern, taken), taken
    assert not re.search(pattern, "Be\x00kind.")


NAMED_STRINGS = ("section", "heading", "category")


def _named_properties(schema: object) -> list[tuple[str, dict]]:
    return [
        (name, found["properties"][name])
        for found in _objects(schema)
        if isinstance(found.get("properties"), dict)
        for name in NAMED_STRINGS
        if isinstance(found["properties"].get(name), dict)
        and found["properties"][name].get("type") == "string"
    ]


def test_a_blank_section_heading_or_category_is_outside_every_schema_as_refused(api, make, agent):
    """Regression: the schemas allowed "   " as a heading, section or category, and the server
    refused it as blank."""
    from stores.tools.registry import all_tools

    requests = [
        component
        for name, component in _served_schema()["components"]["schemas"].items()
        if name.endswith("Request")
    ]
    declared = _named_properties(requests) + _named_properties(
        [tool.parameters for tool in all_tools() if tool.writes]
    )
    assert {name for name, _ in declared} == set(NAMED_STRINGS)
    for name, schema in declared:
        assert schema["minLength"] == 1, name
        assert not any(_valid(schema, blank) for blank in ("", "   ", "\t\n")), name
        assert _valid(schema, " Steps"), name

    skill = make.skill(agent)
    answer = api.call("post", f"skills/{skill.pk}/delete_section/", {"heading": "   "})
    assert (answer.status_code, answer.json()["status"]) == (400, "invalid")
