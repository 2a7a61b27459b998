"""The RockBot door against hostile directories: no path out, no link followed, any name fits."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from stores.engine.actors import Actor
from stores.interchange import files, native, rockbot
from stores.interchange.files import NAME_MAX, SEGMENT_MAX, segment, unsegment
from stores.models import (
    ImportedSource,
    Memory,
    RulesDocument,
    ScheduledTask,
    Skill,
    WorkingMemoryEntry,
)
from stores.services import record_forget
from stores.services.importing.run import import_records
from tests.factories import AgentFactory

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "rockbot"
CAMEL_MEMORY = "e5f6a7b8-c9d0-4e1f-a2b3-c4d5e6f7a8b9"
me = Actor.maintainer("tests")


def run_import(agent, root: Path):
    return import_records(agent=agent, items=rockbot.read_store(root), actor=me)


def tree(root: Path) -> dict[str, bytes]:
    """Every regular file below `root` (links are not listed as files)."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def memory_doc(content: str, **fields) -> str:
    return json.dumps({"Content": content, "Category": "people", **fields})


# --- every written path stays inside the target --------------------------------


def native_header() -> str:
    return json.dumps(
        {
            "format": native.FORMAT,
            "format_version": 1,
            "agent": {"name": "crafted"},
            "with_vectors": False,
            "with_revisions": False,
        }
    )


def test_a_crafted_native_import_cannot_make_export_rockbot_write_outside(agent, tmp_path):
    outside = tmp_path / "abs" / "x.json"
    lines = [native_header()]
    for number, path in enumerate(["../escape/x.json", str(outside), "working/../../../x.json"]):
        ref = f"m{number}"
        raw = {"located": {"category": "general", "id": ref}, "keys": ["Content"]}
        source = {"format": "rockbot", "path": path, "position": 0, "raw": raw}
        lines.append(
            json.dumps(
                {"type": "memory", "ref": ref, "version": 1, "content": "x", "source": source}
            )
        )
    crafted = tmp_path / "crafted.jsonl"
    crafted.write_text("\n".join(lines) + "\n", "utf-8")
    target = tmp_path / "deep" / "er" / "target"

    report = import_records(agent=agent, items=native.read_records(crafted, subjects={}), actor=me)
    rockbot.write_store(agent, target)

    assert len(report.problems) == 3
    assert sorted(tree(tmp_path)) == ["crafted.jsonl"]


@pytest.mark.parametrize(
    "path",
    [
        "../escape/x.json",
        "/ABSOLUTE/x.json",
        "working/../../../x.json",
        "memory/general/../../../x.json",
        "skills/m.json",  # inside the target, but another surface's file
        "rules.md",
    ],
)
def test_a_trace_path_that_leaves_its_folder_is_replaced_by_the_generated_one(
    agent, make, tmp_path, path
):
    path = path.replace("/ABSOLUTE", str(tmp_path / "abs"))
    memory = make.memory(agent, "Kept inside.", alias="m", category="general")
    ImportedSource.objects.create(
        agent=agent,
        source_format="rockbot",
        path=path,
        surface="memory",
        record_id=memory.pk,
        raw={"located": {"category": "general", "id": "m"}, "keys": ["Content"]},
    )
    target = tmp_path / "a" / "b" / "target"

    report = rockbot.write_store(agent, target)

    assert sorted(tree(tmp_path)) == ["a/b/target/memory/general/m.json"]
    assert json.loads(tree(tmp_path)["a/b/target/memory/general/m.json"])["Content"] == (
        "Kept inside."
    )
    assert [note.path for note in report.notes] == [path]
    assert "memory/general/m.json instead" in report.notes[0].message
    assert not report.problems


def test_working_and_skill_traces_outside_their_folders_are_not_used(agent, make, tmp_path):
    entry = make.working(agent, key="k", value="v", namespace="session")
    skill = make.skill(agent, name="deploy")
    ImportedSource.objects.create(
        agent=agent,
        source_format="rockbot",
        path="../session.json",
        surface="",
        raw={"shape": "array", "namespace": "session"},
    )
    ImportedSource.objects.create(
        agent=agent,
        source_format="rockbot",
        path="working/session.json#k",
        surface="working",
        record_id=entry.pk,
        raw={"keys": ["Key", "Value"]},
    )
    ImportedSource.objects.create(
        agent=agent,
        source_format="rockbot",
        path="skills/../../deploy.json",
        surface="skill",
        record_id=skill.pk,
        raw={"located": {"name": "deploy"}, "keys": ["Name", "Content"]},
    )
    target = tmp_path / "x" / "target"

    report = rockbot.write_store(agent, target)

    assert sorted(tree(tmp_path)) == [
        "x/target/skills/deploy.json",
        "x/target/working/session.json",
    ]
    assert sorted(note.path for note in report.notes) == [
        "../session.json",
        "skills/../../deploy.json",
    ]


