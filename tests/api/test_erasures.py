"""POST /api/v1/erasures/ and manage.py erase: the same erasure, staff only, with a receipt."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from stores.models import AuditEntry, Memory

SECRET = "zebra-quartz-api-9"


def test_staff_erase_over_the_api_and_get_a_signed_receipt(staff_user, agent, make):
    memory = make.memory(agent, content=f"Code {SECRET}.")
    human = APIClient()
    human.force_login(staff_user)
    dry = human.post(
        "/api/v1/erasures/", {"agent": agent.name, "text": SECRET, "dry_run": True}, format="json"
    )
    assert dry.status_code == 200 and dry.json()["receipt"]["counts"]["records"] == 1
    assert Memory.objects.get(pk=memory.pk).content == f"Code {SECRET}."

    done = human.post(
        "/api/v1/erasures/", {"agent": agent.name, "text": SECRET, "reason": "leak"}, format="json"
    )

    receipt = done.json()["receipt"]
    assert done.status_code == 200 and receipt["signature"]
    assert SECRET not in Memory.objects.get(pk=memory.pk).content
    assert AuditEntry.objects.get().details["receipt"] == receipt


def test_only_staff_erase_and_one_thing_at_a_time(api, agent, staff_user):
    assert api.call("post", "erasures/", {"agent": agent.name, "all": True}).status_code == 403
    human = APIClient()
    human.force_login(staff_user)
    two = human.post(
        "/api/v1/erasures/", {"agent": agent.name, "text": "x", "all": True}, format="json"
    )
    assert (two.status_code, two.json()["status"]) == (400, "invalid")
    bad = human.post("/api/v1/erasures/", {"agent": agent.name, "record": "memo:1"}, format="json")
    assert (bad.status_code, bad.json()["status"]) == (400, "invalid")


def test_the_command_erases_and_verifies_its_receipt(agent, make, tmp_path, capsys):
    make.memory(agent, content=f"Code {SECRET}.")
    out = tmp_path / "receipt.json"
    call_command("erase", "--agent", agent.name, "--text", SECRET, "--out", str(out))
    assert SECRET not in out.read_text() and not Memory.objects.filter(content__contains=SECRET)
    call_command("erase", "--verify", str(out))
    assert "is unchanged" in capsys.readouterr().out
    receipt = json.loads(out.read_text())
    receipt["counts"]["records"] = 7
    out.write_text(json.dumps(receipt))
    with pytest.raises(CommandError, match="does not match"):
        call_command("erase", "--verify", str(out))
