"""The native JSON Lines format: export, import, export gives the same lines."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from stores.engine.actors import Actor
from stores.engine.lookup import find_record
from stores.interchange import native
from stores.models import Agent, ImportedSource, Memory, Revision, Subject, WorkingMemoryEntry
from stores.services import memory_invalidate, record_edit, record_update, rules_add
from stores.services.agents import subject_create
from stores.services.importing.run import import_records
from stores.surfaces import MEMORY
from tests.factories import AgentFactory

me = Actor.maintainer("tests")


def build_agent(agent, make):
    """An agent with every surface, edits, a subject, a superseded memory and each store."""
    maria = subject_create(
        actor=me, agent=agent, display_name="Maria", external_id="maria", aliases=["M"]
    ).record
    old = make.memory(agent, "The build runs on Jenkins.", category="ci", alias="rb-41")
    new = make.memory(agent, "The build runs on GitHub Actions.", category="ci", tags=["ci"])
    assert memory_invalidate(agent=agent, ref=old.pk, actor=me, replacement_ref=new.pk).ok
    make.memory(agent, "Maria likes a heads-up.\r\nAlways.", subject=maria, importance=0.9)
    make.memory(agent, "Met Maria on 2025-02-10.", store="episodic")
    make.memory(agent, "Maria's team: patrol.", store="fact", metadata={"k": [1, 2]})
    assert record_edit(
        surface_key="memory",
        agent=agent,
        ref=new.pk,
        actor=me,
        old_string="GitHub Actions",
        new_string="GitHub Actions (since January)",
    ).ok
    make.working(agent, key="focus", value="Rota for März", namespace="patrol", ttl=3600)
    make.skill(agent, name="deploy", summary="Deploy safely")
    make.task(agent, name="morning")
    assert rules_add(agent=agent, actor=me, rule="Be brief.").ok
    heron = make("file", agent, path="/memories/projects/heron.md", content="Ships Fri.\r\n")
    assert record_update(
        surface_key="file",
        agent=agent,
        ref=heron.pk,
        actor=me,
        changes={"path": "/memories/heron.md"},
    ).ok


def export_lines(agent, **options) -> list[str]:
    buffer = io.BytesIO()
    native.write_agent(agent, buffer, **options)
    return buffer.getvalue().decode("utf-8").splitlines()


def import_file(agent, path, **options):
    subjects = {s.external_id: s for s in agent.subjects.all()}
    for line in native.read_subjects(path):
        if line["external_id"] not in subjects:
            subjects[line["external_id"]] = subject_create(
                actor=me,
                agent=agent,
                **{k: v for k, v in line.items() if k != "privacy_level"},
                privacy_level=line["privacy_level"],
            ).record
    return import_records(
        agent=agent, items=native.read_records(path, subjects=subjects), actor=me, **options
    )


def test_export_import_export_gives_identical_lines(agent, make, tmp_path):
    build_agent(agent, make)
    first = export_lines(agent, with_revisions=True, with_vectors=True)
    path = tmp_path / "agent.jsonl"
    path.write_text("\n".join(first) + "\n", "utf-8")
    copy = AgentFactory()

    report = import_file(copy, path)

    assert not report.problems, report.problems
    second = export_lines(copy, with_revisions=True, with_vectors=True)
    assert json.loads(first[0])["agent"]["name"] == agent.name
    assert second[1:] == first[1:]
    assert len(first) > 15


def test_without_revisions_each_record_gets_one_import_revision(agent, make, tmp_path):
    build_agent(agent, make)
    path = tmp_path / "agent.jsonl"
    path.write_text("\n".join(export_lines(agent)) + "\n", "utf-8")
    copy = AgentFactory()

    import_file(copy, path)

    assert export_lines(copy)[1:] == export_lines(agent)[1:]
    memory = find_record(MEMORY, agent=copy, ref="rb-41", actor=me)
    assert memory.superseded_by is not None and memory.invalidated_at is not None
    imported = Revision.objects.get(surface="memory", record_id=memory.pk)
    assert (imported.op, imported.version_before, imported.version_after) == (
        "import",
        0,
        memory.version,
    )
    assert Memory.objects.get(agent=copy, store="fact").metadata == {"k": [1, 2]}


def test_reimport_into_the_same_agent_and_into_a_copy_changes_nothing(agent, make, tmp_path):
    build_agent(agent, make)
    path = tmp_path / "agent.jsonl"
    path.write_text("\n".join(export_lines(agent, with_revisions=True)) + "\n", "utf-8")
    copy = AgentFactory()
    import_file(copy, path)
    revisions = Revision.objects.count()

    for target in (agent, copy):
        report = import_file(target, path)
        assert sum(t.created + t.changed for t in report.tallies.values()) == 0, target
    assert Revision.objects.count() == revisions
    assert Memory.objects.filter(agent=copy).count() == Memory.objects.filter(agent=agent).count()


def test_changed_line_is_a_revision_and_a_malformed_line_is_reported(agent, make, tmp_path):
    build_agent(agent, make)
    lines = export_lines(agent)
    path = tmp_path / "agent.jsonl"
    edited = [
        line.replace("Jenkins.", "Jenkins, until January.") if '"rb-41"' in line else line
        for line in lines
    ]
    edited.insert(3, '{"type": "memory", "ref": "half-written", "conte')
    path.write_text("\n".join(edited) + "\n", "utf-8")

    report = import_file(agent, path)

    assert [p.path for p in report.problems] == ["agent.jsonl:4"]
    assert report.tallies["memory"].changed == 1
    memory = find_record(MEMORY, agent=agent, ref="rb-41", actor=me)
    assert memory.content == "The build runs on Jenkins, until January."
    latest = Revision.objects.filter(surface="memory", record_id=memory.pk).first()
    assert (latest.op, latest.channel) == ("replace", "shell")


def test_import_inserts_in_bulk_not_row_by_row(agent, tmp_path):
    lines = [
        json.dumps(
            {
                "format": native.FORMAT,
                "format_version": 1,
                "agent": {"name": "bulk"},
                "with_vectors": False,
                "with_revisions": False,
            }
        )
    ]
    for number in range(600):
        lines.append(
            json.dumps(
                {
                    "type": "memory",
                    "ref": f"m-{number}",
                    "version": 1,
                    "content": f"Memory number {number}.",
                }
            )
        )
    path = tmp_path / "bulk.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")

    with CaptureQueriesContext(connection) as queries:
        report = import_file(agent, path)

    assert report.tallies["memory"].created == 600
    assert len(queries) < 40
    assert Revision.objects.filter(agent=agent, op="import").count() == 600


def test_commands_round_trip_and_dry_run_writes_nothing(agent, make, tmp_path, capsys):
    build_agent(agent, make)
    call_command("export_agent", agent.name, out=tmp_path / "a.jsonl", with_revisions=True)

    call_command("import_agent", str(tmp_path / "a.jsonl"), agent="copy", dry_run=True)
    assert "would be created" in capsys.readouterr().out
    assert not Memory.objects.filter(agent__name="copy").exists()
    assert not Subject.objects.filter(agent__name="copy").exists()

    call_command("import_agent", str(tmp_path / "a.jsonl"), agent="copy")
    call_command("export_agent", "copy", out=tmp_path / "b.jsonl", with_revisions=True)
    first = (tmp_path / "a.jsonl").read_text("utf-8").splitlines()
    second = (tmp_path / "b.jsonl").read_text("utf-8").splitlines()
    assert second[1:] == first[1:]


# --- hostile files -----------------------------------------------------------


def header(name: str = "crafted", **agent_settings) -> str:
    return json.dumps(
        {
            "format": native.FORMAT,
            "format_version": 1,
            "agent": {"name": name, **agent_settings},
            "with_vectors": False,
            "with_revisions": True,
        }
    )


def revision_line(**changes) -> str:
    doc = {
        "type": "revision",
        "version_before": 0,
        "version_after": 1,
        "op": "create",
        "field": "content",
        "actor": "agent:x",
        "channel": "api",
        "before_text": "",
        "after_text": "Planted.",
        "review": "",
        "reviewed_at": None,
        "created_at": "2025-01-01T00:00:00+00:00",
        "actor_user": None,
        "reviewed_by": None,
        "before_state": {},
        "after_state": {"category": "general", "tags": []},
    }
    doc.update(changes)
    return json.dumps(doc)


def write_jsonl(path, *lines: str):
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def memory_line(ref: str, content: str = "Planted.", **values) -> str:
    return json.dumps({"type": "memory", "ref": ref, "version": 1, "content": content, **values})


def test_a_revision_naming_a_field_outside_the_surface_refuses_its_record(
    agent, other_agent, make, tmp_path
):
    victim = make.memory(other_agent, "Agent two's own memory.")
    path = write_jsonl(
        tmp_path / "crafted.jsonl",
        header(),
        memory_line("kept", "An honest memory."),
        memory_line("planted"),
        revision_line(field="agent_id", after_text=str(other_agent.pk)),
        memory_line("after", "Read after the bad one."),
    )

    report = import_file(agent, path)

    assert [p.path for p in report.problems] == ["crafted.jsonl:4"]
    message = report.problems[0].message
    assert "agent_id" in message and "content" in message and "planted" in message
    assert sorted(Memory.objects.filter(agent=agent).values_list("alias", flat=True)) == [
        "after",
        "kept",
    ]
    assert list(Memory.objects.filter(agent=other_agent)) == [victim]
    assert Memory.objects.get(pk=victim.pk).content == "Agent two's own memory."
    assert not Revision.objects.exclude(field__in=["content", "value", "summary", "directive"])


def test_the_planted_revision_cannot_be_used_to_move_a_record_into_another_agent(
    agent, other_agent, tmp_path
):
    """The issue's attack: import, forget, then revert to the planted revision."""
    from stores.services import record_forget, record_revert

    path = write_jsonl(
        tmp_path / "crafted.jsonl",
        header(),
        memory_line("planted"),
        revision_line(field="agent_id", after_text=str(other_agent.pk)),
    )
    import_file(agent, path)
    for memory in Memory.objects.filter(agent=agent):
        revisions = list(Revision.objects.filter(surface="memory", record_id=memory.pk))
        assert record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=me).ok
        for revision in revisions:
            record_revert(
                surface_key="memory",
                agent=agent,
                ref=memory.pk,
                actor=me,
                revision_id=revision.pk,
                to="after",
            )

    assert not Memory.objects.filter(agent=other_agent).exists()


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"after_state": {"agent": 2, "category": "x"}}, "agent"),
        ({"after_state": {"id": 1}}, "id"),
        ({"after_state": {"version": 9}}, "version"),
        ({"before_state": {"namespace": "session"}}, "namespace"),  # a working field
        ({"after_state": {"subject": 1}}, "subject"),  # an id of this database, not a name
        ({"after_state": {"superseded_by": 7}}, "superseded_by"),
        ({"after_state": {"importance": "high"}}, "importance"),
        ({"after_state": {"created_at": "yesterday"}}, "created_at"),
        ({"after_state": "not an object"}, "after_state"),
        ({"field": "summary"}, "field"),  # a skill's text field, not a memory's
        ({"channel": "root"}, "channel"),
        ({"review": "waved-through"}, "review"),
        ({"version_after": 5}, "version_after"),  # later than the record's own version
        ({"version_before": 1, "version_after": 1}, "version_after"),
        ({"after_text": 7}, "after_text"),
        ({"op": ""}, "op"),
    ],
)
def test_each_revision_field_and_state_key_is_checked_against_the_surface(
    agent, tmp_path, changes, named
):
    path = write_jsonl(
        tmp_path / "crafted.jsonl", header(), memory_line("planted"), revision_line(**changes)
    )

    report = import_file(agent, path)

    assert [p.path for p in report.problems] == ["crafted.jsonl:3"]
    assert named in report.problems[0].message
    assert not Memory.objects.filter(agent=agent).exists()
    assert not Revision.objects.filter(agent=agent).exists()


