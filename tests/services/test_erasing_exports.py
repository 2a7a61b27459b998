"""An erasure reaches every export file memoryadmin wrote and still finds where it was written:
each is rewritten without the text, or deleted where only the erased text or record made it,
and the receipt counts which."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from django.core import serializers
from django.core.management import call_command

from stores.engine.actors import Actor
from stores.models import ExportFile, Memory, Skill
from stores.services import record_create
from stores.services.embeddings import reembed_sweep
from stores.services.erasing import ERASED, Scope, erase

ME = Actor.maintainer("tests")
SECRET = "zebra-quartz-77d2"


def files_below(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def export_everything(agent, root: Path) -> None:
    call_command("export_agent", agent.name, out=str(root / "agent.jsonl"), with_revisions=True)
    call_command("export_files", agent.name, str(root / "files"))
    call_command("export_rockbot", agent.name, str(root / "rockbot"))
    call_command("export_pam", agent=agent.name, bundle=root / "pam")


@pytest.fixture
def exported(agent, make, tmp_path):
    """An agent with the secret in a memory, a memory file and a skill, and one of each
    without it, exported in every format memoryadmin writes."""
    make.memory(agent, content=f"The door code is {SECRET}.")
    make.memory(agent, content="The user prefers tea over coffee.")
    make.skill(agent, name="deploy", content=f"# Deploy\n\nUse {SECRET}.\n")
    make.skill(agent, name="brew", content="# Brew\n\nBoil the water.\n")
    files = (("/memories/code.md", f"Code: {SECRET}\n"), ("/memories/tea.md", "Tea.\n"))
    for path, content in files:
        record_create(
            surface_key="file", agent=agent, actor=ME, values={"path": path, "content": content}
        )
    reembed_sweep(agent=agent)
    export_everything(agent, tmp_path)
    return tmp_path


def test_a_dry_run_counts_the_exports_and_touches_none(agent, exported):
    before = files_below(exported)

    report = erase(agent=agent, actor=ME, scope=Scope(text=SECRET), dry_run=True)

    assert report["counts"]["exports_rewritten"] == 4
    assert report["counts"]["exports_deleted"] == 2
    assert files_below(exported) == before
    assert ExportFile.objects.filter(agent=agent).count() == len(before)


def test_erasing_text_rewrites_the_exports_holding_it_and_leaves_the_others(agent, exported):
    before = files_below(exported)
    holding = {name for name, data in before.items() if SECRET.encode() in data}

    receipt = erase(agent=agent, actor=ME, scope=Scope(text=SECRET))

    after = files_below(exported)
    assert not any(SECRET.encode() in data for data in after.values())
    # The PAM memory store holds content hashes of the text, and its embeddings file vectors
    # of it: both are deleted, not falsified; every other file holding it is rewritten.
    deleted = {"pam/memory-store.json", "pam/embeddings.json"}
    assert set(before) - set(after) == deleted
    assert {name for name in holding if name in after} == holding - deleted
    assert len(holding - deleted) == 4
    assert receipt["counts"]["exports_rewritten"] == 4
    assert receipt["counts"]["exports_deleted"] == 2
    named = {
        (str(Path(entry["path"]).relative_to(exported.resolve())), entry["action"])
        for entry in receipt["exports"]
    }
    assert named == {(name, "rewritten") for name in holding - deleted} | {
        (name, "deleted") for name in deleted
    }
    assert after["files/code.md"] == f"Code: {ERASED}\n".encode()
    assert json.loads(after["rockbot/skills/deploy.json"])["Content"] == (
        f"# Deploy\n\nUse {ERASED}.\n"
    )
    untouched = set(before) - holding - {"pam/embeddings.json"}
    assert untouched and all(after[name] == before[name] for name in untouched)


def test_erasing_a_record_deletes_its_own_export_files(agent, exported):
    skill_id = Skill.objects.get(agent=agent, name="deploy").pk
    before = files_below(exported)

    receipt = erase(agent=agent, actor=ME, scope=Scope(record=("skill", skill_id)))

    after = files_below(exported)
    assert "rockbot/skills/deploy.json" in before and "rockbot/skills/deploy.json" not in after
    assert "rockbot/skills/brew.json" in after
    assert receipt["counts"]["exports_deleted"] >= 1
    assert not any(b"Use " + SECRET.encode() in data for data in after.values())
    assert not ExportFile.objects.filter(surface="skill", record_id=skill_id).exists()


def test_a_file_named_by_the_text_is_deleted_with_its_row(agent, make, tmp_path):
    record_create(
        surface_key="file",
        agent=agent,
        actor=ME,
        values={"path": f"/memories/{SECRET}.md", "content": "Nothing secret inside.\n"},
    )
    call_command("export_files", agent.name, str(tmp_path))
    assert (tmp_path / f"{SECRET}.md").is_file()

    receipt = erase(agent=agent, actor=ME, scope=Scope(text=SECRET))

    assert not (tmp_path / f"{SECRET}.md").exists()
    assert receipt["counts"]["exports_deleted"] == 1
    (entry,) = receipt["exports"]
    assert entry == {
        "format": "files",
        "action": "deleted",
        "path_sha256": hashlib.sha256(
            str(tmp_path.resolve() / f"{SECRET}.md").encode()
        ).hexdigest(),
    }
    assert SECRET not in json.dumps(receipt)
    assert SECRET not in serializers.serialize("json", ExportFile.objects.all())


def test_a_moved_export_is_left_and_a_link_in_its_place_is_not_written_through(
    agent, make, tmp_path
):
    make.memory(agent, content=f"The door code is {SECRET}.")
    out = tmp_path / "agent.jsonl"
    call_command("export_agent", agent.name, out=str(out))
    moved = tmp_path / "moved.jsonl"
    out.rename(moved)
    out.symlink_to(moved)

    receipt = erase(agent=agent, actor=ME, scope=Scope(text=SECRET))

    assert SECRET in moved.read_text("utf-8")
    assert receipt["counts"]["exports_rewritten"] == receipt["counts"]["exports_deleted"] == 0


def test_a_rewritten_native_line_loses_the_vector_of_the_erased_text(agent, make, tmp_path):
    holder = make.memory(agent, content=f"The door code is {SECRET}.")
    bystander = make.memory(agent, content="The user prefers tea over coffee.")
    out = tmp_path / "agent.jsonl"
    reembed_sweep(agent=agent)
    call_command("export_agent", agent.name, out=str(out), with_vectors=True)
    lines = {line["ref"]: line for line in map(json.loads, out.read_text("utf-8").splitlines()[1:])}
    assert lines[str(holder.pk)]["embedding"] is not None

    erase(agent=agent, actor=ME, scope=Scope(text=SECRET))

    lines = {line["ref"]: line for line in map(json.loads, out.read_text("utf-8").splitlines()[1:])}
    assert lines[str(holder.pk)]["content"] == f"The door code is {ERASED}."
    assert lines[str(holder.pk)]["embedding"] is None
    assert lines[str(bystander.pk)]["embedding"] is not None
    assert Memory.objects.get(pk=bystander.pk).content == "The user prefers tea over coffee."
