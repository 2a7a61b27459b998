"""A RockBot re-import leaves a memory file unparsed while it and its memory are unchanged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stores.engine.actors import Actor
from stores.interchange import rockbot
from stores.models import ImportedSource, Memory
from stores.services import memory_set_importance
from stores.services.decay import decay_importance
from stores.services.importing.run import import_records

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "rockbot"
MALFORMED = "memory/people/broken-entry.json"
# Names a successor: whether its link can be set depends on other files, so it is always read.
NAMES_A_SUCCESSOR = "memory/project-notes/41.json"
UNICODE_MEMORY = "b2e9c1d4-5f6a-4b7c-8d9e-0f1a2b3c4d5e"
UNICODE_PATH = f"memory/user-preferences/{UNICODE_MEMORY}.json"
me = Actor.maintainer("tests")


@pytest.fixture
def parsed(monkeypatch) -> list[str]:
    """The memory files an import parses, in order."""
    paths: list[str] = []
    read_memory = rockbot._read_memory

    def counting(relative, *args, **kwargs):
        paths.append(relative)
        return read_memory(relative, *args, **kwargs)

    monkeypatch.setattr(rockbot, "_read_memory", counting)
    return paths


def run_import(agent, root: Path = FIXTURE, *, dry_run: bool = False):
    return import_records(agent=agent, items=rockbot.read_store(root), actor=me, dry_run=dry_run)


def tallies(report) -> dict[str, tuple[int, int, int, int]]:
    return {key: (t.created, t.changed, t.unchanged, t.failed) for key, t in report.tallies.items()}


def copy_of_fixture(tmp_path: Path) -> Path:
    root = tmp_path / "agent"
    shutil.copytree(FIXTURE, root)
    return root


def test_a_noop_reimport_parses_no_unchanged_memory_file(agent, parsed):
    first = run_import(agent)
    parsed.clear()

    again = run_import(agent)

    # The malformed file has no trace, so it is read (and reported) again.
    assert parsed == [NAMES_A_SUCCESSOR]
    assert tallies(again) == {
        "memory": (0, 0, 5, 0),
        "working": (0, 0, 3, 0),
        "skill": (0, 0, 2, 0),
        "task": (0, 0, 1, 0),
        "rules": (0, 0, 1, 0),
    }
    assert [(p.path, p.message) for p in again.problems] == [
        (p.path, p.message) for p in first.problems
    ]
    parsed.clear()
    assert tallies(run_import(agent, dry_run=True)) == tallies(again)
    assert parsed == [NAMES_A_SUCCESSOR]


def test_the_reimport_that_notes_digests_skips_from_then_on(agent, parsed):
    run_import(agent)
    # As after an upgrade: traces written before files had digests.
    ImportedSource.objects.filter(agent=agent).update(digest="", record_version=None)
    parsed.clear()

    assert tallies(run_import(agent))["memory"] == (0, 0, 5, 0)
    assert len(parsed) == 5
    parsed.clear()
    run_import(agent)
    assert parsed == [NAMES_A_SUCCESSOR]


def test_a_changed_file_is_parsed_and_synced(agent, parsed, tmp_path):
    root = copy_of_fixture(tmp_path)
    run_import(agent, root)
    path = root / UNICODE_PATH
    doc = json.loads(path.read_text("utf-8"))
    doc["Content"] = doc["Content"].replace("oat milk", "almond milk")
    path.write_text(json.dumps(doc), "utf-8")
    parsed.clear()

    report = run_import(agent, root)

    assert sorted(parsed) == sorted([UNICODE_PATH, NAMES_A_SUCCESSOR])
    assert tallies(report)["memory"] == (0, 1, 4, 0)
    assert "almond milk" in Memory.objects.get(agent=agent, alias=UNICODE_MEMORY).content
    parsed.clear()
    assert tallies(run_import(agent, root))["memory"] == (0, 0, 5, 0)
    assert parsed == [NAMES_A_SUCCESSOR]


def test_a_memory_edited_since_the_import_is_compared_and_synced_back(agent, parsed):
    run_import(agent)
    memory = Memory.objects.get(agent=agent, alias=UNICODE_MEMORY)
    assert memory_set_importance(agent=agent, ref=memory.pk, actor=me, importance=0.9).ok
    parsed.clear()

    report = run_import(agent)

    assert UNICODE_PATH in parsed
    assert tallies(report)["memory"] == (0, 1, 4, 0)
    memory.refresh_from_db()
    assert memory.importance == 0.4
    parsed.clear()
    run_import(agent)
    assert parsed == [NAMES_A_SUCCESSOR]


def test_a_memory_decayed_since_the_import_gets_its_importance_back(agent, parsed):
    """Decay lowers importance without a new version: the trace notes when it last ran."""
    run_import(agent)
    before = dict(Memory.objects.filter(agent=agent).values_list("alias", "importance"))
    decay_importance(half_life_days=1.0)
    lowered = {
        alias
        for alias, importance in Memory.objects.filter(agent=agent).values_list(
            "alias", "importance"
        )
        if importance < before[alias]
    }
    assert UNICODE_MEMORY in lowered
    parsed.clear()

    report = run_import(agent)

    assert UNICODE_PATH in parsed
    assert tallies(report)["memory"] == (0, len(lowered), 5 - len(lowered), 0)
    assert dict(Memory.objects.filter(agent=agent).values_list("alias", "importance")) == before


def test_an_unchanged_file_whose_id_another_file_gave_first_is_refused_as_before(
    agent, parsed, tmp_path
):
    root = copy_of_fixture(tmp_path)
    run_import(agent, root)
    # Sorts before the memory's own file, and gives the same id.
    copy = root / "memory" / "aaa" / f"{UNICODE_MEMORY}.json"
    copy.parent.mkdir()
    copy.write_bytes((root / UNICODE_PATH).read_bytes())
    parsed.clear()

    report = run_import(agent, root)

    assert UNICODE_PATH in parsed
    assert [(p.path, p.message) for p in report.problems if p.path == UNICODE_PATH] == [
        (
            UNICODE_PATH,
            f"the id {UNICODE_MEMORY!r} was already read from memory/aaa/{UNICODE_MEMORY}.json; "
            "this copy is skipped.",
        )
    ]
    assert tallies(report)["memory"] == (0, 0, 5, 1)
