"""Erasing text, a record, a subject's records or all of an agent's, with a signed receipt."""

from __future__ import annotations

import hashlib
import json

import pytest
from django.core import serializers
from django.core.management import call_command

from stores.engine.actors import Actor
from stores.errors import Forbidden, Invalid
from stores.models import AuditEntry, IdempotentRequest, Memory, Revision, Subject, Suggestion
from stores.services import record_edit
from stores.services.erasing import ERASED, Scope, erase
from stores.services.receipts import verify
from tests.factories import SubjectFactory, UserFactory

ME = Actor.maintainer("tests")
SECRET = "zebra-quartz-5f1c"


def dump() -> str:
    """Every row of the tables an erasure may touch, as text."""
    models = (Memory, Revision, Suggestion, IdempotentRequest, AuditEntry, Subject)
    return "".join(serializers.serialize("json", model.objects.all()) for model in models)


def test_erasing_text_takes_it_out_of_records_and_history_and_keeps_the_rest(agent, make):
    holder = make.memory(agent, content=f"The door code is {SECRET}, said Ann.")
    rename = {"old_string": "Ann", "new_string": "Bo"}
    record_edit(surface_key="memory", agent=agent, ref=holder.pk, actor=ME, **rename)
    bystander = make.memory(agent, content="Ann likes tea.")
    IdempotentRequest.objects.create(owner="token:1", key="k", fingerprint="f", body={"c": SECRET})

    receipt = erase(agent=agent, actor=ME, scope=Scope(text=SECRET), reason="a leaked code")

    assert SECRET not in dump()
    holder.refresh_from_db()
    assert holder.content == f"The door code is {ERASED}, said Bo."
    assert Memory.objects.get(pk=bystander.pk).content == "Ann likes tea."
    assert Revision.objects.filter(record_id=bystander.pk).get().after_text == "Ann likes tea."
    last = Revision.objects.filter(record_id=holder.pk).order_by("version_after").last()
    assert last.op == "erase" and ERASED in last.after_text
    assert receipt["counts"]["records"] == 1
    assert receipt["counts"]["revisions"] == 3
    assert receipt["counts"]["idempotency"] == 1
    assert receipt["removed_sha256"] == [hashlib.sha256(SECRET.encode()).hexdigest()]
    assert SECRET not in json.dumps(receipt)
    assert verify(receipt)["id"] == receipt["id"]
    assert AuditEntry.objects.get(kind="erasure").details["receipt"] == receipt


def test_a_dry_run_reports_the_same_counts_and_changes_nothing(agent, make):
    make.memory(agent, content=f"Code {SECRET}.")
    before = dump()
    report = erase(agent=agent, actor=ME, scope=Scope(text=SECRET), dry_run=True)
    assert report["dry_run"] is True and report["counts"]["records"] == 1
    assert "signature" not in report
    assert dump() == before


def test_erasing_a_record_forgets_it_and_empties_its_history(agent, make):
    gone = make.memory(agent, content=f"Code {SECRET}.")
    kept = make.memory(agent, content="Kept.")
    receipt = erase(agent=agent, actor=ME, scope=Scope(record=("memory", gone.pk)), reason="asked")
    assert not Memory.objects.filter(pk=gone.pk).exists()
    assert SECRET not in dump()
    history = Revision.objects.filter(surface="memory", record_id=gone.pk)
    assert {(r.op, r.before_text, r.after_text) for r in history} == {
        ("create", "", ""),
        ("forget", "", ""),
    }
    assert all("erasure" in r.redacted for r in history)
    assert Memory.objects.get(pk=kept.pk).content == "Kept."
    assert receipt["counts"]["records_forgotten"] == 1


def test_erasing_a_subject_takes_its_memories_and_the_subject(agent, make):
    subject = SubjectFactory(agent=agent, external_id="person-7")
    make.memory(agent, content=f"About them: {SECRET}.", subject=subject)
    shared = make.memory(agent, content="Shared bank.")
    receipt = erase(agent=agent, actor=ME, scope=Scope(subject="person-7"))
    assert not Subject.objects.filter(pk=subject.pk).exists()
    assert list(Memory.objects.filter(agent=agent)) == [shared]
    assert SECRET not in dump() and "person-7" not in json.dumps(receipt)
    assert receipt["counts"]["subjects"] == 1


def test_erasing_all_of_an_agent_leaves_other_agents_alone(agent, other_agent, make):
    make.memory(agent, content=f"Mine {SECRET}.")
    make.working(agent)
    theirs = make.memory(other_agent, content=f"Theirs {SECRET}.")
    erase(agent=agent, actor=ME, scope=Scope(everything=True))
    assert not Memory.objects.filter(agent=agent).exists()
    assert Memory.objects.get(pk=theirs.pk).content == f"Theirs {SECRET}."


def test_a_forged_or_changed_receipt_does_not_verify(agent, make):
    make.memory(agent, content=f"Code {SECRET}.")
    receipt = erase(agent=agent, actor=ME, scope=Scope(text=SECRET))
    with pytest.raises(Invalid, match="does not match"):
        verify({**receipt, "counts": {**receipt["counts"], "records": 0}})
    with pytest.raises(Invalid, match="no signature"):
        verify({"id": receipt["id"]})


def test_only_staff_erase_and_a_scope_is_exactly_one_thing(agent):
    person = Actor.for_user(UserFactory(is_staff=False))
    with pytest.raises(Forbidden):
        erase(agent=agent, actor=person, scope=Scope(text=SECRET))
    with pytest.raises(Invalid, match="exactly one"):
        erase(agent=agent, actor=ME, scope=Scope(text=SECRET, everything=True))
    with pytest.raises(Invalid, match="surface:id"):
        Scope.parse_record("memory:x")


def test_the_exports_it_made_are_rewritten_without_the_text(agent, make, tmp_path):
    make.memory(agent, content=f"Code {SECRET}.\nSecond line.")
    out = tmp_path / "agent.jsonl"
    call_command("export_agent", agent.name, out=str(out), with_revisions=True)
    assert SECRET in out.read_text("utf-8")
    dry = erase(agent=agent, actor=ME, scope=Scope(text=SECRET), dry_run=True)
    assert dry["counts"]["exports_rewritten"] == 1 and SECRET in out.read_text("utf-8")

    receipt = erase(agent=agent, actor=ME, scope=Scope(text=SECRET))

    assert receipt["counts"]["exports_rewritten"] == 1
    assert SECRET not in out.read_text("utf-8") and ERASED in out.read_text("utf-8")
