"""Tool-call endpoints: definitions for a model, and calls answered in each tool's own words."""

from __future__ import annotations

from unittest.mock import ANY

from stores.editing import text_sha256
from stores.models import Memory, Subject
from tests.factories import SubjectFactory

LONG = "Plans: " + "Lisbon each spring. " * 40 + "TAIL."


def test_tools_are_listed_as_function_definitions(api):
    answer = api.call("get", "tools/")
    assert answer.status_code == 200
    tools = {tool["function"]["name"]: tool for tool in answer.json()["tools"]}
    assert {
        "recall_memories",
        "read_record",
        "edit_record",
        "replace_record",
        "edit_memory",
        "edit_working_memory",
        "edit_skill",
        "edit_task_directive",
        "add_rule",
        "remove_rule",
        "memory_edit",
        "update_long_term_memory",
    } <= set(tools)
    edit = tools["edit_memory"]
    assert edit["type"] == "function"
    assert edit["function"]["parameters"]["required"] == ["id", "old_string", "new_string"]
    assert "re-read" in tools["edit_record"]["function"]["description"] or (
        "read the record again" in tools["edit_record"]["function"]["description"]
    )
    assert "preview" in tools["replace_record"]["function"]["description"].lower()


def test_unknown_tool_is_404_and_bad_arguments_are_400(api):
    assert api.call("post", "tools/no_such_tool/", {}).status_code == 404
    answer = api.call("post", "tools/edit_memory/", {"id": 1})
    assert (answer.status_code, answer.json()["status"]) == (400, "invalid")


def test_an_unknown_argument_names_the_accepted_ones_and_the_closest(api, agent, make):
    memory = make.memory(agent, "Likes tea.")

    answer = api.call(
        "post",
        "tools/edit_memory/",
        {"id": memory.pk, "old_string": "tea", "new_str": "coffee"},
    )

    assert (answer.status_code, answer.json()["status"]) == (400, "invalid")
    assert answer.json()["message"] == (
        "Unknown field 'new_str'; expected one of id, old_string, new_string, replace_all, source; "
        "did you mean 'new_string'?"
    )


def test_recall_then_read_then_edit_through_tools(api, agent, make):
    memory = make.memory(agent, LONG)
    recalled = api.call("post", "tools/recall_memories/", {"query": "lisbon"}).json()
    assert recalled["results"][0]["truncated"] is True
    read = api.call("post", "tools/read_record/", {"surface": "memory", "id": memory.pk}).json()
    assert read["record"]["content"] == LONG
    replaced = api.call(
        "post",
        "tools/replace_record/",
        {
            "surface": "memory",
            "id": memory.pk,
            "text": recalled["results"][0]["preview"],
            "expected_version": 1,
        },
    ).json()
    assert replaced["status"] == "precondition_required"
    assert "content_sha256" in replaced["message"]


def test_rockbot_edit_tools_resolve_names_and_keys(api, agent, make):
    memory = make.memory(agent)
    make.working(agent, key="focus", namespace="patrol")
    make.skill(agent, name="deploy")
    make.task(agent, name="morning")
    calls = [
        ("edit_memory", {"id": str(memory.pk), "old_string": "tea", "new_string": "mate"}),
        (
            "edit_working_memory",
            {"key": "focus", "namespace": "patrol", "old_string": "patrol", "new_string": "x"},
        ),
        ("edit_skill", {"name": "deploy", "old_string": "Run it.", "new_string": "Ship it."}),
        (
            "edit_task_directive",
            {"name": "morning", "old_string": "overnight", "new_string": "weekend"},
        ),
        ("add_rule", {"rule": "Be brief."}),
        ("remove_rule", {"rule": "Be brief."}),
    ]
    for name, arguments in calls:
        answer = api.call("post", f"tools/{name}/", arguments)
        assert answer.status_code == 200
        assert answer.json()["status"] == "updated", (name, answer.json())
    missing = api.call(
        "post", "tools/edit_skill/", {"name": "nope", "old_string": "a", "new_string": "b"}
    )
    assert missing.json()["status"] == "not_found"
    ambiguous = api.call(
        "post",
        "tools/edit_memory/",
        {"id": memory.pk, "old_string": "e", "new_string": "E"},
    ).json()
    assert ambiguous["status"] == "ambiguous"
    assert ambiguous["count"] > 1


