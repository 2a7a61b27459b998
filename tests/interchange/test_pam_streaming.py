"""A PAM file read as a stream: checked as the SDK checks it whole, written in batches, left
alone on a re-import without being read further, and refused whole however late its fault."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from portable_ai_memory import compute_content_hash, load_dict, validate_memory_store
from portable_ai_memory.core.integrity import compute_integrity_checksum

from stores.engine.actors import Actor
from stores.interchange import pam
from stores.interchange.pam import reading
from stores.interchange.pam.integrity import Checksum
from stores.models import ImportedSource, Memory, Revision
from stores.services import record_edit
from tests.interchange.test_pam import a_memory, a_store

me = Actor.maintainer("tests")


def on_disk(tmp_path: Path, document: dict, name: str = "memory-store.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document), "utf-8")
    return path


def import_file(agent, path: Path, **options):
    return pam.import_memory_store(agent=agent, document=pam.from_path(path), actor=me, **options)


def many(count: int, **fields) -> list[dict]:
    return [
        a_memory(f"m-{number:03}", f"Memory number {number}.", **fields) for number in range(count)
    ]


def a_relation(kind: str, start: str, end: str) -> dict:
    return {"id": "r", "from": start, "to": end, "type": kind, "created_at": "2025-04-01T00:00:00Z"}


def a_conversation(*derived: str, **fields) -> dict:
    return {
        "id": "c",
        "platform": "chatgpt",
        "temporal": {"created_at": "2025-03-01T09:00:00Z"},
        "derived_memories": list(derived),
        **fields,
    }


def test_a_file_is_imported_from_its_stream_in_batches(agent, tmp_path, monkeypatch):
    from stores.services.importing import run

    monkeypatch.setattr(run, "BATCH_SIZE", 3)
    path = on_disk(tmp_path, a_store(*many(10)))

    outcome = import_file(agent, path)

    assert outcome.report.ok, outcome.report.problems
    assert outcome.report.tally("memory").created == 10
    assert Memory.objects.get(agent=agent, alias="m-007").content == "Memory number 7."


def test_a_memory_refused_late_in_a_streamed_file_writes_nothing(agent, tmp_path, monkeypatch):
    from stores.services.importing import run

    monkeypatch.setattr(run, "BATCH_SIZE", 2)
    # Valid PAM, so the check passes; memoryadmin cannot hold its category, found only as the
    # batches are written.
    late = a_memory("m-999", "Last.", type="custom", custom_type="x" * 101)
    path = on_disk(tmp_path, a_store(*many(7), late))

    with pytest.raises(pam.Refused) as caught:
        import_file(agent, path)

    assert caught.value.check == "memoryadmin" and "'m-999'" in caught.value.message
    assert not Memory.objects.filter(agent=agent).exists()
    assert not Revision.objects.filter(agent=agent).exists()
    assert not ImportedSource.objects.filter(agent=agent).exists()


def test_a_schema_fault_in_the_last_memory_refuses_the_file_naming_it(agent, tmp_path):
    late = a_memory("m-999", "Last.", type="opinion")
    path = on_disk(tmp_path, a_store(*many(5), late, integrity=False))

    with pytest.raises(CommandError, match=r"memory 'm-999' \(memories\[5\]\), type"):
        call_command("import_pam", str(path), "--agent", agent.name, stdout=io.StringIO())
    assert not Memory.objects.filter(agent=agent).exists()


def test_members_after_the_memories_are_read_before_any_memory_is(agent, tmp_path):
    """The integrity block, relations and conversations an export writes last still count."""
    document = a_store(
        a_memory("a", "Lives in Paris."),
        a_memory(
            "b", "Lives in Lyon.", provenance={"platform": "chatgpt", "conversation_ref": "c"}
        ),
        relations=[a_relation("supersedes", "b", "a")],
        conversations_index=[a_conversation("b", title="Moving")],
    )
    # The memories first, as far from the members they need as a file can put them.
    document = {"memories": document["memories"]} | {
        key: value for key, value in document.items() if key != "memories"
    }
    assert list(document)[-1] == "integrity"
    assert import_file(agent, on_disk(tmp_path, document)).report.ok

    a = Memory.objects.get(agent=agent, alias="a")
    b = Memory.objects.get(agent=agent, alias="b")
    assert a.superseded_by == b
    assert b.metadata["pam"]["conversation"]["title"] == "Moving"


def test_memories_out_of_id_order_are_checked_against_the_integrity_block(agent, tmp_path):
    memories = many(12)
    shuffled = memories[7:] + memories[:7]
    document = a_store(*shuffled)
    assert document["integrity"]["checksum"] == a_store(*memories)["integrity"]["checksum"]
    assert import_file(agent, on_disk(tmp_path, document)).report.ok

    tampered = copy.deepcopy(document)
    tampered["memories"][3]["tags"] = ["added-later"]
    with pytest.raises(pam.Refused) as caught:
        import_file(agent, on_disk(tmp_path, tampered, "tampered.json"))
    assert caught.value.check == "integrity-checksum"


def test_the_running_checksum_is_the_sdks_in_any_order():
    memories = [pam.dump(memory) for memory in many(25)]
    expected = compute_integrity_checksum(memories)
    for order in (memories, memories[::-1], memories[10:] + memories[:10]):
        checksum = Checksum(in_id_order=False)
        for memory in order:
            checksum.add(memory["id"], pam.canonical(memory))
        assert checksum.value() == expected
    in_order = Checksum(in_id_order=True)
    for memory in memories:
        in_order.add(memory["id"], pam.canonical(memory))
    assert in_order.value() == expected
    with pytest.raises(ValueError, match="comes after"):
        in_order = Checksum(in_id_order=True)
        for memory in memories[::-1]:
            in_order.add(memory["id"], pam.canonical(memory))


def broken_documents() -> dict[str, dict]:
    """Documents with one fault each, as the SDK's deep validator names it."""
    bad_hash = a_memory("m-2", "Tea.")
    bad_hash["content_hash"] = compute_content_hash("Coffee.")
    backwards = a_memory(
        "m-2",
        "Tea.",
        temporal={"created_at": "2025-03-02T00:00:00Z", "updated_at": "2025-03-01T00:00:00Z"},
    )
    relation = a_relation("extends", "m-1", "m-2")
    total = a_store(a_memory("m-1", "One."), a_memory("m-2", "Two."))
    total["integrity"]["total_memories"] = 5
    return {
        "content-hash": a_store(a_memory("m-1", "One."), bad_hash),
        "temporal": a_store(a_memory("m-1", "One."), backwards),
        "id-unique": a_store(a_memory("m-1", "One."), a_memory("m-1", "Two.")),
        "id-unique (relations)": a_store(
            a_memory("m-1", "One."), a_memory("m-2", "Two."), relations=[relation, relation]
        ),
        "xref-relation": a_store(a_memory("m-1", "One."), relations=[relation]),
        "xref-superseded": a_store(
            a_memory(
                "m-1",
                "One.",
                status="superseded",
                temporal={"created_at": "2025-03-01T10:00:00Z", "superseded_by": "gone"},
            )
        ),
        "xref-conversation": a_store(
            a_memory(
                "m-1", "One.", provenance={"platform": "chatgpt", "conversation_ref": "elsewhere"}
            ),
            conversations_index=[a_conversation("m-1")],
        ),
        "xref-derived": a_store(
            a_memory("m-1", "One."),
            conversations_index=[a_conversation("m-1", "ghost")],
        ),
        "integrity-total": total,
    }


