"""The schema says exactly what the server takes: a value it allows is not refused as invalid,
and a refusal of a value it allows is an answer about the record (422), as schemathesis'
data-acceptance checks hold it (schemathesis.toml)."""

from __future__ import annotations

import re

import pytest

from stores.services import Actor, rules_add
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


def test_an_empty_old_string_the_schema_allows_is_an_answer_about_the_text(api, agent, make):
    # It fills an empty text; in a text it matches nothing, as any phrase the text lacks.
    skill = make.skill(agent)
    answer = api.call("post", f"skills/{skill.pk}/edit/", {"old_string": "", "new_string": "x"})
    assert (answer.status_code, answer.json()["status"]) == (422, "no_match")
    assert "only fills an empty text" in answer.json()["message"]