def test_memory_edit_answers_in_oh_my_pi_words(api, agent, make):
    working = make.memory(agent)
    episodic = make.memory(agent, "Met Bob in 2020.", store="episodic")
    fact = make.memory(agent, "Water boils at 100C.", store="fact")

    def call(**arguments):
        answer = api.call("post", "tools/memory_edit/", arguments)
        assert answer.status_code == 200, answer.json()
        return answer.json()

    on_fact = call(op="update", id=str(fact.pk), importance=0.9)
    assert on_fact["details"] == {"status": "not_editable", "store": "fact", "bank": "shared"}
    assert on_fact["content"][0]["type"] == "text"

    on_episodic = call(op="forget", id=str(episodic.pk))
    assert on_episodic["details"]["status"] == "not_found"
    assert on_episodic["details"]["store"] == "episodic"

    clamped = call(op="update", id=str(working.pk), importance=3)
    assert clamped["status"] == "updated"
    assert clamped["details"]["clamped"] is True
    assert Memory.objects.get(pk=working.pk).importance == 1.0

    updated = call(op="update", id=str(working.pk), content="The user prefers mate.")
    assert updated["details"] == {
        "status": "updated",
        "store": "working",
        "bank": "shared",
        "id": working.pk,
        "version": 3,
        "revision": updated["details"]["revision"],
    }
    assert call(op="invalidate", id=str(episodic.pk))["status"] == "invalidated"
    assert call(op="forget", id=str(working.pk))["status"] == "deleted"
    assert call(op="forget", id="424242") == {
        "status": "not_found",
        "content": [{"type": "text", "text": "Memory 424242 was not found."}],
        "details": {"status": "not_found"},
    }


def test_forgetting_a_successor_says_what_became_of_the_memory_it_superseded(api, agent, make):
    # The episodic memory is one this token may not forget or rewrite; forgetting its
    # successor clears only its link (it stays superseded), and every answer says so.
    old = make.memory(agent, "Met Bob in 2020.", store="episodic")
    new = make.memory(agent, "Met Bob in 2021.")
    invalidated = api.call(
        "post",
        "tools/memory_edit/",
        {"op": "invalidate", "id": str(old.pk), "replacement_id": str(new.pk)},
    )
    assert invalidated.json()["status"] == "invalidated"

    answer = api.call("post", "tools/memory_edit/", {"op": "forget", "id": str(new.pk)}).json()

    fresh = Memory.objects.get(pk=old.pk)
    assert (fresh.superseded_by_id, fresh.invalidated_at is not None) == (None, True)
    assert answer["status"] == "deleted"
    assert answer["details"]["unlinked"] == [
        {"surface": "memory", "id": old.pk, "version": fresh.version, "revision": ANY}
    ]
    said = answer["content"][0]["text"]
    assert f"memory {old.pk} changed (a superseded memory stays superseded)" in said


def test_forgetting_a_successor_over_rest_and_tomori_says_what_became_of_it(api, agent, make):
    for forget in (
        lambda memory: api.call("delete", f"memories/{memory.pk}/").json(),
        lambda memory: _tomori(api, memory_id=memory.pk, memory_content="{gone}"),
    ):
        old = make.memory(agent, "Met Bob in 2020.", store="episodic")
        new = make.memory(agent, "Met Bob in 2021.")
        assert (
            api.call("post", f"memories/{old.pk}/invalidate/", {"replacement_id": new.pk}).json()[
                "status"
            ]
            == "invalidated"
        )

        answer = forget(new)

        said = answer["message"]
        assert f"memory {old.pk} changed (a superseded memory stays superseded)" in said
        unlinked = answer.get("unlinked") or answer["data"]["unlinked"]
        assert [link["id"] for link in unlinked] == [old.pk]
        assert Memory.objects.get(pk=old.pk).superseded_by_id is None


def test_memory_edit_update_needs_content_or_importance(api, agent, make):
    memory = make.memory(agent)
    # Arguments that fit the schema: the refusal is the tool's answer, for the model to read.
    answer = api.call("post", "tools/memory_edit/", {"op": "update", "id": str(memory.pk)})
    assert answer.status_code == 200
    assert answer.json()["details"]["status"] == "invalid"
    assert "requires content or importance" in answer.json()["content"][0]["text"]
    assert Memory.objects.get(pk=memory.pk).version == 1