@pytest.mark.parametrize("fault", list(broken_documents()))
def test_each_fault_is_refused_by_the_check_the_sdk_names(fault, tmp_path):
    document = broken_documents()[fault]
    sdk = validate_memory_store(load_dict(document)).errors
    assert len(sdk) == 1, sdk

    with pytest.raises(pam.Refused) as caught:
        pam.check(pam.from_path(on_disk(tmp_path, document)))

    assert caught.value.check == sdk[0].check
    assert caught.value.message == sdk[0].message


@pytest.mark.parametrize(
    ("text", "check"),
    [
        (b'{"schema": "portable-ai-memory", "memories": [', "json"),
        (b'[{"schema": "portable-ai-memory"}]', "schema"),
        (b'{"schema": "portable-ai-memory"} trailing', "json"),
        (b'{"schema": "portable-ai-memory", "memories": [], "memories": []}', "schema"),
        (b'{"schema": "portable-ai-memory", "owner": {"id": "\xff"}, "memories": []}', "json"),
        (b'{"schema": "portable-ai-memory-embeddings", "memories": []}', "schema"),
    ],
)
def test_a_file_that_is_not_a_memory_store_is_refused_naming_why(text, check, agent):
    with pytest.raises(pam.Refused) as caught:
        pam.import_memory_store(agent=agent, document=pam.from_bytes(text, "upload.json"), actor=me)
    assert caught.value.check == check
    assert not Memory.objects.filter(agent=agent).exists()


