"""Our own PAM export, re-imported, is a no-op: the provenance and the conversation index an
export derives from each memory's source are not taken in as metadata, in the dry run, the
import and the web page's report; what a file would change is said record by record."""

from __future__ import annotations

import pytest

from stores.engine.sources import Source
from stores.models import Agent, Memory, Revision
from stores.services import record_create
from tests.interchange.test_pam import export, import_document, me, memories_by_id

pytestmark = pytest.mark.django_db


def written_from_conversations(agent: Agent) -> None:
    """Four memories, two of them from one conversation, each with a platform and message."""
    for number, conversation in enumerate(["conv-1", "conv-2", "conv-1", "conv-3"]):
        told = me.with_source(
            Source(conversation=conversation, message=f"m-{number}", platform="Discord DM")
        )
        record_create(
            surface_key="memory", agent=agent, actor=told, values={"content": f"Fact {number}."}
        )


def test_our_own_export_re_imported_changes_nothing(agent):
    written_from_conversations(agent)
    document = export(agent)
    revisions = Revision.objects.count()

    checked = import_document(agent, document, dry_run=True).report
    assert (checked.tally("memory").changed, checked.tally("memory").unchanged) == (0, 4)
    assert checked.changes == []
    imported = import_document(agent, document).report
    assert (imported.tally("memory").changed, imported.tally("memory").unchanged) == (0, 4)
    assert Revision.objects.count() == revisions
    assert all(memory.metadata == {} for memory in Memory.objects.filter(agent=agent))


def test_a_fresh_agent_takes_the_sources_in_and_exports_the_same_index(agent):
    written_from_conversations(agent)
    document = export(agent)
    fresh = Agent.objects.create(name="fresh")
    assert import_document(fresh, document).report.ok
    again = export(fresh)
    assert again["conversations_index"] == document["conversations_index"]
    ours, theirs = memories_by_id(document), memories_by_id(again)
    assert {ref: memory["provenance"] for ref, memory in theirs.items()} == {
        ref: memory["provenance"] for ref, memory in ours.items()
    }
    revisions = Revision.objects.count()
    assert import_document(fresh, again).report.tally("memory").changed == 0
    assert Revision.objects.count() == revisions


def test_a_conversation_entry_an_export_cannot_derive_is_kept(agent):
    written_from_conversations(agent)
    document = export(agent)
    document["conversations_index"][0]["title"] = "Planning the garden"
    fresh = Agent.objects.create(name="fresh")
    assert import_document(fresh, document).report.ok
    index = {entry["id"]: entry for entry in export(fresh)["conversations_index"]}
    assert index["conv-1"]["title"] == "Planning the garden"