def test_memory_edit_refuses_a_truncated_preview(api, agent, make):
    memory = make.memory(agent, LONG)
    preview = api.call("get", "memories/?q=lisbon").json()["results"][0]["preview"]
    update = {"op": "update", "id": str(memory.pk), "content": preview}
    answer = api.call("post", "tools/memory_edit/", update).json()
    assert answer["status"] == "precondition_required"
    digest = api.call("get", f"memories/{memory.pk}/").json()["record"]["content_sha256"]
    answer = api.call("post", "tools/memory_edit/", {**update, "expected_sha256": digest}).json()
    assert answer["status"] == "suspected_truncation"
    assert Memory.objects.get(pk=memory.pk).content == LONG


def test_every_full_replacement_tool_refuses_an_edited_preview(api, agent, make):
    memory = make.memory(agent, LONG)
    preview = api.call("get", "memories/?q=lisbon").json()["results"][0]["preview"]
    edited = preview.removesuffix("…") + " Also water the ferns."
    # With the proof of a full read, the shape guard is the second line.
    proof = {"expected_sha256": text_sha256(LONG)}
    native = {"surface": "memory", "id": memory.pk, "text": edited, "expected_version": 1, **proof}
    answers = [
        api.call("post", "tools/replace_record/", native).json()["status"],
        api.call(
            "post",
            "tools/memory_edit/",
            {"op": "update", "id": memory.pk, "content": edited, **proof},
        ).json()["status"],
        api.call(
            "post",
            "tools/update_long_term_memory/",
            {"memory_id": memory.pk, "memory_content": edited, **proof},
        ).json()["status"],
    ]
    assert answers == [
        "suspected_truncation",
        "suspected_truncation",
        "memory_update_failed_suspected_truncation",
    ]
    assert Memory.objects.get(pk=memory.pk).content == LONG
    allowed = api.call("post", "tools/replace_record/", {**native, "allow_shorter": True}).json()
    assert allowed["status"] == "updated"
    assert Memory.objects.get(pk=memory.pk).content == edited


def test_allow_shorter_is_in_the_replace_tool_for_models_and_mcp(api):
    from memoryadmin.mcp.server import tool_definitions

    listed = {tool["function"]["name"]: tool for tool in api.call("get", "tools/").json()["tools"]}
    parameters = listed["replace_record"]["function"]["parameters"]["properties"]
    assert parameters["allow_shorter"]["type"] == "boolean"
    mcp = {tool.name: tool for tool in tool_definitions()}
    assert "allow_shorter" in mcp["replace_record"].input_schema["properties"]


def _tomori(api, **arguments):
    answer = api.call("post", "tools/update_long_term_memory/", arguments)
    assert answer.status_code == 200, answer.json()
    return answer.json()


def test_update_long_term_memory_updates_and_deletes(api, agent, make):
    memory = make.memory(agent)
    updated = _tomori(api, memory_id=memory.pk, memory_content="Prefers {bot} mate {junk}.")
    assert updated["status"] == "memory_updated_successfully"
    assert updated["success"] is True
    assert Memory.objects.get(pk=memory.pk).content == "Prefers {bot} mate ."

    deleted = _tomori(api, memory_id=memory.pk, memory_content="  {placeholder} ")
    assert deleted["status"] == "memory_deleted_successfully"
    assert deleted["data"]["deleted_content"] == "Prefers {bot} mate ."
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert _tomori(api, memory_id=memory.pk, memory_content="x")["status"] == (
        "memory_update_failed_not_found"
    )


def test_update_long_term_memory_resolves_the_target_user(api, agent, make):
    alice = SubjectFactory(agent=agent, display_name="Alice", aliases=["ally"])
    SubjectFactory(agent=agent, display_name="Sam", external_id="sam-1")
    SubjectFactory(agent=agent, display_name="Sam", external_id="sam-2")
    SubjectFactory(agent=agent, display_name="Relay", kind=Subject.Kind.BRIDGE)
    SubjectFactory(agent=agent, display_name="Tomori", kind=Subject.Kind.SELF)
    private = SubjectFactory(
        agent=agent, display_name="Priya", privacy_level=Subject.Privacy.PARTIAL
    )
    personal = make.memory(agent, "Alice likes tea.", subject=alice)
    shared = make.memory(agent, "The server likes tea.")
    secret = make.memory(agent, "Priya likes tea.", subject=private)

    def status(**arguments):
        return _tomori(api, **arguments)["status"]

    assert status(
        memory_id=personal.pk, memory_content="Alice likes mate.", target_user="ally"
    ) == ("memory_updated_successfully")
    assert status(memory_id=personal.pk, memory_content="x") == "memory_update_failed_not_found"
    assert status(memory_id=shared.pk, memory_content="x", target_user="Alice") == (
        "memory_update_failed_not_found"
    )
    assert status(memory_id=shared.pk, memory_content="x", target_user="Nobody") == (
        "memory_update_failed_user_not_found"
    )
    assert status(memory_id=shared.pk, memory_content="x", target_user="sam") == (
        "memory_update_failed_ambiguous_user"
    )
    assert status(memory_id=shared.pk, memory_content="x", target_user="Relay") == (
        "memory_update_failed_invalid_scope"
    )
    assert status(memory_id=shared.pk, memory_content="x", target_user="Tomori") == (
        "memory_update_failed_invalid_target"
    )
    assert status(memory_id=secret.pk, memory_content="Priya x.", target_user="Priya") == (
        "memory_update_failed_privacy_restricted"
    )
    agent.self_editing_enabled = False
    agent.save()
    assert status(memory_id=shared.pk, memory_content="x") == "memory_update_failed_disabled"