def test_a_stale_trace_outside_the_folder_is_never_removed(agent, make, tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    (tmp_path / "precious.json").write_text("{}")
    (target / "rules.md").write_text("Someone else's rules.")
    memory = make.memory(agent, "Soon forgotten.", alias="gone")
    for path in ("../precious.json", "rules.md"):
        ImportedSource.objects.create(
            agent=agent,
            source_format="rockbot",
            path=path,
            surface="memory",
            record_id=memory.pk,
            raw={"located": {"category": "elsewhere", "id": "gone"}},
        )
    assert record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=me).ok

    report = rockbot.write_store(agent, target)

    assert (tmp_path / "precious.json").read_text() == "{}"
    assert (target / "rules.md").read_text() == "Someone else's rules."
    assert sorted(note.path for note in report.notes) == ["../precious.json", "rules.md"]


# --- links are never followed --------------------------------------------------


def test_import_follows_no_link_and_reports_each(agent, tmp_path):
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "secret.json").write_text(memory_doc("The server's private key."))
    (outside / "folder" / "a.json").write_text(memory_doc("From a linked folder."))
    (outside / "shadow").write_text("root:x:0:0")
    (outside / "working").mkdir()
    (outside / "working" / "session.json").write_text(json.dumps([{"Key": "k", "Value": "v"}]))
    root = tmp_path / "agent"
    (root / "memory" / "people").mkdir(parents=True)
    (root / "memory" / "people" / "real.json").write_text(memory_doc("A real memory."))
    (root / "memory" / "people" / "linked.json").symlink_to(outside / "secret.json")
    (root / "memory" / "linked-folder").symlink_to(outside / "folder")
    (root / "working").symlink_to(outside / "working")
    (root / "skills").mkdir()
    (root / "skills" / "s.json").symlink_to(outside / "secret.json")
    (root / "rules.md").symlink_to(outside / "shadow")

    report = run_import(agent, root)

    assert list(Memory.objects.filter(agent=agent).values_list("content", flat=True)) == [
        "A real memory."
    ]
    assert not RulesDocument.objects.filter(agent=agent).exists()
    assert not WorkingMemoryEntry.objects.filter(agent=agent).exists()
    assert not Skill.objects.filter(agent=agent).exists()
    assert sorted(p.path for p in report.problems) == [
        "memory/linked-folder",
        "memory/people/linked.json",
        "rules.md",
        "skills/s.json",
        "working",
    ]
    assert all("symbolic link" in p.message for p in report.problems)
    assert rockbot.count_files(root) == 6  # what the progress bar counts: the file and the links


def test_the_import_command_fails_naming_the_link(agent, tmp_path, capsys):
    root = tmp_path / "agent"
    root.mkdir()
    (tmp_path / "secret").write_text("not for the agent")
    (root / "rules.md").symlink_to(tmp_path / "secret")

    with pytest.raises(CommandError, match="1 file"):
        call_command("import_rockbot", str(root), agent=agent.name)

    assert "rules.md: is a symbolic link" in capsys.readouterr().out


def test_export_writes_through_no_link_and_reports_each(agent, tmp_path):
    run_import(agent, FIXTURE)
    outside = tmp_path / "outside"
    (outside / "memory").mkdir(parents=True)
    (outside / "rules").write_text("outside rules")
    (outside / "skill").write_text("outside skill")
    target = tmp_path / "target"
    (target / "skills").mkdir(parents=True)
    (target / "memory").symlink_to(outside / "memory")
    (target / "rules.md").symlink_to(outside / "rules")
    (target / "skills" / "deploy-service.json").symlink_to(outside / "skill")

    report = rockbot.write_store(agent, target)

    assert tree(outside) == {"rules": b"outside rules", "skill": b"outside skill"}
    assert (target / "memory").is_symlink() and (target / "rules.md").is_symlink()
    assert report.tallies["memory"].skipped == 5 and report.tallies["memory"].written == 0
    assert report.tallies["rules"].skipped == 1 and report.tallies["skill"].skipped == 1
    assert report.tallies["skill"].written == 1 and report.tallies["working"].written == 2
    assert len(report.problems) == 7
    assert all("symbolic link" in p.message for p in report.problems)
    assert "tasks/morning-briefing.json" in tree(target)


def test_the_export_command_fails_naming_the_links(agent, tmp_path, capsys):
    run_import(agent, FIXTURE)
    target = tmp_path / "target"
    target.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (target / "memory").symlink_to(tmp_path / "elsewhere")

    with pytest.raises(CommandError, match="5 file"):
        call_command("export_rockbot", agent.name, str(target))

    output = capsys.readouterr().out
    assert "memory/people/" in output and "which is a symbolic link" in output
    assert not list((tmp_path / "elsewhere").iterdir())


def test_a_traced_file_replaced_by_a_link_is_not_removed_through_it(agent, tmp_path):
    run_import(agent, FIXTURE)
    target = tmp_path / "target"
    rockbot.write_store(agent, target)
    assert record_forget(surface_key="memory", agent=agent, ref=CAMEL_MEMORY, actor=me).ok
    (tmp_path / "kept").write_text("kept")
    stale = target / "memory" / "people" / f"{CAMEL_MEMORY}.json"
    stale.unlink()
    stale.symlink_to(tmp_path / "kept")

    report = rockbot.write_store(agent, target)

    assert stale.is_symlink() and (tmp_path / "kept").read_text() == "kept"
    assert [note.path for note in report.notes] == [f"memory/people/{CAMEL_MEMORY}.json"]


