"""The RockBot door: import a hand-built agent directory, edit it, hand it back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from stores.engine.actors import Actor
from stores.engine.lookup import find_record
from stores.interchange import rockbot
from stores.models import (
    ImportedSource,
    Memory,
    Revision,
    RulesDocument,
    ScheduledTask,
    Skill,
    WorkingMemoryEntry,
)
from stores.services import memory_set_importance, record_edit, skill_replace_section
from stores.services.importing.run import import_records
from stores.surfaces import MEMORY, WORKING

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "rockbot"
MALFORMED = "memory/people/broken-entry.json"
CRLF_MEMORY = "7d1e4a52-0b8c-4f7e-9a31-2c5d8e6f1a90"
UNICODE_MEMORY = "b2e9c1d4-5f6a-4b7c-8d9e-0f1a2b3c4d5e"
CAMEL_MEMORY = "e5f6a7b8-c9d0-4e1f-a2b3-c4d5e6f7a8b9"
SUCCESSOR = "c0ffee00-1111-4222-8333-944455556666"
me = Actor.maintainer("tests")


def run_import(agent, root: Path = FIXTURE, *, dry_run: bool = False):
    return import_records(agent=agent, items=rockbot.read_store(root), actor=me, dry_run=dry_run)


def data_files(root: Path) -> dict[str, object]:
    """Every file's data: JSON files parsed, rules.md as bytes."""
    files: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        relative = path.relative_to(root).as_posix()
        if relative == MALFORMED:
            continue
        files[relative] = (
            path.read_bytes() if path.suffix == ".md" else json.loads(path.read_text("utf-8"))
        )
    return files


def test_import_creates_every_surface_and_reports_the_malformed_file(agent):
    report = run_import(agent)

    assert {key: tally.created for key, tally in report.tallies.items()} == {
        "memory": 5,
        "working": 3,
        "skill": 2,
        "task": 1,
        "rules": 1,
    }
    assert [(p.path, p.message.split(":")[0]) for p in report.problems] == [
        (MALFORMED, "is not valid JSON")
    ]
    assert "line 5" in report.problems[0].message
    assert Memory.objects.filter(agent=agent).count() == 5
    assert not Memory.objects.filter(agent=agent, alias="broken-entry").exists()


def test_records_resolve_by_their_original_ids_and_keep_every_field(agent):
    run_import(agent)

    memory = find_record(MEMORY, agent=agent, ref=CRLF_MEMORY, actor=me)
    assert memory.content == (
        "Rocky prefers short status reports.\r\nHe reads them on his phone before 8am.\r\n"
    )
    assert memory.reinforcement_count == 4
    assert memory.importance == 0.85
    assert memory.metadata == {"source": "conversation", "channel": "telegram"}
    assert memory.version == 1 and memory.embedding is None  # stale until embedded
    assert "日本語" in find_record(MEMORY, agent=agent, ref=UNICODE_MEMORY, actor=me).content
    camel = find_record(MEMORY, agent=agent, ref=CAMEL_MEMORY, actor=me)
    assert camel.metadata["_rockbot"] == {"embeddingVersion": 2, "sourceMessageIds": ["m-1", "m-9"]}
    superseded = Memory.objects.get(agent=agent, alias="41")
    assert superseded.superseded_by.alias == SUCCESSOR
    assert superseded.invalidated_at is not None
    expired = find_record(WORKING, agent=agent, ref="patrol/route", actor=me)
    assert expired.value.startswith("North gate")
    assert WorkingMemoryEntry.objects.get(agent=agent, key="last-search").is_expired()
    assert Skill.objects.get(agent=agent, alias="triage-alerts").content.startswith("## Triage\r\n")
    assert ScheduledTask.objects.get(agent=agent).schedule == "0 7 * * 1-5"
    revision = Revision.objects.get(surface="memory", record_id=memory.pk)
    assert (revision.op, revision.channel, revision.version_before, revision.version_after) == (
        "import",
        "shell",
        0,
        1,
    )


def test_import_then_export_gives_back_every_file(agent, tmp_path):
    run_import(agent)

    rockbot.write_store(agent, tmp_path)

    assert data_files(tmp_path) == data_files(FIXTURE)
    assert (tmp_path / "rules.md").read_bytes() == (FIXTURE / "rules.md").read_bytes()
    assert not list(tmp_path.rglob("*.tmp"))


