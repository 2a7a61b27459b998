"""The erasure page (a dry run's report, then the confirmed erasure) and the audit log."""

from __future__ import annotations

import csv
import io

from django.urls import reverse

from stores.models import AuditEntry, Memory
from stores.services.receipts import verify
from tests.factories import UserFactory

SECRET = "zebra-quartz-page-3"


def test_a_dry_run_reports_then_a_confirmed_erasure_erases(staff_client, agent, make):
    memory = make.memory(agent, content=f"Code {SECRET}.")
    form = {"agent": agent.name, "text": SECRET, "reason": "leak"}

    dry = staff_client.post(reverse("web:erase"), {**form, "action": "dry_run"})
    assert 'data-status="erasure-dry-run"' in dry.content.decode()
    assert Memory.objects.get(pk=memory.pk).content == f"Code {SECRET}."
    unconfirmed = staff_client.post(reverse("web:erase"), {**form, "action": "erase"})
    assert unconfirmed.status_code == 400
    assert Memory.objects.get(pk=memory.pk).content == f"Code {SECRET}."

    done = staff_client.post(reverse("web:erase"), {**form, "action": "erase", "confirm": "yes"})

    assert 'data-status="erasure-done"' in done.content.decode()
    assert SECRET not in Memory.objects.get(pk=memory.pk).content
    entry = AuditEntry.objects.get(kind="erasure")
    receipt = staff_client.get(reverse("web:erasure_receipt", args=[entry.pk])).json()
    assert verify(receipt)["agent"] == agent.name


def test_the_audit_log_reads_and_exports_without_the_text(staff_client, agent, make):
    make.memory(agent, content=f"Code {SECRET}.")
    staff_client.post(
        reverse("web:erase"),
        {"agent": agent.name, "text": SECRET, "action": "erase", "confirm": "yes"},
    )
    page = staff_client.get(reverse("web:audit")).content.decode()
    assert "Erasure" in page and SECRET not in page
    rows = list(
        csv.reader(io.StringIO(staff_client.get(reverse("web:audit_csv")).content.decode()))
    )
    assert rows[0] == ["id", "kind", "at", "actor", "agent", "details"]
    assert rows[1][1] == "erasure" and SECRET not in str(rows)
    entries = staff_client.get(reverse("web:audit_json")).json()["entries"]
    assert entries[0]["details"]["receipt"]["agent"] == agent.name


def test_only_staff_see_the_erasure_page_and_the_log(client, agent):
    client.force_login(UserFactory())
    for name in ("web:erase", "web:audit", "web:audit_csv"):
        assert client.get(reverse(name)).status_code == 403