def test_two_revisions_claiming_one_version_refuse_the_record_not_the_import(agent, tmp_path):
    path = write_jsonl(
        tmp_path / "crafted.jsonl",
        header(),
        memory_line("twice"),
        revision_line(),
        revision_line(),
        memory_line("fine", "Still imported."),
    )

    report = import_file(agent, path)

    assert [p.path for p in report.problems] == ["crafted.jsonl:4"]
    assert list(Memory.objects.filter(agent=agent).values_list("alias", flat=True)) == ["fine"]


def test_a_reimport_adds_no_revision_past_the_records_own_version(agent, tmp_path):
    write_jsonl(tmp_path / "v1.jsonl", header(), memory_line("m"), revision_line())
    import_file(agent, tmp_path / "v1.jsonl")
    later = [revision_line(version_before=n - 1, version_after=n, op="replace") for n in (2, 3)]
    write_jsonl(
        tmp_path / "v3.jsonl", header(), memory_line("m", version=3), revision_line(), *later
    )

    import_file(agent, tmp_path / "v3.jsonl")

    memory = Memory.objects.get(agent=agent, alias="m")
    assert memory.version == 1
    assert Revision.objects.filter(surface="memory", record_id=memory.pk).count() == 1
    edited = record_edit(
        surface_key="memory",
        agent=agent,
        ref="m",
        actor=me,
        old_string="Planted",
        new_string="Grown",
    )
    assert edited.ok, edited


