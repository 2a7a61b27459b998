"""Every (surface, op) of the catalog succeeds through every door, walked from CATALOG.

Each op is called through the REST API, the tools endpoint, MCP and the record page with a
body built from its own declared parameters, on a record of its own made for it (and, where
the op needs one, a value that suits it: a heading the skill has, a rule the document holds),
and must succeed; what must never come back is a door's "no such route, tool or op". The
record page must show each op's form.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone
from hypothesis import find
from hypothesis import strategies as st

from memoryadmin.mcp.server import _call, tool_definitions
from memoryadmin.web.ops import field_entries, record_page_ops, web_op
from stores.editing import Status
from stores.editing.status import SUCCESS_STATUSES
from stores.engine.actors import Actor
from stores.engine.policy import OPS_BY_STORE
from stores.models import AgentToken, VersionedRecord
from stores.opnames import OpName
from stores.ops.catalog import CATALOG, FIELD_PARAMS, OPS, Op, Place, Rest, Target
from stores.ops.params import Kind, Param
from stores.selectors.revisions import last_revision
from stores.services import record_create, record_edit, record_forget
from stores.surfaces import SURFACES
from stores.tools import all_tools
from tests.api.conftest import client_for
from tests.factories import agent_token

pytestmark = pytest.mark.django_db

SURFACES_OF = {spec.model: key for key, spec in SURFACES.items()}
STATUS_WORDS = {str(status) for status in Status}
SUCCESS_WORDS = {str(status) for status in SUCCESS_STATUSES}
MAINTAINER = Actor.maintainer("tests")
# Each pair is a test of its own (its own agent and records), so pytest-xdist spreads them.
PAIRS = [(op, key) for op in OPS for key in SURFACES if op.applies_to(key)]
PAIR_IDS = [f"{key}-{op.name}" for op, key in PAIRS]


def _sample(param: Param, record: VersionedRecord) -> Any:
    match param.kind:
        case Kind.VERSION:
            return record.version
        case Kind.INTEGER:
            return int(param.minimum or 1)
        case Kind.NUMBER:
            return 0.5
        case Kind.BOOLEAN:
            return True
        case Kind.CHOICE:
            return param.choices[0]
        case Kind.MOMENT:
            return (timezone.now() + dt.timedelta(days=1)).isoformat()
        case Kind.REF:
            return record.pk
        case Kind.REFS:
            # Another record of the agent (an op never takes a record with itself).
            other = record_create(
                surface_key=SURFACES_OF[type(record)],
                agent=record.agent,
                actor=MAINTAINER,
                values={"content": "Another sample memory."},
            )
            return [other.id]
        case Kind.TAGS:
            return ["sample"]
        case Kind.OBJECT | Kind.SOURCE:
            return {}
        case Kind.EDITS:
            return [{"old_string": "sample", "new_string": "example"}]
    if param.pattern:
        return _of_form(param.pattern, FORMED.get(param.name, "sample text"))
    return "sample text"


# Texts of the declared forms the catalog has today: searching a pattern for its simplest
# text takes tens of seconds for a cron line on a busy machine.
FORMED = {"schedule": "0 7 * * *", "path": "/memories/sample.md"}


@cache
def _of_form(pattern: str, known: str) -> str:
    """A text of the declared form (a cron line, a memory path, ...): the known one when it
    matches, else the simplest the pattern allows (a form added since)."""
    if re.fullmatch(pattern, known):
        return known
    return find(st.from_regex(pattern, fullmatch=True), lambda text: True)


def arguments(op: Op, key: str, record: VersionedRecord) -> dict[str, Any]:
    """The op's required parameters (and one of each group it needs), with sample values."""
    params = {param.name: param for param in op.params(key)}
    names = [name for name, param in params.items() if param.required]
    if op.one_of:
        names += op.one_of[0]
    if op.settable_fields:
        names.append(next(name for name in params if name in FIELD_PARAMS))
    values = {name: _sample(params[name], record) for name in dict.fromkeys(names)}
    if "revision_id" in values:
        values["revision_id"] = last_revision(record.agent, key, record.pk).pk
    suitable = {name: value for name, value in SUITABLE.get(op.name, {}).items() if name in params}
    if op.writes and op.target is not Target.SURFACE:
        suitable["expected_version"] = record.version
    return {**values, **suitable}