def test_edits_through_the_service_come_back_in_the_files(agent, tmp_path):
    run_import(agent)
    edited = record_edit(
        surface_key="memory",
        agent=agent,
        ref=CRLF_MEMORY,
        actor=me,
        old_string="short status reports.\nHe",  # LF in the edit, CRLF in the text
        new_string="bulleted status reports.\nHe",
    )
    assert edited.ok, edited
    section = skill_replace_section(
        agent=agent,
        ref="deploy-service",
        actor=me,
        heading="Rollback",
        content="Use `kubectl rollout undo`, then tell #ops.\n",
    )
    assert section.ok, section

    rockbot.write_store(agent, tmp_path)

    expected = data_files(FIXTURE)
    memory_path = f"memory/user-preferences/{CRLF_MEMORY}.json"
    exported = data_files(tmp_path)
    assert exported[memory_path]["Content"] == (
        "Rocky prefers bulleted status reports.\r\nHe reads them on his phone before 8am.\r\n"
    )
    assert exported[memory_path]["UpdatedAt"] > expected[memory_path]["UpdatedAt"]
    for unchanged in ("CreatedAt", "LastSeenAt", "ReinforcementCount", "Metadata", "Tags"):
        assert exported[memory_path][unchanged] == expected[memory_path][unchanged]
    skill = exported["skills/deploy-service.json"]
    assert skill["Content"].endswith("## Rollback\nUse `kubectl rollout undo`, then tell #ops.\n")
    assert skill["LastUsedAt"] == "2025-03-01T08:00:00+00:00"
    for path in set(expected) - {memory_path, "skills/deploy-service.json"}:
        assert exported[path] == expected[path], path


def test_reimport_is_idempotent(agent):
    run_import(agent)
    revisions = Revision.objects.filter(agent=agent).count()

    report = run_import(agent)

    assert {key: (t.created, t.changed, t.unchanged) for key, t in report.tallies.items()} == {
        "memory": (0, 0, 5),
        "working": (0, 0, 3),
        "skill": (0, 0, 2),
        "task": (0, 0, 1),
        "rules": (0, 0, 1),
    }
    assert Revision.objects.filter(agent=agent).count() == revisions
    assert Memory.objects.filter(agent=agent).count() == 5


def test_changed_text_on_reimport_becomes_a_shell_revision_not_a_duplicate(agent, tmp_path):
    run_import(agent)
    root = tmp_path / "agent"
    shutil.copytree(FIXTURE, root)
    path = root / f"memory/user-preferences/{UNICODE_MEMORY}.json"
    doc = json.loads(path.read_text("utf-8"))
    doc["Content"] = doc["Content"].replace("oat milk", "almond milk")
    doc["ReinforcementCount"] = 2
    path.write_text(json.dumps(doc), "utf-8")

    report = run_import(agent, root)

    assert report.tallies["memory"].changed == 1
    assert report.tallies["memory"].created == 0
    memory = Memory.objects.get(agent=agent, alias=UNICODE_MEMORY)
    assert "almond milk" in memory.content and memory.reinforcement_count == 2
    ops = list(
        Revision.objects.filter(surface="memory", record_id=memory.pk)
        .order_by("version_after")
        .values_list("op", "channel", "version_after")
    )
    assert ops == [("import", "shell", 1), ("replace", "shell", 2), ("import", "shell", 3)]
    assert Memory.objects.filter(agent=agent).count() == 5


def test_dry_run_reports_and_writes_nothing(agent, tmp_path):
    report = run_import(agent, dry_run=True)

    assert report.tallies["memory"].created == 5
    assert [p.path for p in report.problems] == [MALFORMED]
    for model in (
        Memory,
        WorkingMemoryEntry,
        Skill,
        ScheduledTask,
        RulesDocument,
        Revision,
        ImportedSource,
    ):
        assert not model.objects.filter(agent=agent).exists(), model

    run_import(agent)
    root = tmp_path / "agent"
    shutil.copytree(FIXTURE, root)
    (root / "rules.md").write_bytes(b"# Rules\n- Be kind.\n")
    before = RulesDocument.objects.get(agent=agent).content

    report = run_import(agent, root, dry_run=True)

    assert [(n.surface, n.fields) for n in report.changes] == [("rules", ["content"])]
    assert RulesDocument.objects.get(agent=agent).content == before


def test_a_bad_entry_in_a_group_file_skips_only_that_entry(agent, tmp_path):
    root = tmp_path / "agent"
    (root / "working").mkdir(parents=True)
    (root / "working" / "session.json").write_text(
        json.dumps([{"Key": "a", "Value": "kept"}, {"Key": "b", "Value": 7}, {"Value": "x"}])
    )

    report = run_import(agent, root)

    assert [(p.path, p.message) for p in report.problems] == [
        ("working/session.json entry 2", "Value: value must be a string."),
        ("working/session.json entry 3", "Key is missing."),
    ]
    assert list(WorkingMemoryEntry.objects.filter(agent=agent).values_list("key", "value")) == [
        ("a", "kept")
    ]