def test_a_file_name_that_is_not_utf8_is_reported_not_imported(agent, tmp_path):
    root = tmp_path / "agent"
    (root / "memory" / "people").mkdir(parents=True)
    (root / "memory" / "people" / "fine.json").write_text(memory_doc("Fine."))
    Path(os.fsdecode(os.fsencode(root / "memory" / "people") + b"/\xff.json")).write_text(
        memory_doc("Named in Latin-1.")
    )

    report = run_import(agent, root)

    assert [p.path for p in report.problems] == ["memory/people/\ufffd.json"]
    assert "UTF-8" in report.problems[0].message
    assert list(Memory.objects.filter(agent=agent).values_list("content", flat=True)) == ["Fine."]


# --- any name fits a file name, and comes back exactly -------------------------


def test_segment_keeps_short_names_and_caps_long_ones_uniquely():
    assert segment("user-preferences") == "user-preferences"
    assert segment("a/b") == "a%2Fb" and segment("..") == "%2E%2E"
    assert segment("tab\there\nnul\x01") == "tab%09here%0Anul%01"
    assert unsegment(segment("Café ☕/x")) == "Café ☕/x"
    long_names = ["é" * 255, "a" * 300, "a" * 300 + "b", "a" * 199 + "%~", "%" * 100]
    segments = [segment(name) for name in long_names]
    assert len(set(segments)) == len(long_names)
    for name, short in zip(long_names, segments, strict=True):
        assert len(short.encode("utf-8")) <= SEGMENT_MAX
        assert "/" not in short and short not in (".", "..")
        assert not files.is_exact(name)
    # An exact name can never be the shortened form of another one.
    assert segment(segments[1]) != segments[1]


def long_named_agent(agent, make):
    make.memory(agent, "A memory with a long id.", alias="é" * 255, category="ü" * 100)
    make.memory(agent, "A memory in a long category.", category="ø/" * 50)
    make.working(agent, key="ключ" * 60, value="A long key.", namespace="名" * 100)
    make.working(agent, key="short", value="Beside it.", namespace="名" * 100)
    make.skill(agent, name="ß" * 200)
    make.task(agent, name="🦀" * 200)


def identity(agent) -> dict[str, list]:
    return {
        # A record without an alias goes out (and comes back) under its id.
        "memory": sorted(
            (memory.alias or str(memory.pk), memory.category, memory.content)
            for memory in Memory.objects.filter(agent=agent)
        ),
        "working": sorted(
            WorkingMemoryEntry.objects.filter(agent=agent).values_list("namespace", "key", "value")
        ),
        "skill": sorted(Skill.objects.filter(agent=agent).values_list("name", "content")),
        "task": sorted(ScheduledTask.objects.filter(agent=agent).values_list("name", "directive")),
    }


def test_long_names_export_and_import_back_exactly(agent, make, tmp_path):
    long_named_agent(agent, make)
    first = tmp_path / "first"

    report = rockbot.write_store(agent, first)

    assert not report.problems
    exported = tree(first)
    assert len(exported) == 5 and not [p for p in exported if p.endswith(".tmp")]
    for path in exported:
        assert all(len(part.encode("utf-8")) <= NAME_MAX for part in path.split("/"))
    copy = AgentFactory()
    imported = run_import(copy, first)
    assert not imported.problems, imported.problems
    assert identity(copy) == identity(agent)
    assert ("é" * 255, "ü" * 100, "A memory with a long id.") in identity(copy)["memory"]
    second = tmp_path / "second"
    rockbot.write_store(copy, second)
    assert tree(second) == exported


def test_a_failure_midway_leaves_no_temp_file_and_the_rest_is_written(agent, tmp_path, monkeypatch):
    run_import(agent, FIXTURE)
    target = tmp_path / "target"
    rockbot.write_store(agent, target)
    assert record_forget(surface_key="memory", agent=agent, ref=CAMEL_MEMORY, actor=me).ok
    shutil.rmtree(target / "skills")
    real_replace = os.replace

    def full_disk(source, destination, **fds):
        if destination == "deploy-service.json":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_replace(source, destination, **fds)

    monkeypatch.setattr(files.os, "replace", full_disk)

    report = rockbot.write_store(agent, target)

    assert [(p.path, p.message) for p in report.problems] == [
        (
            "skills/deploy-service.json",
            "could not be written (No space left on device); not written.",
        )
    ]
    assert not [p for p in target.rglob("*") if p.name.endswith(".tmp")]
    assert (target / "skills" / "triage-alerts.json").is_file()
    assert not (target / "memory" / "people" / f"{CAMEL_MEMORY}.json").exists()  # clean-up ran
    assert report.tallies["memory"].removed == 1