# What an op needs, beyond its required parameters' samples, to succeed on a sample record.
SUITABLE: dict[OpName, dict[str, Any]] = {
    OpName.EDIT: {"old_string": "sample", "new_string": "example"},
    OpName.SET_IMPORTANCE: {"importance": 0.75},
    OpName.REPLACE_SECTION: {"heading": "Steps"},
    OpName.DELETE_SECTION: {"heading": "Steps"},
    OpName.INSERT_BEFORE_SECTION: {"heading": "Steps"},
    OpName.INSERT_AFTER_SECTION: {"heading": "Steps"},
    OpName.REMOVE_RULE: {"rule": "A sample rule."},
    OpName.REPLACE_RULE: {"rule": "A sample rule."},
    OpName.REVERT: {"to": "before"},
}
SAMPLES = {
    "memory": {"content": "A sample memory."},
    "working": {"key": "k", "value": "A sample value."},
    "skill": {"name": "s", "content": "# Steps\n\nA sample skill.\n"},
    "task": {"name": "t", "schedule": "0 7 * * *", "directive": "A sample task."},
    "file": {"path": "/memories/sample.md", "content": "A sample file.\n"},
    "rules": {"content": "- A sample rule.\n"},
}


def suitable_record(agent, op: Op, key: str, door: str) -> VersionedRecord:
    """A record of `key` made for one call of `op` through `door`: unique where a name must
    be, with a phrase edit in its history where the op takes one back, and, for a create of
    the agent's one document, forgotten again so that the door's create is the first."""
    spec = SURFACES[key]
    document = spec.model.objects.filter(agent=agent).first() if spec.one_per_agent else None
    if document is not None:
        record_forget(surface_key=key, agent=agent, ref=document.pk, actor=MAINTAINER)
    values = dict(SAMPLES[key])
    for name in spec.natural_key or ():
        unique = f"{op.name}-{door}"
        values[name] = (
            f"/memories/{unique}.md" if name == "path" else f"{values.get(name, name)}-{unique}"
        )
    made = record_create(surface_key=key, agent=agent, actor=MAINTAINER, values=values)
    assert made.ok, (key, made)
    if op.name in (OpName.REVERT, OpName.UNDO):
        edited = record_edit(
            surface_key=key, agent=agent, ref=made.id, actor=MAINTAINER,
            old_string="sample", new_string="checked sample",
        )  # fmt: skip
        assert edited.ok, (key, edited)
    if op.name is OpName.CREATE and spec.one_per_agent:
        record_forget(surface_key=key, agent=agent, ref=made.id, actor=MAINTAINER)
        return made.record
    return spec.model.objects.get(pk=made.id)


def create_values(op: Op, key: str, record: VersionedRecord, door: str) -> dict[str, Any]:
    """A create's body: the required fields, each unique where the surface names by it."""
    values = arguments(op, key, record)
    spec = SURFACES[key]
    for name in spec.natural_key or ():
        if name in values:
            values[name] = f"/memories/new-{door}.md" if name == "path" else f"new-{door}"
    return values


def source_for(op: Op, key: str, door: str) -> dict[str, str]:
    return {"conversation": f"{door}-{op.name}-{key}", "platform": "catalog"}


def assert_sourced(agent, op: Op, key: str, record_id: int, door: str) -> None:
    """A write's revision carries the source the door was given."""
    if not op.writes:
        return
    revision = last_revision(agent, key, record_id)
    assert revision.source == source_for(op, key, door), (key, op.name, revision.source)


def test_every_op_word_is_in_the_catalog_or_bookkeeping():
    walked = {op.name for op in OPS}
    for allowed in OPS_BY_STORE.values():
        assert allowed is None or allowed <= walked


@pytest.mark.parametrize(("op", "key"), PAIRS, ids=PAIR_IDS)
def test_every_pair_succeeds_over_rest(agent, op: Op, key: str):
    client = client_for(agent_token(agent)[1])
    spec, record = SURFACES[key], suitable_record(agent, op, key, "rest")
    base = f"/api/v1/{spec.api_path}/"
    source = source_for(op, key, "rest")
    body = {**arguments(op, key, record), "source": source}
    match op.rest:
        case Rest.LIST:
            answer = client.get(base)
        case Rest.RETRIEVE:
            answer = client.get(f"{base}{record.pk}/")
        case Rest.CREATE:
            values = {**create_values(op, key, record, "rest"), "source": source}
            answer = client.post(base, values, format="json")
        case Rest.PARTIAL_UPDATE:
            answer = client.patch(f"{base}{record.pk}/", body, format="json")
        case Rest.DESTROY:
            # A delete has no body: its source comes in the session's header.
            header = "; ".join(f"{name}={value}" for name, value in source.items())
            answer = client.delete(f"{base}{record.pk}/", headers={"Memory-Source": header})
        case Rest.ACTION if not op.writes:
            answer = client.get(f"{base}{record.pk}/{op.name}/", body)
        case Rest.ACTION:
            answer = client.post(f"{base}{record.pk}/{op.name}/", body, format="json")
    data = answer.json()
    assert "No API endpoint" not in data.get("message", ""), (key, op.name)
    assert answer.status_code not in (404, 405) or data["status"] == "not_found", (
        key,
        op.name,
        data,
    )
    assert data["status"] in STATUS_WORDS, (key, op.name, data)
    assert data["status"] in SUCCESS_WORDS, (key, op.name, data)
    assert_sourced(agent, op, key, data.get("id") or record.pk, "rest")


