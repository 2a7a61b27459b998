"""The UI's edit preview applies the record's size limit, as the edit itself does."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.urls import reverse

from tests.web.conftest import htmx

pytestmark = pytest.mark.django_db

MEMORY_LIMIT = settings.MEMORYADMIN["MAX_TEXT_LENGTH"]["memory"]


def preview(client, agent, memory, old, new):
    return client.post(
        reverse("web:record_preview", args=(agent.name, "memory", memory.pk)),
        {"old_string": old, "new_string": new, "replace_all": "on", "expected_version": 1},
        headers=htmx(),
    )


def test_a_viewer_preview_past_the_limit_is_refused_not_built(viewer_client, agent, make):
    memory = make.memory(agent, "a" * MEMORY_LIMIT)
    response = preview(viewer_client, agent, memory, "a", "b" * 2000)
    assert response.status_code == 400
    body = response.content.decode()
    assert 'data-status="invalid"' in body
    assert f"at most {MEMORY_LIMIT}" in body


def test_a_preview_just_over_the_limit_is_refused_and_one_within_it_shown(
    staff_client, agent, make
):
    memory = make.memory(agent, "a" * (MEMORY_LIMIT // 2))
    assert preview(staff_client, agent, memory, "a", "bb").status_code == 200
    memory_2 = make.memory(agent, "a" * (MEMORY_LIMIT // 2 + 1))
    refused = preview(staff_client, agent, memory_2, "a", "bb")
    assert refused.status_code == 400
    assert f"{MEMORY_LIMIT + 2} characters" in refused.content.decode()
