"""A record's whole text is `content` in replace as in create; `text` still works."""

import pytest

from memoryadmin.mcp.server import tool_definitions
from stores.models import Memory


@pytest.mark.parametrize("name", ["content", "text"])
def test_replace_takes_the_text_under_its_name_or_its_alias(api, agent, make, name):
    memory = make.memory(agent, "Takes tea without sugar.")
    rest = api.call(
        "post",
        f"memories/{memory.pk}/replace/",
        {name: "Takes coffee with oat milk.", "expected_version": 1},
    )
    assert rest.status_code == 200, rest.json()
    tool = api.call(
        "post",
        "tools/replace_record/",
        {"surface": "memory", "id": memory.pk, name: "Takes mate.", "expected_version": 2},
    )
    assert tool.json()["status"] == "updated", tool.json()
    assert Memory.objects.get(pk=memory.pk).content == "Takes mate."


def test_every_schema_states_content_and_not_the_alias(api):
    listed = {tool["function"]["name"]: tool for tool in api.call("get", "tools/").json()["tools"]}
    mcp = {tool.name: tool for tool in tool_definitions()}
    schema = api.call("get", "/api/schema/?format=json").json()["components"]["schemas"]
    stated = [
        set(listed["replace_record"]["function"]["parameters"]["properties"]),
        set(mcp["replace_record"].input_schema["properties"]),
        set(schema["MemoryReplaceInputRequest"]["properties"]),
    ]
    assert all("content" in names and "text" not in names for names in stated)


def test_both_names_at_once_are_refused_naming_the_alias(api, agent, make):
    memory = make.memory(agent, "Takes tea without sugar.")
    both = {"content": "Takes coffee.", "text": "Takes mate.", "expected_version": 1}
    answer = api.call("post", f"memories/{memory.pk}/replace/", both)
    assert answer.status_code == 400
    assert answer.json()["status"] == "invalid"
    assert "text: Unknown field" in answer.json()["message"], answer.json()
    assert Memory.objects.get(pk=memory.pk).content == "Takes tea without sugar."
