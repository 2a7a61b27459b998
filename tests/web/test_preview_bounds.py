"""The UI's edit preview applies the record's checks (who may, size limit), as the edit does."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.urls import reverse

from tests.web.conftest import htmx

pytestmark = pytest.mark.django_db

MEMORY_LIMIT = settings.MEMORYADMIN["MAX_TEXT_LENGTH"]["memory"]


def preview(client, agent, memory, old, new):
    return client.post(
        reverse("web:record_preview", args=(agent.name, "memory", memory.pk, "edit")),
        {"old_string": old, "new_string": new, "replace_all": "on", "expected_version": 1},
        headers=htmx(),
    )


def test_a_viewer_preview_past_the_limit_is_refused_not_built(
    viewer_client, agent, make, monkeypatch, django_assert_max_num_queries
):
    """A preview is the write's dry run: a viewer, who may not make the edit, is refused as the
    edit would refuse them, before the record is read or the text engine runs."""
    memory = make.memory(agent, "a" * MEMORY_LIMIT)

    def never(*args, **kwargs):
        raise AssertionError("the edit was built for a caller who may not make it")

    monkeypatch.setattr("stores.ops.records.edit.apply_edits", never)
    # The session, its user, the agent, the viewer's grant and permissions; never the record.
    with django_assert_max_num_queries(6):
        response = preview(viewer_client, agent, memory, "a", "b" * 2000)
    assert response.status_code == 403
    assert 'data-status="forbidden"' in response.content.decode()


def test_a_preview_just_over_the_limit_is_refused_and_one_within_it_shown(
    staff_client, agent, make
):
    memory = make.memory(agent, "a" * (MEMORY_LIMIT // 2))
    assert preview(staff_client, agent, memory, "a", "bb").status_code == 200
    memory_2 = make.memory(agent, "a" * (MEMORY_LIMIT // 2 + 1))
    refused = preview(staff_client, agent, memory_2, "a", "bb")
    assert refused.status_code == 400
    assert f"{MEMORY_LIMIT + 2} characters" in refused.content.decode()
