"""What a person meets at a door's edges: a form's address opened, an upload past the limit."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from stores.models import Memory

pytestmark = pytest.mark.django_db


def test_opening_a_forms_address_is_a_page_saying_what_to_do(staff_client, agent):
    """Regression: a GET on a POST-only page was a blank 405."""
    answer = staff_client.get(reverse("web:sources_takeback", args=[agent.name]))
    text = answer.content.decode()
    assert answer.status_code == 405
    assert answer["Allow"] == "POST"
    assert "This address does not take GET" in text
    assert "Go back to the page the form is on" in text and "It takes: POST." in text


def test_an_upload_past_the_body_limit_is_413_naming_the_one_limit(staff_client, agent, settings):
    """Regression: the page said 32 MiB while every body past about 7 MiB was refused."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    page = reverse("web:pam_import", args=[agent.name])
    assert "100\xa0bytes" in staff_client.get(page).content.decode()

    upload = SimpleUploadedFile("memory-store.json", b" " * 101, "application/json")
    answer = staff_client.post(page, {"file": upload, "action": "check"})

    text = answer.content.decode()
    assert answer.status_code == 413
    assert 'data-check="size-limit"' in text and "is 100 bytes" in text
    assert "MEMORYADMIN_MAX_BODY_BYTES" in text
    assert not Memory.objects.filter(agent=agent).exists()