def test_a_valid_history_with_states_still_imports(agent, tmp_path):
    path = write_jsonl(
        tmp_path / "fine.jsonl",
        header(),
        memory_line("m", "Second.", version=2),
        revision_line(after_state={"category": "general", "importance": 0.4, "subject": None}),
        revision_line(
            version_before=1,
            version_after=2,
            op="replace",
            before_text="Planted.",
            after_text="Second.",
            before_state={"category": "general"},
            after_state={"category": "general", "last_seen_at": "2025-01-02T00:00:00Z"},
        ),
    )

    report = import_file(agent, path)

    assert not report.problems, report.problems
    memory = Memory.objects.get(agent=agent, alias="m")
    latest = Revision.objects.filter(surface="memory", record_id=memory.pk).first()
    assert latest.after_state["last_seen_at"] == "2025-01-02T00:00:00+00:00"


@pytest.mark.parametrize(
    "path",
    [
        "../escape/x.json",
        "/tmp/x.json",
        "working/../../../x.json",
        "memory/./x.json",
        "",
        "working/session.json#" + "k" * 1000,  # longer than the column that holds it
    ],
)
def test_a_source_path_that_could_leave_its_folder_refuses_the_record(agent, tmp_path, path):
    source = {"format": "rockbot", "path": path, "position": 0, "raw": {}}
    crafted = write_jsonl(
        tmp_path / "crafted.jsonl",
        header(),
        memory_line("m", source=source),
        json.dumps({"type": "source", **source}),
    )

    report = import_file(agent, crafted)

    assert [p.path for p in report.problems] == ["crafted.jsonl:2", "crafted.jsonl:3"]
    assert not Memory.objects.filter(agent=agent).exists()
    assert not ImportedSource.objects.filter(agent=agent).exists()


