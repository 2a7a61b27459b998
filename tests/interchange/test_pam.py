"""Portable AI Memory (PAM v1.0) out and in, checked by the PAM SDK's own validator."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from portable_ai_memory import (
    compute_content_hash,
    load_dict,
    validate_embeddings,
    validate_memory_store,
)
from portable_ai_memory.core.integrity import compute_integrity_checksum

from stores.engine.actors import Actor
from stores.engine.sources import Source
from stores.interchange import pam, rockbot
from stores.models import Agent, Memory, Revision, Subject, Suggestion
from stores.services import memory_invalidate, record_create, record_edit
from stores.services.agents import subject_create
from stores.services.importing.run import import_records
from tests.factories import AgentFactory

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "rockbot"
me = Actor.maintainer("tests")


def export(agent) -> dict:
    buffer = io.BytesIO()
    pam.write_memory_store(agent, buffer)
    return json.loads(buffer.getvalue())


def sdk_errors(document: dict) -> list[str]:
    result = validate_memory_store(load_dict(document))
    return [str(issue) for issue in result.errors]


def import_document(agent, document: dict, *, dry_run: bool = False):
    return pam.import_memory_store(agent=agent, document=document, actor=me, dry_run=dry_run)


def memories_by_id(document: dict) -> dict[str, dict]:
    return {memory["id"]: memory for memory in document["memories"]}


def a_store(
    *memories: dict, relations: list | None = None, integrity: bool = True, **extra
) -> dict:
    """A third-party memory store, its integrity block computed as the SDK does."""
    document = {
        "schema": "portable-ai-memory",
        "schema_version": "1.0",
        "owner": {"id": "user-1"},
        "memories": list(memories),
        "relations": relations or [],
        **extra,
    }
    if not integrity:
        return document
    document["integrity"] = {
        # Over the memories as the SDK reads them (its defaults filled in), as its validator does.
        "checksum": compute_integrity_checksum([pam.dump(memory) for memory in memories]),
        "total_memories": len(memories),
    }
    return document


def a_memory(ref: str, content: str, **fields) -> dict:
    return {
        "id": ref,
        "type": "fact",
        "content": content,
        "content_hash": compute_content_hash(content),
        "temporal": {"created_at": "2025-03-01T10:00:00Z"},
        "provenance": {"platform": "claude", "extraction_method": "llm_inference"},
        **fields,
    }


@pytest.fixture
def rockbot_agent(db, tmp_path):
    """The RockBot fixture (its one malformed file left out), imported."""
    root = tmp_path / "rockbot"
    shutil.copytree(FIXTURE, root)
    (root / "memory/people/broken-entry.json").unlink()
    agent = AgentFactory(name="rocky")
    report = import_records(agent=agent, items=rockbot.read_store(root), actor=me)
    assert report.ok, report.problems
    return agent


def test_an_export_is_valid_under_the_sdk_and_keeps_every_id(rockbot_agent, make):
    maria = subject_create(
        actor=me, agent=rockbot_agent, display_name="Maria", external_id="maria"
    ).record
    own = make.memory(
        rockbot_agent, "Maria reads reports at 8.", subject=maria, tags=["Mixed Case"]
    )
    document = export(rockbot_agent)

    assert sdk_errors(document) == []
    memories = memories_by_id(document)
    aliases = set(Memory.objects.filter(agent=rockbot_agent).values_list("alias", flat=True))
    assert set(memories) == (aliases - {None}) | {str(own.pk)}
    jenkins = memories["41"]
    assert jenkins["status"] == "superseded"
    assert jenkins["temporal"]["superseded_by"] == "c0ffee00-1111-4222-8333-944455556666"
    assert jenkins["type"] == "custom" and jenkins["custom_type"] == "project-notes"
    assert jenkins["confidence"]["current"] == 0.6
    assert jenkins["metadata"]["memoryadmin"]["reinforcement_count"] == 2
    assert document["relations"] == [
        {
            "id": "supersedes:41",
            "from": "c0ffee00-1111-4222-8333-944455556666",
            "to": "41",
            "type": "supersedes",
            "created_at": jenkins["temporal"]["valid_until"],
        }
    ]
    mine = memories[str(own.pk)]
    assert mine["tags"] == []  # PAM cannot spell it; the extension keeps it
    assert mine["metadata"]["memoryadmin"]["tags"] == ["Mixed Case"]
    assert mine["metadata"]["memoryadmin"]["subject"]["external_id"] == "maria"
    assert document["integrity"]["total_memories"] == len(memories)


def test_round_trip_rockbot_to_pam_to_a_fresh_agent_to_pam_is_the_same(rockbot_agent, make):
    maria = subject_create(
        actor=me, agent=rockbot_agent, display_name="Maria", external_id="maria"
    ).record
    make.memory(rockbot_agent, "Maria likes a heads-up.", subject=maria, importance=0.9)
    first = export(rockbot_agent)

    fresh = AgentFactory(name="fresh")
    outcome = import_document(fresh, first)
    assert outcome.report.ok, outcome.report.problems
    second = export(fresh)

    assert second["memories"] == first["memories"]
    assert second["relations"] == first["relations"]
    assert second["conversations_index"] == first["conversations_index"]
    assert second["integrity"] == first["integrity"]
    assert second["export_id"] != first["export_id"]
    assert Subject.objects.get(agent=fresh, external_id="maria").display_name == "Maria"
    assert sdk_errors(second) == []


def test_re_importing_the_same_file_or_our_own_export_writes_nothing(rockbot_agent):
    document = export(rockbot_agent)
    revisions = Revision.objects.count()
    outcome = import_document(rockbot_agent, document)
    assert outcome.report.tally("memory").created == 0
    assert outcome.report.tally("memory").changed == 0
    assert Revision.objects.count() == revisions

    third_party = a_store(a_memory("m-1", "Prefers dark mode.", summary="dark mode"))
    import_document(rockbot_agent, third_party)
    revisions = Revision.objects.count()
    again = import_document(rockbot_agent, third_party)
    assert again.report.tally("memory").unchanged == 1
    assert Revision.objects.count() == revisions
    assert import_document(rockbot_agent, export(rockbot_agent)).report.tally("memory").changed == 0
    assert Revision.objects.count() == revisions


def test_a_changed_memory_is_changed_through_the_edit_engine(agent):
    import_document(agent, a_store(a_memory("m-1", "Prefers dark mode.")))
    outcome = import_document(agent, a_store(a_memory("m-1", "Prefers light mode.")))
    assert outcome.report.tally("memory").changed == 1
    memory = Memory.objects.get(agent=agent, alias="m-1")
    assert memory.content == "Prefers light mode." and memory.version == 2
    assert Revision.objects.filter(record_id=memory.pk).latest("id").op == "replace"


def test_a_dry_run_reports_and_writes_nothing(agent):
    outcome = import_document(agent, a_store(a_memory("m-1", "Prefers dark mode.")), dry_run=True)
    assert outcome.report.tally("memory").created == 1
    assert not Memory.objects.filter(agent=agent).exists()


def test_what_pam_carries_without_a_field_here_comes_back_out(agent):
    rich = a_memory(
        "m-1",
        "Works on the Heron project.",
        type="project",
        status="deprecated",
        summary="Heron",
        tags=["work"],
        confidence={"initial": 0.9, "current": 0.7, "decay_model": "time_linear"},
        temporal={
            "created_at": "2025-03-01T10:00:00Z",
            "valid_from": "2025-03-01T00:00:00Z",
            "valid_until": "2027-01-01T00:00:00Z",
        },
        provenance={
            "platform": "chatgpt",
            "conversation_ref": "conv-1",
            "message_ref": "msg-9",
            "extraction_method": "llm_inference",
        },
        access={"visibility": "shared", "exportable": True, "shared_with": []},
        metadata={"language": "en", "domain": "professional", "team": "blue"},
    )
    other = a_memory("m-2", "Heron ships on Fridays.", provenance={"platform": "chatgpt"})
    document = a_store(
        rich,
        other,
        relations=[
            {
                "id": "r-1",
                "from": "m-2",
                "to": "m-1",
                "type": "contradicts",
                "confidence": 0.4,
                "created_at": "2025-03-02T00:00:00Z",
            },
            {
                "id": "r-2",
                "from": "m-1",
                "to": "m-2",
                "type": "extends",
                "created_at": "2025-03-02T00:00:00Z",
            },
        ],
        conversations_index=[
            {
                "id": "conv-1",
                "platform": "chatgpt",
                "title": "Heron planning",
                "temporal": {"created_at": "2025-03-01T09:00:00Z"},
                "derived_memories": ["m-1"],
            }
        ],
    )
    assert import_document(agent, document).report.ok
    memory = Memory.objects.get(agent=agent, alias="m-1")
    assert memory.category == "project" and memory.importance == 0.7
    assert memory.tags == ["work"] and memory.invalidated_at is None
    assert memory.metadata["pam"]["provenance"]["conversation_ref"] == "conv-1"

    out = export(agent)
    assert sdk_errors(out) == []
    back = memories_by_id(out)["m-1"]
    for name in ("type", "status", "summary", "tags", "provenance", "access", "content_hash"):
        assert back[name] == rich[name], name
    assert back["confidence"]["initial"] == 0.9
    assert back["confidence"]["decay_model"] == "time_linear"
    assert back["temporal"]["valid_from"] == "2025-03-01T00:00:00Z"
    assert back["temporal"]["valid_until"] == "2027-01-01T00:00:00Z"
    assert {k: v for k, v in back["metadata"].items() if k != "memoryadmin"} == rich["metadata"]
    assert [relation["id"] for relation in out["relations"]] == ["r-1", "r-2"]
    assert out["relations"][0]["confidence"] == 0.4
    (conversation,) = out["conversations_index"]
    assert conversation["title"] == "Heron planning"
    assert conversation["derived_memories"] == ["m-1"]


def test_superseded_and_retracted_memories_map_both_ways(agent, make):
    old = make.memory(agent, "The build runs on Jenkins.", alias="old")
    new = make.memory(agent, "The build runs on GitHub Actions.", alias="new")
    wrong = make.memory(agent, "The office is in Paris.", alias="wrong")
    assert memory_invalidate(agent=agent, ref=old.pk, actor=me, replacement_ref=new.pk).ok
    assert memory_invalidate(agent=agent, ref=wrong.pk, actor=me).ok
    memories = memories_by_id(export(agent))
    assert memories["old"]["status"] == "superseded"
    assert memories["wrong"]["status"] == "retracted"
    assert memories["wrong"]["temporal"]["valid_until"]

    fresh = AgentFactory()
    document = a_store(
        a_memory("a", "Lives in Paris."),
        a_memory("b", "Lives in Lyon."),
        relations=[
            {
                "id": "r",
                "from": "b",
                "to": "a",
                "type": "supersedes",
                "created_at": "2025-04-01T00:00:00Z",
            }
        ],
    )
    assert import_document(fresh, document).report.ok
    a = Memory.objects.get(agent=fresh, alias="a")
    assert a.superseded_by == Memory.objects.get(agent=fresh, alias="b")
    assert a.invalidated_at is not None
    out = export(fresh)
    assert [relation["id"] for relation in out["relations"]] == ["r"]
    assert sdk_errors(out) == []


# --- refusals: the whole file, nothing written, naming the memory and the check ----------------


def refused(agent, document) -> pam.Refused:
    with pytest.raises(pam.Refused) as caught:
        import_document(agent, document)
    assert not Memory.objects.filter(agent=agent).exists()
    return caught.value


def test_a_wrong_content_hash_refuses_the_file(agent):
    bad = a_memory("m-2", "Prefers tea.")
    bad["content_hash"] = compute_content_hash("Prefers coffee.")
    error = refused(agent, a_store(a_memory("m-1", "Fine."), bad))
    assert error.check == "content-hash"
    assert "'m-2'" in error.message


def test_a_schema_error_names_the_memory(agent):
    bad = a_memory("m-2", "Prefers tea.", type="opinion")
    error = refused(agent, a_store(a_memory("m-1", "Fine."), bad, integrity=False))
    assert error.check == "schema"
    assert "memory 'm-2' (memories[1]), type" in error.message


def test_duplicate_ids_refuse_the_file(agent):
    error = refused(agent, a_store(a_memory("m-1", "One."), a_memory("m-1", "Two.")))
    assert error.check == "id-unique"
    assert "'m-1'" in error.message


def test_a_relation_to_a_missing_memory_refuses_the_file(agent):
    relation = {
        "id": "r",
        "from": "m-1",
        "to": "ghost",
        "type": "supports",
        "created_at": "2025-04-01T00:00:00Z",
    }
    error = refused(agent, a_store(a_memory("m-1", "One."), relations=[relation]))
    assert error.check == "xref-relation"
    assert "'ghost'" in error.message


def test_a_tampered_integrity_block_refuses_the_file(agent):
    document = a_store(a_memory("m-1", "One."), a_memory("m-2", "Two."))
    document["integrity"]["total_memories"] = 3
    assert refused(agent, document).check == "integrity-total"
    document = a_store(a_memory("m-1", "One."))
    document["memories"][0]["tags"] = ["added-later"]
    assert refused(agent, document).check == "integrity-checksum"


def test_a_memory_memoryadmin_cannot_hold_refuses_the_file(agent):
    too_long = "x" * 101
    bad = a_memory("m-2", "Two.", type="custom", custom_type=too_long)
    error = refused(agent, a_store(a_memory("m-1", "One."), bad))
    assert error.check == "memoryadmin"
    assert "'m-2'" in error.message and "category" in error.message


def test_a_file_over_the_limit_is_refused_without_being_read(
    agent, tmp_path, settings, monkeypatch
):
    big = tmp_path / "memory-store.json"
    with big.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)  # sparse: 50 MB on paper, nothing on disk
    opened: list[Path] = []
    real_open = Path.open
    monkeypatch.setattr(
        Path, "open", lambda self, *a, **k: opened.append(self) or real_open(self, *a, **k)
    )
    with pytest.raises(CommandError, match=r"size-limit.*52,428,800 bytes"):
        call_command("import_pam", str(big), "--agent", agent.name)
    assert big not in opened
    assert not Memory.objects.filter(agent=agent).exists()


# --- the commands ------------------------------------------------------------------------


def test_export_and_import_commands(rockbot_agent, tmp_path):
    out = tmp_path / "out" / "memory-store.json"
    call_command("export_pam", "--agent", "rocky", "--out", str(out), stdout=io.StringIO())
    document = json.loads(out.read_text("utf-8"))
    assert sdk_errors(document) == []

    stdout = io.StringIO()
    call_command("import_pam", str(out), "--agent", "copy", "--dry-run", stdout=stdout)
    assert "dry run" in stdout.getvalue()
    assert not Agent.objects.filter(name="copy").exists()
    call_command("import_pam", str(out.parent), "--agent", "copy", stdout=io.StringIO())
    copy = Agent.objects.get(name="copy")
    assert Memory.objects.filter(agent=copy).count() == len(document["memories"])


def test_an_edit_after_import_is_exported(agent):
    import_document(agent, a_store(a_memory("m-1", "Prefers dark mode.")))
    memory = Memory.objects.get(agent=agent, alias="m-1")
    assert record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=me,
        old_string="dark",
        new_string="light",
    ).ok
    back = memories_by_id(export(agent))["m-1"]
    assert back["content"] == "Prefers light mode."
    assert back["content_hash"] == compute_content_hash("Prefers light mode.")


def test_a_bundle_adds_the_vectors_naming_their_model(agent, make, tmp_path):
    embedded = make.memory(agent, "Prefers tea.", alias="tea")
    make.memory(agent, "Not embedded yet.", alias="later")
    Memory.objects.filter(pk=embedded.pk).update(
        embedding=[0.25] * 384, embedding_model="multilingual-e5-small"
    )
    Memory.objects.filter(alias="later").update(embedding=None)
    bundle = tmp_path / "bundle"
    call_command("export_pam", "--agent", agent.name, "--bundle", str(bundle), stdout=io.StringIO())

    store = load_dict(json.loads((bundle / "memory-store.json").read_text("utf-8")))
    vectors = load_dict(json.loads((bundle / "embeddings.json").read_text("utf-8")))
    assert validate_embeddings(vectors, store).is_valid
    (entry,) = vectors.embeddings
    assert (entry.memory_id, entry.model, entry.dimensions) == ("tea", "multilingual-e5-small", 384)
    assert entry.vector == [0.25] * 384
    assert all(memory.embedding_ref is None for memory in store.memories)


@pytest.mark.parametrize(
    "value",
    [
        {"b": 1.0, "a": 0.0, "c": [0.5, 1e-7, 1e21, 123.456, -0.0, 2**60]},
        {"text": 'quote " back \\ tab \t nul \x00 del \x7f unit \x1f line \u2028 é 😀'},
        {"é": 1, "z": 2, "😀": 3, "\uffff": 4, "A": {"nested": [True, False, None]}},
        {"lone": "\ud800"},
    ],
)
def test_the_fast_canonical_form_is_the_sdks(value):
    from portable_ai_memory.core.integrity import canonicalize_jcs

    try:
        expected = canonicalize_jcs(value)
    except Exception as error:
        with pytest.raises(type(error)):
            pam.canonical(value)
        return
    assert pam.canonical(value) == expected


def test_a_memory_refused_after_earlier_batches_were_written_leaves_nothing(agent, monkeypatch):
    from stores.services.importing import run

    monkeypatch.setattr(run, "BATCH_SIZE", 1)
    bad = a_memory("m-3", "Three.", type="custom", custom_type="x" * 101)
    error = refused(agent, a_store(a_memory("m-1", "One."), a_memory("m-2", "Two."), bad))
    assert error.check == "memoryadmin" and "'m-3'" in error.message
    assert not Revision.objects.filter(agent=agent).exists()


def test_a_contradicts_relation_opens_a_conflict_for_a_person_once(agent):
    document = a_store(
        a_memory("m-1", "The standup is at 09:00."),
        a_memory("m-2", "The standup is at 10:30."),
        relations=[
            {
                "id": "r-1",
                "from": "m-2",
                "to": "m-1",
                "type": "contradicts",
                "created_at": "2025-03-02T00:00:00Z",
            }
        ],
    )

    planned = import_document(agent, document, dry_run=True)
    assert not Suggestion.objects.filter(agent=agent).exists()
    assert "would open conflict suggestions" in " ".join(planned.notes)

    done = import_document(agent, document)
    again = import_document(agent, document)

    (conflict,) = Suggestion.objects.filter(agent=agent)
    assert conflict.kind == "conflict" and conflict.status == "open"
    pair = Memory.objects.filter(agent=agent, alias__in=["m-1", "m-2"])
    assert {record.memory_id for record in conflict.records.all()} == {m.pk for m in pair}
    assert "1 conflict suggestion(s) opened" in " ".join(done.notes)
    assert "0 conflict suggestion(s) opened" in " ".join(again.notes)
    # The relation itself stays, and an export writes it back.
    assert [relation["type"] for relation in export(agent)["relations"]] == ["contradicts"]


def test_provenance_becomes_the_first_revisions_source_and_a_source_goes_out_as_provenance(agent):
    document = a_store(
        a_memory(
            "m-1",
            "The user's sister is called Ada.",
            provenance={"platform": "chatgpt", "conversation_ref": "conv-7", "message_ref": "m-44"},
        ),
        a_memory("m-2", "No conversation behind this one, a platform only."),
    )
    assert import_document(agent, document).report.ok
    first = Revision.objects.get(record_id=Memory.objects.get(alias="m-1").pk, version_before=0)
    assert first.source == {"conversation": "conv-7", "message": "m-44", "platform": "chatgpt"}
    plain = Revision.objects.get(record_id=Memory.objects.get(alias="m-2").pk, version_before=0)
    assert plain.source == {"platform": "claude"}

    told = me.with_source(Source(conversation="8121", message="44", platform="Discord DM"))
    made = record_create(
        surface_key="memory", agent=agent, actor=told, values={"content": "Prefers mornings."}
    )
    out = export(agent)

    assert sdk_errors(out) == []
    provenance = memories_by_id(out)[str(made.record.pk)]["provenance"]
    assert provenance == {"platform": "discord-dm", "conversation_ref": "8121", "message_ref": "44"}
    assert memories_by_id(out)["m-1"]["provenance"]["conversation_ref"] == "conv-7"
    index = {entry["id"]: entry["derived_memories"] for entry in out["conversations_index"]}
    assert index == {"conv-7": ["m-1"], "8121": [str(made.record.pk)]}


def test_a_provenance_memoryadmin_cannot_hold_refuses_the_file(agent):
    document = a_store(
        a_memory("m-1", "Fine.", provenance={"platform": "chatgpt", "conversation_ref": "c" * 201})
    )

    error = refused(agent, document)

    assert "'m-1'" in str(error) and "provenance.conversation" in str(error)
    assert not Memory.objects.filter(agent=agent).exists()
