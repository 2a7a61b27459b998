"""Redacting a revision: its text and the same text next to it become tombstones."""

from __future__ import annotations

import hashlib

import pytest

from stores.engine.actors import Actor
from stores.engine.sources import Source
from stores.errors import Conflict, Invalid
from stores.models import AuditEntry, Revision
from stores.services import (
    memory_set_importance,
    record_create,
    record_edit,
    record_forget,
    record_update,
)
from stores.services.erasure import REDACTED, redact_revision, redacted_state

ME = Actor.maintainer("tests")
SECRET = "The vault word is zebra-quartz-41."


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def history(memory) -> list[Revision]:
    return list(
        Revision.objects.filter(surface="memory", record_id=memory.pk).order_by("version_after")
    )


def edit(agent, memory, old: str, new: str) -> None:
    result = record_edit(
        surface_key="memory", agent=agent, ref=memory.pk, actor=ME, old_string=old, new_string=new
    )
    assert result.ok, result


def test_a_redacted_side_becomes_a_tombstone_with_who_when_why_and_hash(agent, make):
    quoting = ME.with_source(Source(excerpt="say zebra-quartz-41"))
    memory = record_create(
        surface_key="memory", agent=agent, actor=quoting, values={"content": SECRET}
    ).record
    edit(agent, memory, SECRET, "The vault word was rotated.")
    create, change = history(memory)

    redacted = redact_revision(create, actor="user:ann", reason="a leaked word")

    assert redacted.after_text == "" and redacted.source_excerpt == ""
    tombstone = redacted.redacted["after"]
    assert (tombstone["by"], tombstone["reason"], tombstone["sha256"]) == (
        "user:ann",
        "a leaked word",
        sha(SECRET),
    )
    assert redacted.redacted["excerpt"]["sha256"] == sha("say zebra-quartz-41")
    assert "zebra" not in str(redacted.after_state)
    change.refresh_from_db()
    assert change.before_text == "" and "before" in change.redacted
    assert change.after_text == "The vault word was rotated."
    assert "zebra" not in str(change.before_state)


def test_the_same_text_is_followed_through_writes_that_did_not_change_it(agent, make):
    memory = make.memory(agent, content=SECRET)
    memory_set_importance(agent=agent, ref=memory.pk, actor=ME, importance=0.9)
    edit(agent, memory, SECRET, "Rotated.")
    revisions = history(memory)

    redact_revision(revisions[2], actor="user:ann", reason="leak", sides=("before",))

    for revision in history(memory):
        assert SECRET not in (revision.before_text, revision.after_text)
        assert "zebra" not in str(revision.before_state) + str(revision.after_state)
    assert [sorted(r.redacted) for r in history(memory)] == [
        ["after"],
        ["after", "before"],
        ["before"],
    ]


def test_redaction_is_idempotent_and_keeps_the_first_tombstone(agent, make):
    memory = make.memory(agent, content=SECRET)
    edit(agent, memory, SECRET, "Rotated.")
    first = history(memory)[0]
    redact_revision(first, actor="user:ann", reason="first")
    again = redact_revision(first, actor="user:bob", reason="second")
    assert again.redacted["after"]["by"] == "user:ann"
    assert AuditEntry.objects.filter(kind="redaction").count() == 1


def test_the_live_record_holding_the_text_refuses_and_changes_nothing(agent, make):
    memory = make.memory(agent, content=SECRET)
    with pytest.raises(Conflict, match="still holds this text"):
        redact_revision(history(memory)[0], actor="user:ann", reason="leak")
    assert history(memory)[0].after_text == SECRET
    assert not AuditEntry.objects.exists()


def test_a_forgotten_record_history_can_be_redacted(agent, make):
    memory = make.memory(agent, content=SECRET)
    assert record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=ME).ok
    forget = history(memory)[-1]
    redact_revision(forget, actor="user:ann", reason="leak")
    assert all(SECRET not in r.before_text + r.after_text for r in history(memory))


def test_other_records_and_untouched_sides_stay(agent, make):
    other = make.memory(agent, content=SECRET + " kept elsewhere")
    memory = make.memory(agent, content=SECRET)
    edit(agent, memory, SECRET, "Rotated.")
    redact_revision(history(memory)[1], actor="user:ann", reason="leak", sides=("before",))
    assert history(other)[0].after_text == SECRET + " kept elsewhere"
    assert history(memory)[1].after_text == "Rotated."


def test_the_redaction_is_audited_without_the_text(agent, make):
    memory = make.memory(agent, content=SECRET)
    edit(agent, memory, SECRET, "Rotated.")
    revision = history(memory)[1]
    redact_revision(revision, actor="user:ann", reason="leak", sides=("before",))
    entry = AuditEntry.objects.get()
    assert (entry.kind, entry.actor, entry.agent_name) == ("redaction", "user:ann", agent.name)
    assert entry.details["revision"] == revision.pk
    assert entry.details["redacted"][str(revision.pk)]["before"] == sha(SECRET)
    assert "zebra" not in str(entry.details)


@pytest.mark.parametrize(
    ("sides", "reason", "message"),
    [(("middle",), "leak", "sides are"), (("after",), "  ", "Say why")],
)
def test_bad_input_is_refused_clearly(agent, make, sides, reason, message):
    memory = make.memory(agent, content=SECRET)
    edit(agent, memory, SECRET, "Rotated.")
    with pytest.raises(Invalid, match=message):
        redact_revision(history(memory)[0], actor="user:ann", reason=reason, sides=sides)
    assert history(memory)[0].after_text == SECRET


def test_a_state_value_loses_exactly_the_text_and_keeps_the_rest(agent, make):
    memory = make.memory(
        agent, content=SECRET, metadata={"origin": f"Ann said: {SECRET}", "room": "B2"}
    )
    result = record_update(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=ME,
        changes={"content": "Rotated.", "metadata": {"room": "B2"}},
        expected_version=memory.version,
    )
    assert result.ok, result
    create = history(memory)[0]
    kept = {name: value for name, value in create.after_state.items() if name != "metadata"}

    redacted = redact_revision(create, actor="user:ann", reason="a leaked word")

    assert redacted.after_text == ""
    assert redacted.after_state["metadata"] == {"origin": f"Ann said: {REDACTED}", "room": "B2"}
    assert {
        name: value for name, value in redacted.after_state.items() if name != "metadata"
    } == kept


def test_a_state_field_that_is_the_text_is_emptied_and_one_holding_it_keeps_the_rest():
    state = {"path": "/memories/zq/notes.md", "title": "zq", "tags": ["zq", "tea"], "n": 3}
    assert redacted_state(state, "zq") == {
        "path": f"/memories/{REDACTED}/notes.md",
        "title": "",
        "tags": [REDACTED, "tea"],
        "n": 3,
    }