@pytest.mark.parametrize(
    "raw",
    [
        {"shape": "object", "namespace": "session"},  # no entries_key
        {"keys": [1, 2]},
        {"values": []},
        {"shape": "tree"},
        {"planted": True},
    ],
)
def test_a_rockbot_trace_an_export_could_not_read_refuses_the_line(agent, tmp_path, raw):
    source = {"format": "rockbot", "path": "working/session.json", "position": 0, "raw": raw}
    crafted = write_jsonl(
        tmp_path / "crafted.jsonl", header(), json.dumps({"type": "source", **source})
    )

    report = import_file(agent, crafted)

    assert [p.path for p in report.problems] == ["crafted.jsonl:2"]
    assert "source raw" in report.problems[0].message
    assert not ImportedSource.objects.filter(agent=agent).exists()


def test_a_ref_too_long_for_an_alias_is_refused_not_cut(agent, tmp_path):
    crafted = write_jsonl(
        tmp_path / "long.jsonl", header(), memory_line("x" * 256), memory_line("fine")
    )

    report = import_file(agent, crafted)

    assert [(p.path, p.message) for p in report.problems] == [
        ("long.jsonl:2", "its id is 256 characters long; at most 255 fit.")
    ]
    assert list(Memory.objects.filter(agent=agent).values_list("alias", flat=True)) == ["fine"]


