"""The native JSON Lines format: export, import, export gives the same lines."""

from __future__ import annotations

import io
import json

from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from stores.interchange import native
from stores.models import Memory, Revision, Subject
from stores.services import (
    Actor,
    find_record,
    memory_invalidate,
    record_edit,
    rules_add,
    subject_create,
)
from stores.services.importing import import_records
from stores.services.surfaces import MEMORY
from tests.factories import AgentFactory

me = Actor.maintainer("tests")


def build_agent(agent, make):
    """An agent with every surface, edits, a subject, a superseded memory and each store."""
    maria = subject_create(agent=agent, display_name="Maria", external_id="maria", aliases=["M"])
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


def export_lines(agent, **options) -> list[str]:
    buffer = io.BytesIO()
    native.write_agent(agent, buffer, **options)
    return buffer.getvalue().decode("utf-8").splitlines()


def import_file(agent, path, **options):
    subjects = {s.external_id: s for s in agent.subjects.all()}
    for line in native.read_subjects(path):
        if line["external_id"] not in subjects:
            subjects[line["external_id"]] = subject_create(
                agent=agent,
                **{k: v for k, v in line.items() if k != "privacy_level"},
                privacy_level=line["privacy_level"],
            )
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
    assert "too deeply" in problems[f"agent.jsonl:{len(lines) + 2}"]
    assert list(Memory.objects.filter(agent=copy).values_list("content", flat=True)) == [
        "The user likes tea."
    ]
