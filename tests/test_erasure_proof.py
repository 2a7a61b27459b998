"""The proof of an erasure: a unique secret written through every door is found nowhere after it.

Written over REST, the tools endpoint, MCP, Claude's memory tool, the memory stores API (a
store's name and metadata too), the web UI and an import, and carried into a source excerpt,
an idempotency body, an edit's history and a webhook's queue, then erased: no table (every
row of every table, as the database returns it), export (in every format memoryadmin
writes), feed page, webhook body or log line holds it, and every other record and revision is
as it was. On PostgreSQL the tables are rewritten (VACUUM FULL) before the dump; the SQLite
file's own bytes are checked by test_erasure_file.py.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.urls import reverse

from memoryadmin.mcp.server import _call
from stores.engine import aftercommit
from stores.engine.actors import Actor
from stores.interchange import native
from stores.models import AgentToken, Memory, MemoryFile, Revision, Webhook
from stores.services import webhooks as webhook_service
from stores.services.erasing import _ERASED_TABLES
from stores.webhooks import outbound
from tests.api.conftest import client_for
from tests.factories import agent_token

pytestmark = pytest.mark.django_db(transaction=True)

# A secret no detector takes for a credential, so no door refuses it.
SECRET = f"zebra-quartz-{uuid.uuid4().hex}"
# The one part of it a word index keeps as a term of its own.
TOKEN = SECRET.rsplit("-", 1)[1]


def every_row() -> str:
    """Every row of every table of the database, as text (binary columns read as Latin-1)."""
    dumped = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(include_views=False):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            for row in cursor.fetchall():
                for value in row:
                    if isinstance(value, bytes | memoryview):
                        dumped.append(bytes(value).decode("latin-1"))
                    else:
                        dumped.append(str(value))
    return "\n".join(dumped)


def every_file(root) -> str:
    """Every file below `root`, as text."""
    return "\n".join(
        path.read_text("utf-8", "replace") for path in sorted(root.rglob("*")) if path.is_file()
    )


def untouched() -> tuple[list[int], list[int]]:
    """The memories and revisions that never held the secret."""
    memories = Memory.objects.exclude(content__contains=SECRET).values_list("pk", flat=True)
    revisions = [
        revision.pk for revision in Revision.objects.all() if SECRET not in str(revision.__dict__)
    ]
    return list(memories), revisions


def as_they_are(memory_ids: list[int], revision_ids: list[int]) -> list[tuple[Any, ...]]:
    memories = Memory.objects.filter(pk__in=memory_ids).order_by("pk")
    revisions = Revision.objects.filter(pk__in=revision_ids).order_by("pk")
    return [
        *memories.values_list("pk", "content", "version", "importance", "updated_at"),
        *revisions.values_list(
            "pk", "op", "before_text", "after_text", "before_state", "after_state", "redacted"
        ),
    ]


def write_through_every_door(agent, staff_client, tmp_path) -> None:
    token, raw = agent_token(agent)
    api = client_for(raw)
    source = {"excerpt": f"the user said {SECRET}"}
    created = api.call(
        "post",
        "memories/",
        {"content": f"REST holds {SECRET}.", "source": source},
        idempotency_key="proof-1",
    )
    assert created.status_code == 201, created.json()
    tool = api.call(
        "post", "tools/create_record/", {"surface": "memory", "content": f"Tool: {SECRET}"}
    )
    assert tool.status_code in (200, 201), tool.json()
    over_mcp = _call(
        lambda request: AgentToken.objects.get(pk=token.pk),
        None,
        "create_record",
        {"surface": "memory", "content": f"MCP: {SECRET}"},
    )
    assert not over_mcp.is_error, over_mcp.structured_content
    memory_tool = api.call(
        "post",
        "tools/memory/",
        {"command": "create", "path": "/memories/proof.md", "file_text": f"File {SECRET}\n"},
    )
    assert not memory_tool.json()["is_error"], memory_tool.json()
    store = api.call(
        "post", "memory_stores", {"name": f"Store {SECRET}", "metadata": {"note": SECRET}}
    )
    assert store.status_code == 200, store.json()
    in_store = api.call(
        "post",
        f"memory_stores/{store.json()['id']}/memories",
        {"path": "/notes.md", "content": f"Stored {SECRET}\n"},
    )
    assert in_store.status_code == 200, in_store.json()
    page = staff_client.post(
        reverse("web:record_new", args=[agent.name, "memory"]), {"content": f"UI {SECRET}"}
    )
    assert page.status_code in (200, 302)
    imported = tmp_path / "import.jsonl"
    header = {"format": native.FORMAT, "format_version": 1, "agent": {"name": agent.name}}
    header |= {"with_vectors": False, "with_revisions": False}
    line = {"type": "memory", "ref": "proof-import", "version": 1, "content": f"Import {SECRET}"}
    imported.write_text(json.dumps(header) + "\n" + json.dumps(line) + "\n", "utf-8")
    call_command("import_agent", str(imported), agent=agent.name)
    # Written and edited out again: the text stays in the history only.
    rest_id = created.json()["id"]
    edited = api.call(
        "post",
        f"memories/{rest_id}/edit/",
        {"old_string": f"holds {SECRET}", "new_string": "holds nothing"},
    )
    assert edited.status_code == 200, edited.json()
    assert Memory.objects.filter(content__contains=SECRET).count() == 4
    assert MemoryFile.objects.filter(content__contains=SECRET).count() == 2


def test_a_secret_written_through_every_door_is_gone_after_its_erasure(
    agent, make, client, staff_user, tmp_path, monkeypatch, caplog
):
    caplog.set_level(logging.DEBUG)
    client.force_login(staff_user)
    bystander = make.memory(agent, content="The user prefers tea over coffee.")
    make.working(agent)
    webhook = webhook_service.webhook_create(
        actor=Actor.maintainer("tests"), agent=agent, url="https://hooks.example/proof"
    ).record
    # The webhook's queue fills while nothing is sent: the erasure must cancel what it holds.
    monkeypatch.setattr(aftercommit, "after_commit", lambda *args, **kwargs: None)
    write_through_every_door(agent, client, tmp_path)
    make.memory(agent, content="Written after the secret, and sent.")
    assert SECRET in every_row()
    earlier_export = tmp_path / "earlier.jsonl"
    call_command("export_agent", agent.name, out=str(earlier_export), with_revisions=True)
    assert TOKEN in earlier_export.read_text("utf-8")
    exports = tmp_path / "exports"
    call_command("export_files", agent.name, str(exports / "files"))
    call_command("export_rockbot", agent.name, str(exports / "rockbot"))
    call_command("export_pam", agent=agent.name, bundle=exports / "pam")
    assert TOKEN in every_file(exports)
    kept_ids = untouched()
    kept = as_they_are(*kept_ids)

    call_command("erase", "--agent", agent.name, "--text", SECRET, "--reason", "proof")

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            for model in _ERASED_TABLES:
                cursor.execute(f"VACUUM FULL {connection.ops.quote_name(model._meta.db_table)}")
    dump = every_row()
    assert SECRET not in dump and TOKEN not in dump
    export = tmp_path / "export.jsonl"
    call_command("export_agent", agent.name, out=str(export), with_revisions=True)
    assert TOKEN not in export.read_text("utf-8")
    assert TOKEN not in earlier_export.read_text("utf-8")
    assert TOKEN not in every_file(exports)
    api = client_for(agent_token(agent)[1])
    assert TOKEN not in json.dumps(api.call("get", "changes/?limit=500").json())
    pam = api.call("get", "export/pam/")
    assert pam.status_code == 200 and TOKEN.encode() not in b"".join(pam.streaming_content)
    bodies: list[bytes] = []

    def capture(url, body, headers, **options):
        bodies.append(body)
        return outbound.Answer(status=200, duration_ms=1.0)

    monkeypatch.setattr(outbound, "post", capture)
    run = webhook_service.webhook_deliver(webhook.pk)
    assert bodies and run.skipped >= 6
    assert not any(TOKEN.encode() in body for body in bodies)
    assert TOKEN not in caplog.text
    assert as_they_are(*kept_ids) == kept
    assert Memory.objects.get(pk=bystander.pk).content == "The user prefers tea over coffee."
    assert Webhook.objects.get(pk=webhook.pk).enabled