def test_an_unknown_header_key_is_a_clear_command_error(db, tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", header("keyed", colour="red"), memory_line("m"))

    with pytest.raises(CommandError) as raised:
        call_command("import_agent", str(path))

    message = str(raised.value)
    assert "colour" in message and "display_name" in message and "review_mode" in message
    assert not Agent.objects.filter(name="keyed").exists()


@pytest.mark.parametrize(
    ("agent_settings", "named"),
    [({"review_mode": "sometimes"}, "review_mode"), ({"self_editing_enabled": "no"}, "self")],
)
def test_a_header_setting_of_the_wrong_kind_is_a_command_error(db, tmp_path, agent_settings, named):
    path = write_jsonl(tmp_path / "a.jsonl", header("typed", **agent_settings), memory_line("m"))

    with pytest.raises(CommandError, match=named):
        call_command("import_agent", str(path))
    assert not Agent.objects.filter(name="typed").exists()


def test_a_folder_import_skips_linked_files(db, tmp_path):
    outside = write_jsonl(tmp_path / "outside.jsonl", header("linked"), memory_line("m"))
    folder = tmp_path / "backups"
    folder.mkdir()
    write_jsonl(folder / "real.jsonl", header("real"), memory_line("r"))
    (folder / "linked.jsonl").symlink_to(outside)

    with pytest.raises(CommandError, match="1 file"):
        call_command("import_agent", str(folder))

    assert Memory.objects.filter(agent__name="real").count() == 1
    assert not Agent.objects.filter(name="linked").exists()


def test_lines_nested_too_deep_are_reported_not_imported(agent, make, tmp_path):
    """Regression: a line nested past Python's recursion limit crashed the import, and
    metadata nested hundreds deep was imported; both are now reported problems."""
    make.memory(agent, "The user likes tea.")
    lines = export_lines(agent)
    record = json.loads(lines[-1])

    def with_metadata(depth: int) -> str:
        text = json.dumps({**record, "ref": f"deep-{depth}", "metadata": {}})
        return text.replace('"metadata": {}', '"metadata": ' + '{"a":' * depth + "1" + "}" * depth)

    path = tmp_path / "agent.jsonl"
    path.write_text("\n".join([*lines, with_metadata(25), with_metadata(100_000)]) + "\n", "utf-8")
    copy = AgentFactory()

    report = import_file(copy, path)

    problems = {problem.path: problem.message for problem in report.problems}
    assert set(problems) == {f"agent.jsonl:{len(lines) + 1}", f"agent.jsonl:{len(lines) + 2}"}
    assert "the limit is 20" in problems[f"agent.jsonl:{len(lines) + 1}"]
    assert "more than 32 levels deep" in problems[f"agent.jsonl:{len(lines) + 2}"]
    assert list(Memory.objects.filter(agent=copy).values_list("content", flat=True)) == [
        "The user likes tea."
    ]


def test_export_to_a_folder_that_does_not_exist_yet_makes_it(agent, make, tmp_path, monkeypatch):
    """`--out backups/` wrote a file named `backups` when there was no such folder."""
    build_agent(agent, make)
    monkeypatch.chdir(tmp_path)

    call_command("export_agent", agent.name, "--out", "backups/")

    assert (tmp_path / "backups").is_dir()
    lines = (tmp_path / "backups" / f"{agent.name}.jsonl").read_text("utf-8").splitlines()
    assert json.loads(lines[0])["format"] == native.FORMAT


def test_1100_working_memories_reimport_matched_by_namespace_and_key(agent, tmp_path):
    lines = [header("crafted")]
    for number in range(1100):
        lines.append(
            json.dumps(
                {
                    "type": "working",
                    "ref": f"w-{number}",
                    "version": 1,
                    "namespace": "session",
                    "key": f"key-{number}",
                    "value": f"Value {number}.",
                }
            )
        )
    path = write_jsonl(tmp_path / "working.jsonl", *lines)

    assert import_file(agent, path).tallies["working"].created == 1100
    again = import_file(agent, path).tallies["working"]

    assert (again.created, again.unchanged) == (0, 1100)
    assert WorkingMemoryEntry.objects.filter(agent=agent).count() == 1100
