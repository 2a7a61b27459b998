"""import_files / export_files: a memory directory in and out byte for byte, links refused."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from stores.engine.actors import Actor
from stores.models import Agent, MemoryFile, Revision
from stores.services import record_edit

pytestmark = pytest.mark.django_db

FILES = {
    "notes.md": b"# Notes\n\n- tea, not coffee\n",
    "projects/heron.md": b"Heron ships on Fridays.\r\nOwner: Ana\r\n",
    "projects/deep/no-final-newline.txt": b"last line without an ending",
    "bom.md": b"\xef\xbb\xbfStarts with a byte-order mark.\n",
    "unicode/caf\u00e9.md": "Caf\u00e9 \u2615 \u4e2d\u6587 \U0001f600\n".encode(),
    "empty.md": b"",
    ".hidden/kept.md": b"Hidden files come along too.\n",
    "mixed.txt": b"one\r\ntwo\nthree\rfour\n",
}


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    for relative, data in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def read_tree(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in root.rglob("*")
        if path.is_file() and not path.is_symlink()
    }


def run(*args: str, **options) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO(), **options)
    return out.getvalue()


def test_every_file_round_trips_byte_for_byte(agent, tmp_path):
    source, target = tmp_path / "in", tmp_path / "out"
    write_tree(source, FILES)

    run("import_files", str(source), agent=agent.name)
    paths = set(MemoryFile.objects.filter(agent=agent).values_list("path", flat=True))
    assert paths == {f"/memories/{relative}" for relative in FILES}
    assert MemoryFile.objects.get(path="/memories/projects/heron.md").content == (
        "Heron ships on Fridays.\r\nOwner: Ana\r\n"
    )
    run("export_files", agent.name, str(target))

    assert read_tree(target) == FILES


def test_a_second_import_changes_only_what_changed(agent, tmp_path):
    write_tree(tmp_path, FILES)
    run("import_files", str(tmp_path), agent=agent.name)
    record = MemoryFile.objects.get(agent=agent, path="/memories/notes.md")
    record_edit(
        surface_key="file",
        agent=agent,
        ref=record.pk,
        actor=Actor.maintainer("tests"),
        old_string="tea",
        new_string="green tea",
    )
    (tmp_path / "projects/heron.md").write_bytes(b"Heron ships on Thursdays.\r\n")

    out = run("import_files", str(tmp_path), agent=agent.name, verbose_changes=True)

    assert "/memories/projects/heron.md" in out and "/memories/notes.md" in out
    assert MemoryFile.objects.get(path="/memories/notes.md").content == FILES["notes.md"].decode()
    assert Revision.objects.filter(agent=agent, surface="file").count() == len(FILES) + 3


def test_a_dry_run_reports_and_writes_nothing(tmp_path):
    write_tree(tmp_path, FILES)
    out = run("import_files", str(tmp_path), agent="newcomer", dry_run=True, verbose_changes=True)
    assert "dry run" in out
    assert "would create file /memories/projects/heron.md" in out
    assert not Agent.objects.filter(name="newcomer").exists()
    assert not MemoryFile.objects.exists()


def test_a_file_that_is_not_utf8_is_refused_by_name_and_the_rest_imported(agent, tmp_path):
    write_tree(tmp_path, {"latin1.txt": "caf\u00e9\n".encode("latin-1"), "ok.md": b"fine\n"})
    (tmp_path / "nul.bin").write_bytes(b"a\x00b")

    with pytest.raises(CommandError, match="2 file"):
        run("import_files", str(tmp_path), agent=agent.name)

    assert list(MemoryFile.objects.values_list("path", flat=True)) == ["/memories/ok.md"]


def test_not_utf8_reads_as_a_sentence_naming_the_byte(agent, tmp_path, capsys):
    write_tree(tmp_path, {"latin1.txt": "caf\u00e9\n".encode("latin-1")})
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_files", str(tmp_path), agent=agent.name, stdout=out)
    assert "latin1.txt: is not UTF-8 text (byte 3 is 0xe9)" in out.getvalue()


def test_links_are_never_followed_on_import(agent, tmp_path):
    outside = tmp_path / "outside"
    write_tree(outside, {"secret.txt": b"not yours\n"})
    root = tmp_path / "memories"
    write_tree(root, {"real.md": b"mine\n"})
    (root / "link.md").symlink_to(outside / "secret.txt")
    (root / "linked-dir").symlink_to(outside, target_is_directory=True)

    with pytest.raises(CommandError, match="2 file"):
        run("import_files", str(root), agent=agent.name)

    assert list(MemoryFile.objects.values_list("path", "content")) == [
        ("/memories/real.md", "mine\n")
    ]


def test_export_never_writes_through_a_planted_link(agent, tmp_path):
    write_tree(tmp_path / "in", {"projects/heron.md": b"Heron\n", "a.md": b"A\n"})
    run("import_files", str(tmp_path / "in"), agent=agent.name)
    target, outside = tmp_path / "out", tmp_path / "elsewhere"
    outside.mkdir()
    target.mkdir()
    (target / "projects").symlink_to(outside, target_is_directory=True)

    with pytest.raises(CommandError, match="1 file"):
        run("export_files", agent.name, str(target))

    assert list(outside.iterdir()) == []
    assert (target / "a.md").read_bytes() == b"A\n"


def test_a_directory_of_1100_files_imports_and_reimports_changing_nothing(agent, tmp_path):
    # Existing records are matched in chunks: one condition per file overflowed SQLite's
    # expression depth (1,000), and the whole import failed.
    source = tmp_path / "in"
    write_tree(
        source, {f"notes/{number}.md": f"Note {number}.\n".encode() for number in range(1100)}
    )

    run("import_files", str(source), agent=agent.name)
    run("import_files", str(source), agent=agent.name)

    assert MemoryFile.objects.filter(agent=agent).count() == 1100
    assert set(MemoryFile.objects.filter(agent=agent).values_list("version", flat=True)) == {1}
