"""The UI's PAM download and upload: a dry-run report first, then the import of the same file."""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from portable_ai_memory import load_dict, validate_memory_store

from stores.interchange import pam
from stores.models import Memory, Revision
from tests.factories import AgentFactory
from tests.web.conftest import htmx

pytestmark = pytest.mark.django_db


def page(agent, name="pam_import"):
    return reverse(f"web:{name}", args=[agent.name])


def exported(agent) -> bytes:
    buffer = io.BytesIO()
    pam.write_memory_store(agent, buffer)
    return buffer.getvalue()


def upload(data: bytes, name: str = "memory-store.json") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/json")


def test_the_dashboard_offers_the_download_and_it_is_valid_pam(staff_client, agent, make):
    make.memory(agent, "Prefers tea.", alias="tea")
    dashboard = staff_client.get(reverse("web:dashboard", args=[agent.name])).content.decode()
    assert page(agent, "pam_export") in dashboard

    answer = staff_client.get(page(agent, "pam_export"))
    assert answer.status_code == 200
    document = json.loads(b"".join(answer.streaming_content))
    assert validate_memory_store(load_dict(document)).is_valid
    assert [memory["id"] for memory in document["memories"]] == ["tea"]


def test_an_upload_is_checked_first_and_imported_only_from_the_report(staff_client, agent, make):
    source = AgentFactory(name="source")
    make.memory(source, "Prefers tea.", alias="tea")
    data = exported(source)

    check = staff_client.post(
        page(agent), {"file": upload(data), "action": "check"}, headers=htmx("pam-report")
    )
    assert check.status_code == 200
    text = check.content.decode()
    assert 'data-status="checked"' in text and "Would be created" in text
    assert not Memory.objects.filter(agent=agent).exists()
    digest = text.split('name="checked" value="')[1].split('"')[0]

    changed = data.replace(b"Prefers tea.", b"Prefers tee.")
    refused = staff_client.post(
        page(agent), {"file": upload(changed), "action": "import", "checked": digest}
    )
    assert refused.status_code == 400 and 'data-check="checked"' in refused.content.decode()
    assert not Memory.objects.filter(agent=agent).exists()

    imported = staff_client.post(
        page(agent),
        {"file": upload(data), "action": "import", "checked": digest},
        headers=htmx("pam-report"),
    )
    assert 'data-status="imported"' in imported.content.decode()
    assert Memory.objects.get(agent=agent, alias="tea").content == "Prefers tea."

    revisions = Revision.objects.count()
    again = staff_client.post(
        page(agent), {"file": upload(data), "action": "import", "checked": digest}
    )
    assert again.status_code == 200
    assert Revision.objects.count() == revisions


def test_an_invalid_file_is_refused_naming_the_check(staff_client, agent, make):
    source = AgentFactory(name="source")
    make.memory(source, "Prefers tea.", alias="tea")
    tampered = exported(source).replace(b"Prefers tea.", b"Prefers rum.")
    answer = staff_client.post(page(agent), {"file": upload(tampered), "action": "check"})
    text = answer.content.decode()
    assert answer.status_code == 400
    assert 'data-check="content-hash"' in text and "&#x27;tea&#x27;" in text


def test_a_viewer_may_download_but_not_import(viewer_client, agent):
    assert viewer_client.get(page(agent, "pam_export")).status_code == 200
    assert "Check (dry run)" not in viewer_client.get(page(agent)).content.decode()
    answer = viewer_client.post(page(agent), {"file": upload(b"{}"), "action": "check"})
    assert answer.status_code == 403


def test_an_upload_nested_past_the_depth_limit_is_refused_before_it_is_parsed(staff_client, agent):
    """Regression: 100,000 `[` then 100,000 `]` (200 KiB) grew the server past 21 GB."""
    hostile = b'{"owner":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    answer = staff_client.post(page(agent), {"file": upload(hostile), "action": "check"})
    text = answer.content.decode()
    assert answer.status_code == 400
    assert 'data-check="too-deep"' in text and "more than 32 levels deep" in text
    assert not Memory.objects.filter(agent=agent).exists()
