"""Memory files: a path under /memories names each, checked by the model whatever the door."""

from __future__ import annotations

import pytest

from stores.editing import Status
from stores.engine.actors import Actor
from stores.models import MemoryFile
from stores.services import record_create, record_update

pytestmark = pytest.mark.django_db

ME = Actor.maintainer("tests")


def _create(agent, path, content="Some text.\n"):
    return record_create(
        surface_key="file", agent=agent, actor=ME, values={"path": path, "content": content}
    )


def test_a_file_is_created_at_its_path_and_embedded_with_it(agent):
    result = _create(agent, "/memories/projects/heron.md", "# Heron\n")
    assert result.status is Status.CREATED
    record = MemoryFile.objects.get(pk=result.id)
    assert record.path == "/memories/projects/heron.md"
    assert record.embedding_text() == "/memories/projects/heron.md\n# Heron\n"


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("/invalid/path.txt", "must start with /memories/"),
        ("/memories", "must start with /memories/"),
        ("memories/a.md", "must start with /memories/"),
        ("/memories/../../../etc/passwd", "would escape /memories"),
        ("/memories/a/./b.md", "would escape /memories"),
        ("/memories/%2e%2e/secret", "percent-encoded"),
        ("/memories/a%2Fb", "percent-encoded"),
        ("/memories/a\\..\\b", "backslash"),
        ("/memories//a.md", "empty segment"),
        ("/memories/dir/", "empty segment"),
        ("/memories/a\nb.md", "control character"),
        ("/memories/" + "x" * 256, "longer than 255"),
        ("/memories/" + "a/" * 500 + "b", "the limit is 1000"),
    ],
)
def test_a_path_outside_memories_or_with_tricks_is_refused(agent, path, words):
    result = _create(agent, path)
    assert result.status is Status.INVALID
    assert words in result.message
    assert not MemoryFile.objects.exists()


def test_two_files_of_an_agent_never_share_a_path(agent, other_agent):
    assert _create(agent, "/memories/a.md").ok
    assert _create(other_agent, "/memories/a.md").ok
    again = _create(agent, "/memories/a.md")
    assert again.status is Status.CONFLICT
    assert "already has that path" in again.message
    assert MemoryFile.objects.filter(agent=agent).count() == 1


def test_a_rename_is_a_field_update_checked_like_a_create(agent):
    made = _create(agent, "/memories/old.md")
    moved = record_update(
        surface_key="file", agent=agent, ref=made.id, actor=ME, changes={"path": "/memories/new.md"}
    )
    assert moved.status is Status.UPDATED
    refused = record_update(
        surface_key="file", agent=agent, ref=made.id, actor=ME, changes={"path": "/memories/../x"}
    )
    assert refused.status is Status.INVALID
    assert MemoryFile.objects.get(pk=made.id).path == "/memories/new.md"


def test_a_rename_of_any_surface_is_held_to_its_fields_length(agent, make):
    skill = make("skill", agent, name="deploy", summary="How.", content="# Deploy\n")
    refused = record_update(
        surface_key="skill", agent=agent, ref=skill.pk, actor=ME, changes={"name": "x" * 201}
    )
    assert refused.status is Status.INVALID
    assert "name" in refused.message
