"""Forgetting in the UI says which memories lost their link to the forgotten one."""

from __future__ import annotations

import pytest
from django.urls import reverse

from stores.engine.actors import Actor
from stores.models import Memory
from stores.services import memory_invalidate
from tests.web.conftest import htmx

pytestmark = pytest.mark.django_db


def test_forgetting_a_successor_names_the_memories_it_superseded(staff_client, agent, make):
    old = make.memory(agent, "Office is on floor 3.")
    new = make.memory(agent, "Office is on floor 5.")
    assert memory_invalidate(
        agent=agent, ref=old.pk, actor=Actor.maintainer("tests"), replacement_ref=new.pk
    ).ok

    response = staff_client.post(
        reverse("web:record_op", args=(agent.name, "memory", new.pk, "forget")),
        {"expected_version": 1},
        headers=htmx(),
    )

    assert response.status_code == 200
    history = staff_client.get(response["HX-Redirect"]).content.decode()
    assert f"Memory {old.pk} pointed at it; that link was cleared in unlink revision" in history
    assert f"nothing else of memory {old.pk} changed" in history
    assert Memory.objects.get(pk=old.pk).superseded_by_id is None
