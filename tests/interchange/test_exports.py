"""The exports people have, in: Claude, ChatGPT, mem0 and Letta, each from a fixture built
from that format's own definition (see the README for the versions checked)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from stores.models import Agent, ImportedSource, Memory, MemoryFile, Revision, Subject

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "exports"


def run(source: str, path: Path, agent: str = "rocky", *extra: str) -> str:
    out = io.StringIO()
    call_command("import_pam", str(path), "--agent", agent, "--from", source, *extra, stdout=out)
    return out.getvalue()


def assert_second_run_writes_nothing(source: str, path: Path) -> None:
    revisions = Revision.objects.count()
    run(source, path)
    assert Revision.objects.count() == revisions


@pytest.mark.django_db
def test_claude_memories_come_in_through_the_sdk_converter():
    out = run("claude", FIXTURES / "claude")
    memories = {m.alias: m for m in Memory.objects.filter(agent__name="rocky")}
    assert set(memories) == {"claude-conversations-memory", "claude-proj-4f1c2a9e"}
    assert memories["claude-conversations-memory"].content.startswith("Rocky runs the patrol")
    assert memories["claude-conversations-memory"].category == "context"
    assert memories["claude-proj-4f1c2a9e"].category == "project"
    assert memories["claude-proj-4f1c2a9e"].metadata["pam"]["provenance"] == {
        "platform": "claude",
        "extraction_method": "api_export",
    }
    assert "1 Claude conversation(s) read and valid" in out
    assert_second_run_writes_nothing("claude", FIXTURES / "claude")


@pytest.mark.django_db
def test_chatgpt_memories_are_what_the_assistant_told_its_memory_tool():
    out = run("chatgpt", FIXTURES / "chatgpt" / "conversations.json")
    (memory,) = Memory.objects.filter(agent__name="rocky")
    assert memory.alias == "chatgpt-a1"
    assert memory.content == "User's cat is called Miso and only eats fish."
    provenance = memory.metadata["pam"]["provenance"]
    assert provenance["conversation_ref"] == "67c2f0a0-0000-8000-9000-000000000001"
    assert provenance["message_ref"] == "a1"
    assert memory.metadata["pam"]["conversation"]["title"] == "Cat food"
    assert memory.created_at.timestamp() == 1740819605.0
    assert "2 ChatGPT conversation(s) read; 1 gave memories." in out
    assert_second_run_writes_nothing("chatgpt", FIXTURES / "chatgpt" / "conversations.json")


@pytest.mark.django_db
def test_mem0_ids_hashes_users_agents_and_metadata():
    run("mem0", FIXTURES / "mem0" / "get_all.json")
    alice = Subject.objects.get(agent__name="rocky", external_id="alice")
    veggie = Memory.objects.get(alias="892db2ae-06d9-49e5-8b3e-585ef9b85b8e")
    assert veggie.agent.name == "rocky" and veggie.subject == alice
    assert veggie.metadata["mem0"]["metadata"] == {"food": "diet"}
    assert veggie.metadata["mem0"]["user_id"] == "alice"
    nuts = Memory.objects.get(alias="8d268d0f-5452-4714-b27d-ae46f676a49d")
    assert nuts.metadata["mem0"]["run_id"] == "trip-planning"
    flights = Memory.objects.get(alias="0d9a0e4e-2f8e-4f4b-9e0c-2d5b0b1f3a7c")
    assert flights.agent.name == "travel-bot"
    assert flights.subject.external_id == "alice" and flights.subject.agent == flights.agent
    assert flights.updated_at.isoformat() == "2024-08-03T12:30:00+00:00"
    assert_second_run_writes_nothing("mem0", FIXTURES / "mem0" / "get_all.json")


@pytest.mark.django_db
def test_a_mem0_hash_that_is_not_its_texts_refuses_the_file(tmp_path):
    document = json.loads((FIXTURES / "mem0" / "get_all.json").read_text("utf-8"))
    document["results"][1]["memory"] = "Allergic to peanuts"
    tampered = tmp_path / "get_all.json"
    tampered.write_text(json.dumps(document), "utf-8")
    with pytest.raises(CommandError, match=r"\[hash\] mem0 memory '8d268d0f-.*MD5"):
        run("mem0", tampered)
    assert not Memory.objects.exists()
    assert not Agent.objects.filter(name="travel-bot").exists()


@pytest.mark.django_db
def test_letta_core_memory_blocks_become_memory_files(tmp_path):
    out = run("letta", FIXTURES / "letta" / "single-agent.af")
    files = dict(MemoryFile.objects.filter(agent__name="rocky").values_list("path", "content"))
    assert files == {
        "/memories/letta/persona.md": "I am Sam, a patient companion.\nI keep answers short.",
        "/memories/letta/human.md": "Name: Rocky\nLikes: tea, early mornings",
    }
    trace = ImportedSource.objects.get(path="single-agent.af#/memories/letta/human.md")
    assert trace.raw["description"] == "What I know about the human"
    assert trace.raw["limit"] == 5000
    assert "no archival passages" in out
    assert_second_run_writes_nothing("letta", FIXTURES / "letta" / "single-agent.af")


@pytest.mark.django_db
def test_a_letta_file_of_several_agents_keeps_each_agents_blocks_apart():
    run("letta", FIXTURES / "letta" / "two-agents.af")
    files = dict(MemoryFile.objects.filter(agent__name="rocky").values_list("path", "content"))
    assert files == {
        "/memories/letta/planner/persona.md": "I break work into steps.",
        "/memories/letta/planner/project.md": "Heron ships on Fridays.",
        "/memories/letta/writer/persona.md": "I write plainly.",
        "/memories/letta/writer/project.md": "Heron ships on Fridays.",
    }


@pytest.mark.django_db
def test_a_letta_file_naming_a_missing_block_is_refused(tmp_path):
    document = json.loads((FIXTURES / "letta" / "two-agents.af").read_text("utf-8"))
    document["agents"][1]["block_ids"].append("block-9")
    broken = tmp_path / "broken.af"
    broken.write_text(json.dumps(document), "utf-8")
    with pytest.raises(CommandError, match=r"\[xref-block\].*'writer'.*block-9"):
        run("letta", broken)
    assert not MemoryFile.objects.exists()


PASSAGES = FIXTURES / "letta" / "archival-passages.json"


@pytest.mark.django_db
def test_letta_archival_passages_become_long_term_memories():
    out = run("letta", PASSAGES)
    memories = {m.alias: m for m in Memory.objects.filter(agent__name="rocky")}
    assert set(memories) == {
        "passage-7f3e9a10-0000-4000-8000-000000000001",
        "passage-7f3e9a10-0000-4000-8000-000000000002",
    }
    sister = memories["passage-7f3e9a10-0000-4000-8000-000000000001"]
    assert sister.content == "Rocky's sister Ana moved to Lisbon in March 2025."
    assert sister.tags == ["family", "travel"]
    assert sister.created_at.isoformat() == "2025-11-05T23:04:24.901468+00:00"
    assert sister.updated_at.isoformat() == "2025-11-06T08:15:00+00:00"
    kept = sister.metadata["letta"]
    assert kept["archive_id"] == "archive-5c1d7e2a-0000-4000-8000-000000000001"
    assert kept["metadata"] == {"origin": "conversation"}
    assert "embedding" not in kept and kept["embedding_config"]["embedding_dim"] == 1536
    assert memories["passage-7f3e9a10-0000-4000-8000-000000000002"].tags == []
    assert "2 archival passage(s) as long-term memories; 1 deleted one(s) left out." in out
    assert_second_run_writes_nothing("letta", PASSAGES)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        ({"text": "  "}, r"\[schema\] Letta passage 'passage-.*0002': id and text are required"),
        ({"created_at": "yesterday"}, r"'yesterday' is not an ISO 8601 time"),
        ({"tags": "family"}, r"tags must be a list"),
    ],
)
def test_a_malformed_letta_passage_refuses_the_file(tmp_path, change, refusal):
    passages = json.loads(PASSAGES.read_text("utf-8"))
    passages[1].update(change)
    broken = tmp_path / "passages.json"
    broken.write_text(json.dumps(passages), "utf-8")
    with pytest.raises(CommandError, match=refusal):
        run("letta", broken)
    assert not Memory.objects.exists()


@pytest.mark.django_db
def test_a_dry_run_of_an_export_writes_nothing(tmp_path):
    folder = tmp_path / "claude"
    shutil.copytree(FIXTURES / "claude", folder)
    out = run("claude", folder, "rocky", "--dry-run")
    assert "dry run" in out
    assert not Agent.objects.filter(name="rocky").exists()