def test_a_re_import_leaves_unchanged_memories_unread(agent, tmp_path, monkeypatch):
    path = on_disk(tmp_path, a_store(*many(6)))
    assert import_file(agent, path).report.tally("memory").created == 6
    revisions = Revision.objects.count()

    read: list[str] = []
    real = reading._read_memory
    monkeypatch.setattr(
        reading, "_read_memory", lambda raw, *rest: read.append(raw["id"]) or real(raw, *rest)
    )
    again = import_file(agent, path)

    assert again.report.tally("memory").unchanged == 6
    assert read == []
    assert Revision.objects.count() == revisions


def test_a_memory_edited_here_or_in_the_file_is_read_and_compared_again(agent, tmp_path):
    document = a_store(*many(3))
    path = on_disk(tmp_path, document)
    import_file(agent, path)
    edited = Memory.objects.get(agent=agent, alias="m-001")
    assert record_edit(
        surface_key="memory",
        agent=agent,
        ref=edited.pk,
        actor=me,
        old_string="number",
        new_string="No.",
    ).ok

    again = import_file(agent, path)

    # The file still says what it said: the memory edited here is brought back in line.
    assert again.report.tally("memory").changed == 1
    assert again.report.tally("memory").unchanged == 2
    edited.refresh_from_db()
    assert edited.content == "Memory number 1."

    document["memories"][2] = a_memory("m-002", "Memory number two, changed in the file.")
    changed = import_file(agent, on_disk(tmp_path, a_store(*document["memories"]), "v2.json"))
    assert changed.report.tally("memory").changed == 1
    assert Memory.objects.get(agent=agent, alias="m-002").content.endswith("changed in the file.")


def test_a_relation_added_to_an_unchanged_memory_is_read_again(agent, tmp_path):
    memories = many(2)
    import_file(agent, on_disk(tmp_path, a_store(*memories)))
    relation = a_relation("extends", "m-000", "m-001")

    again = import_file(
        agent, on_disk(tmp_path, a_store(*memories, relations=[relation]), "v2.json")
    )

    assert again.report.tally("memory").changed == 1
    kept = Memory.objects.get(agent=agent, alias="m-000").metadata["pam"]["relations"]
    assert [entry["id"] for entry in kept] == ["r"]


def test_a_dry_run_of_a_streamed_file_writes_no_trace(agent, tmp_path):
    path = on_disk(tmp_path, a_store(*many(3)))
    outcome = import_file(agent, path, dry_run=True)
    assert outcome.report.tally("memory").created == 3
    assert not ImportedSource.objects.filter(agent=agent).exists()
    assert not Memory.objects.filter(agent=agent).exists()


def test_a_file_changed_between_its_check_and_its_import_is_refused(agent, tmp_path, monkeypatch):
    path = on_disk(tmp_path, a_store(*many(2)))
    real = reading.check_store

    def check_then_change(document):
        checked = real(document)
        path.write_text(json.dumps(a_store(*many(3))), "utf-8")
        return checked

    monkeypatch.setattr(reading, "check_store", check_then_change)
    with pytest.raises(pam.Refused) as caught:
        import_file(agent, path)
    assert caught.value.check == "file"
    assert not Memory.objects.filter(agent=agent).exists()


@pytest.mark.parametrize("door", ["file", "upload", "other tool's export"])
def test_a_document_nested_past_the_depth_limit_is_refused_before_ijson_reads_it(
    door, agent, tmp_path
):
    """Regression: ijson keeps the path to every level, so 100,000 levels (a 200 KiB file)
    grew the server past 21 GB; 40 levels are refused here, 30 still read."""
    shallow = b'{"owner": ' + b"[" * 30 + b"]" * 30 + b', "memories": []}'
    deep = b'{"owner": ' + b"[" * 40 + b"]" * 40 + b', "memories": []}'

    def open_(data: bytes):
        path = tmp_path / "memory-store.json"
        path.write_bytes(data)
        if door == "file":
            return pam.from_path(path).head()
        if door == "upload":
            return pam.from_bytes(data, path.name).head()
        return pam.read_json(path)

    assert open_(shallow)["owner"] == json.loads(shallow)["owner"]
    with pytest.raises(pam.Refused) as caught:
        open_(deep)
    assert caught.value.check == "too-deep"
    assert "more than 32 levels deep" in caught.value.message