def test_export_removes_the_file_of_a_forgotten_memory_and_moves_a_recategorised_one(
    agent, tmp_path
):
    from stores.services import record_forget, record_update

    run_import(agent)
    rockbot.write_store(agent, tmp_path)
    assert record_forget(surface_key="memory", agent=agent, ref=CAMEL_MEMORY, actor=me).ok
    assert record_update(
        surface_key="memory",
        agent=agent,
        ref=UNICODE_MEMORY,
        actor=me,
        changes={"category": "drinks"},
    ).ok

    report = rockbot.write_store(agent, tmp_path)

    assert report.tallies["memory"].removed == 2
    assert not (tmp_path / f"memory/people/{CAMEL_MEMORY}.json").exists()
    moved = json.loads((tmp_path / f"memory/drinks/{UNICODE_MEMORY}.json").read_text("utf-8"))
    assert moved["Category"] == "drinks"


def test_the_command_imports_the_rest_and_fails_naming_the_file(agent, capsys):
    with pytest.raises(CommandError, match="1 file"):
        call_command("import_rockbot", str(FIXTURE), agent=agent.name)

    output = capsys.readouterr().out
    assert MALFORMED in output and "not valid JSON" in output
    assert Memory.objects.filter(agent=agent).count() == 5


def test_export_command_writes_the_directory(agent, tmp_path, capsys):
    run_import(agent)

    call_command("export_rockbot", agent.name, str(tmp_path / "out"))

    assert data_files(tmp_path / "out") == data_files(FIXTURE)
    assert "files written" in capsys.readouterr().out


def test_a_file_nested_too_deep_is_reported_not_a_crash(agent, tmp_path):
    """Regression: a JSON file nested past Python's recursion limit crashed the import."""
    root = tmp_path / "agent"
    (root / "working").mkdir(parents=True)
    (root / "working" / "session.json").write_text(json.dumps([{"Key": "a", "Value": "kept"}]))
    (root / "working" / "deep.json").write_text("[" * 100_000 + "]" * 100_000)

    report = run_import(agent, root)

    assert [(p.path, p.message) for p in report.problems] == [
        (
            "working/deep.json",
            "nests objects and arrays more than 32 levels deep (MEMORYADMIN_MAX_JSON_DEPTH).",
        )
    ]
    assert WorkingMemoryEntry.objects.filter(agent=agent).count() == 1


def test_files_that_leave_fields_out_come_back_as_they_were_after_a_reimport(agent, tmp_path):
    """Export added SupersededBy: null, and after a second import the timestamps the files
    never had (UpdatedAt, lastSeenAt, StoredAt), dated at that import."""
    root = tmp_path / "agent"
    files = {
        "memory/notes/m1.json": {"Id": "m1", "Content": "Plain memory.", "Category": "notes"},
        "memory/notes/m2.json": {"id": "m2", "content": "A camelCase memory."},
        "skills/pack.json": {"Name": "pack", "Content": "# Pack\n"},
        "tasks/brief.json": {"Name": "brief", "Schedule": "0 8 * * *", "Directive": "Do."},
        "working/session.json": [{"Key": "topic", "Value": "travel"}],
    }
    for relative, doc in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(json.dumps(doc, indent=2))
    run_import(agent, root)
    second = run_import(agent, root)
    assert {key: tally.unchanged for key, tally in second.tallies.items()} == {
        "memory": 2,
        "working": 1,
        "skill": 1,
        "task": 1,
    }

    rockbot.write_store(agent, tmp_path / "out")

    assert data_files(tmp_path / "out") == data_files(root)


def test_a_field_the_file_left_out_and_a_person_set_is_written_after_a_reimport(agent, tmp_path):
    root = tmp_path / "agent"
    (root / "memory" / "notes").mkdir(parents=True)
    doc = {"Id": "m1", "Content": "Plain memory.", "Category": "notes"}
    (root / "memory" / "notes" / "m1.json").write_text(json.dumps(doc))
    run_import(agent, root)
    memory_set_importance(agent=agent, ref="m1", actor=me, importance=0.9)
    run_import(agent, root)  # the file did not change: the record keeps its importance

    rockbot.write_store(agent, tmp_path / "out")

    written = json.loads((tmp_path / "out" / "memory" / "notes" / "m1.json").read_text())
    assert written["ImportanceScore"] == 0.9
    assert "SupersededBy" not in written