def test_edit_working_memory_defaults_to_the_session_namespace(api, agent, make):
    """Regression: the description said the namespace defaults to session, but the schema
    required it, so a call without it was refused as invalid."""
    entry = make.working(agent, key="focus", namespace="session", value="Reviewing the log.")
    tool = api.call("get", "tools/edit_working_memory/").json()["tool"]
    assert tool["function"]["parameters"]["required"] == ["key", "old_string", "new_string"]
    answer = api.call(
        "post",
        "tools/edit_working_memory/",
        {"key": "focus", "old_string": "log", "new_string": "patrol log"},
    )
    assert answer.status_code == 200, answer.json()
    assert answer.json()["status"] == "updated"
    entry.refresh_from_db()
    assert entry.value == "Reviewing the patrol log."


def test_rockbot_add_rule_goes_after_the_last_rule_and_skips_a_case_duplicate(api, agent):
    from stores.engine.actors import Actor
    from stores.models import RulesDocument
    from stores.services import record_create

    document = "# Rules\n\n- Be brief.\n\n## Why\nAgreed with Ann.\n"
    record_create(
        surface_key="rules",
        agent=agent,
        actor=Actor.maintainer("tests"),
        values={"content": document},
    )
    added = api.call("post", "tools/add_rule/", {"rule": "Cite sources."}).json()
    assert (added["status"], added["placed"], added["lines"]) == ("updated", "after_last_rule", [4])
    again = api.call("post", "tools/add_rule/", {"rule": "CITE SOURCES."}).json()
    assert again["status"] == "no_change" and again["existing_rule"]["line"] == 4
    assert RulesDocument.objects.get(agent=agent).content == document.replace(
        "- Be brief.\n", "- Be brief.\n- Cite sources.\n"
    )


def test_the_ttl_tool_refuses_a_float_id_as_any_other_wrong_type(api, agent, make):
    entry = make.working(agent)
    declared = api.call("get", "tools/set_working_memory_ttl/").json()["tool"]["function"]
    id_schema = declared["parameters"]["properties"]["id"]
    assert id_schema["type"] == ["integer", "string"]
    for wrong in (float(entry.pk), entry.pk + 0.5, 1e300, True, None, [entry.pk]):
        answer = api.call("post", "tools/set_working_memory_ttl/", {"id": wrong, "ttl": 60})
        assert (answer.status_code, answer.json()["status"]) == (400, "invalid"), wrong
        assert answer.json()["message"].startswith("id: ")
    taken = api.call("post", "tools/set_working_memory_ttl/", {"id": entry.pk, "ttl": 60})
    assert taken.json()["status"] == "updated"


def test_a_null_source_is_refused_as_its_schema_says(api, agent, make):
    # The source is an object or left out, in a tool's schema as in a REST body's.
    memory = make.memory(agent, "Likes tea.")
    tool = api.call("get", "tools/reinforce_memory/").json()["tool"]["function"]
    assert tool["parameters"]["properties"]["source"]["type"] == "object"
    for path, body in (
        ("tools/reinforce_memory/", {"id": memory.pk, "source": None}),
        (f"memories/{memory.pk}/", {"importance": 0.5, "source": None}),
    ):
        answer = api.call("post" if path.startswith("tools") else "patch", path, body)
        assert (answer.status_code, answer.json()["status"]) == (400, "invalid"), path
        assert "source" in answer.json()["message"]
    assert Memory.objects.get(pk=memory.pk).version == memory.version