def _tool_for(op: Op, key: str) -> tuple[str, dict[str, Any]]:
    assert op.tool is not None, f"{op.name} has no tool"
    tool = next(tool for tool in all_tools() if tool.name == op.tool.name)
    properties = tool.parameters["properties"]
    extra: dict[str, Any] = {}
    if "surface" in properties:
        assert key in properties["surface"]["enum"]
        extra["surface"] = key
    return tool.name, extra


def _tool_arguments(op: Op, key: str, record: VersionedRecord, door: str) -> dict[str, Any]:
    if op.name is OpName.CREATE:
        return create_values(op, key, record, door)
    values = arguments(op, key, record)
    if op.target is Target.RECORD:
        values["id"] = record.pk
    return values


@pytest.mark.parametrize(("op", "key"), PAIRS, ids=PAIR_IDS)
def test_every_pair_succeeds_through_the_tools_endpoint(agent, op: Op, key: str):
    client = client_for(agent_token(agent)[1])
    name, extra = _tool_for(op, key)
    record = suitable_record(agent, op, key, "tools")
    sourced = {"source": source_for(op, key, "tools")} if op.writes else {}
    answer = client.post(
        f"/api/v1/tools/{name}/",
        {**extra, **_tool_arguments(op, key, record, "tools"), **sourced},
        format="json",
    )
    assert answer.status_code == 200, (key, op.name, answer.json())
    assert answer.json()["status"] in STATUS_WORDS, (key, op.name, answer.json())
    assert answer.json()["status"] in SUCCESS_WORDS, (key, op.name, answer.json())
    assert_sourced(agent, op, key, answer.json().get("id") or record.pk, "tools")


@pytest.mark.parametrize(("op", "key"), PAIRS, ids=PAIR_IDS)
def test_every_pair_succeeds_over_mcp(agent, op: Op, key: str):
    token = AgentToken.objects.get(pk=agent_token(agent)[0].pk)
    listed = {tool.name: tool for tool in tool_definitions()}
    name, extra = _tool_for(op, key)
    assert name in listed
    record = suitable_record(agent, op, key, "mcp")
    arguments_ = {**extra, **_tool_arguments(op, key, record, "mcp")}
    if op.writes:
        arguments_["source"] = source_for(op, key, "mcp")
    result = _call(lambda request: token, None, name, arguments_)
    answer = result.structured_content
    assert answer["status"] in STATUS_WORDS, (key, op.name, answer)
    assert answer["status"] in SUCCESS_WORDS, (key, op.name, answer)
    assert_sourced(agent, op, key, answer.get("id") or record.pk, "mcp")


@pytest.mark.parametrize(("op", "key"), PAIRS, ids=PAIR_IDS)
def test_every_write_pair_is_an_op_of_the_record_page(agent, client, staff_user, op: Op, key: str):
    client.force_login(staff_user)
    record = suitable_record(agent, op, key, "page")
    if not op.writes and op.rest is not Rest.LIST:
        page = client.get(reverse("web:record_detail", args=[agent.name, key, record.pk]))
        assert page.status_code == 200
        return
    if op.rest is Rest.LIST:
        page = client.get(reverse("web:record_list", args=[agent.name, key]), follow=True)
        assert page.status_code == 200
        return
    if op.rest is Rest.CREATE:
        new = reverse("web:record_new", args=[agent.name, key])
        page = client.get(new, follow=True)
        assert page.status_code == 200
        if SURFACES[key].one_per_agent:
            # Opening the rules page writes nothing; its first rule stores the document.
            opened = client.get(reverse("web:record_list", args=[agent.name, key]))
            assert opened.status_code == 200
            assert not SURFACES[key].model.objects.filter(agent=agent).exists()
            first = client.post(
                reverse("web:record_op", args=[agent.name, key, 0, OpName.ADD_RULE]),
                {"rule": "A first rule."},
                headers={"HX-Request": "true"},
            )
            assert first.status_code == 200, first.content.decode()[:2000]
            assert SURFACES[key].model.objects.filter(agent=agent).exists()
            return
        made = client.post(new, create_values(op, key, record, "page"))
        assert made.status_code == 302, (key, made.content.decode()[:2000])
        return
    assert web_op(op.name, key) is not None, (key, op.name)
    values = arguments(op, key, record)
    if op.settable_fields:
        values["field"] = next(name for name in values if name != "expected_version")
    form = {
        name: json.dumps(value) if isinstance(value, dict | list) else value
        for name, value in values.items()
    }
    form.setdefault("expected_version", record.version)
    before = last_revision(agent, key, record.pk)
    answer = client.post(
        reverse("web:record_op", args=[agent.name, key, record.pk, op.name]),
        form,
        headers={"HX-Request": "true"},
    )
    assert answer.status_code in (200, 409, 422), (key, op.name, answer.status_code)
    assert b"is not an op the page offers" not in answer.content, (key, op.name)
    assert answer.status_code == 200, (key, op.name, answer.content.decode()[:2000])
    after = last_revision(agent, key, record.pk)
    assert after.pk != before.pk and after.op in (op.name, OpName.REPLACE), (key, op.name)


def test_the_record_page_shows_every_op_it_offers(agent, client, staff_user):
    client.force_login(staff_user)
    for key in SURFACES:
        record = suitable_record(agent, CATALOG[OpName.READ], key, "shown")
        page = client.get(reverse("web:record_detail", args=[agent.name, key, record.pk]))
        body = page.content.decode()
        text_ops, field_ops = record_page_ops(key)
        for entry in (*text_ops, *field_ops):
            if entry.op.settable_fields and not field_entries(entry.op, key, record):
                continue  # a text field is set by the text ops
            url = reverse("web:record_op", args=[agent.name, key, record.pk, entry.name])
            assert f'"{url}"' in body, (key, entry.name, entry.template)
        within = {op.name.value for op in OPS if op.page.place is Place.WITHIN}
        assert {entry.name for entry in text_ops} | within >= {
            op.name.value for op in OPS if op.applies_to(key) and op.previews
        } - {OpName.REVERT.value, OpName.UNDO.value}, key
        for op in OPS:
            if op.applies_to(key) and op.page.place is Place.WITHIN and op.page.button:
                url = reverse("web:record_op", args=[agent.name, key, record.pk, op.name])
                assert f'formaction="{url}"' in body, (key, op.name)
                assert op.page.button in body, (key, op.name)


def test_the_catalog_covers_every_rest_verb_and_tool():
    for key in SURFACES:
        verbs = {op.rest for op in OPS if op.applies_to(key)}
        assert {Rest.RETRIEVE, Rest.CREATE, Rest.PARTIAL_UPDATE, Rest.DESTROY} <= verbs
    native = {tool.name for tool in all_tools() if tool.family in ("native", "rockbot")}
    assert {op.tool.name for op in CATALOG.values() if op.tool} <= native


def test_a_field_no_entry_declares_is_typed_from_its_model_field():
    update = next(op for op in OPS if op.name is OpName.UPDATE)
    path = {param.name: param for param in update.params("file")}["path"]
    assert (path.kind, path.max_length) == (Kind.STRING, 1000)
    assert path.description == "The file's path, e.g. /memories/projects/heron.md."


def test_an_ops_parameters_are_built_once_per_surface():
    # Every request of an op reads them two or three times; they never change.
    edit = CATALOG[OpName.EDIT]

    assert edit.params("memory") is edit.params("memory")
    assert edit.params() is edit.params()
    assert edit.params("memory") == edit._params("memory")


def test_an_ops_own_partial_draws_its_form_and_one_within_another_is_drawn_by_it():
    partials = Path(__file__).resolve().parent.parent / "templates" / "web" / "ops"
    for path in sorted(partials.glob("[!_]*.html")):
        op = CATALOG[OpName(path.stem)]
        assert op.page.place in (Place.TEXT, Place.PROPERTIES, Place.LAST), path.name
        assert "<form" in path.read_text(encoding="utf-8"), path.name
    for op in OPS:
        if op.page.place is Place.WITHIN:
            host = CATALOG[op.page.within] if op.page.within else None
            assert host is not None and host.page.place is Place.TEXT, op.name
            assert all(host.applies_to(spec.key) for spec in op.specs()), op.name
            assert not (partials / f"{op.name}.html").exists(), op.name
