"""Redacting from a record's history page: a form with a reason, then the tombstone in place."""

from __future__ import annotations

from django.urls import reverse

from stores.engine.actors import Actor
from stores.models import AgentAccess, AuditEntry, Revision
from stores.services import record_edit
from tests.factories import UserFactory
from tests.web.conftest import htmx

SECRET = "The vault word is zebra-quartz-12."


def _memory_with_a_rotated_secret(agent, make):
    memory = make.memory(agent, content=SECRET)
    record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=Actor.maintainer("tests"),
        old_string=SECRET,
        new_string="Rotated.",
    )
    return memory


def test_the_history_offers_redaction_and_shows_the_tombstone(staff_client, agent, make):
    memory = _memory_with_a_rotated_secret(agent, make)
    first = Revision.objects.get(surface="memory", record_id=memory.pk, version_after=1)
    history = reverse("web:record_history", args=[agent.name, "memory", memory.pk])
    redact = reverse("web:redact_revision", args=[agent.name, "memory", memory.pk, first.pk])
    assert redact in staff_client.get(history).content.decode()

    answer = staff_client.post(redact, {"reason": "a leaked word"}, headers=htmx())

    body = answer.content.decode()
    assert answer.status_code == 200 and "zebra" not in body
    assert "Redacted" in body and "a leaked word" in body
    page = staff_client.get(history).content.decode()
    assert "zebra" not in page and "Restore this version (v1)" not in page
    assert AuditEntry.objects.get().kind == "redaction"


def test_a_viewer_cannot_redact_and_a_missing_reason_is_refused(client, staff_client, agent, make):
    memory = _memory_with_a_rotated_secret(agent, make)
    first = Revision.objects.get(surface="memory", record_id=memory.pk, version_after=1)
    redact = reverse("web:redact_revision", args=[agent.name, "memory", memory.pk, first.pk])
    refused = staff_client.post(redact, {"reason": " "}, headers=htmx())
    assert "Say why" in refused.content.decode()
    viewer = UserFactory()
    AgentAccess.objects.create(user=viewer, agent=agent, role=AgentAccess.Role.VIEWER)
    client.force_login(viewer)
    client.post(redact, {"reason": "leak"}, headers=htmx())
    first.refresh_from_db()
    assert first.after_text == SECRET and not first.redacted


def test_a_revision_of_another_record_is_not_found_there(staff_client, agent, make):
    memory = _memory_with_a_rotated_secret(agent, make)
    other = make.memory(agent, content="Another.")
    first = Revision.objects.get(surface="memory", record_id=memory.pk, version_after=1)
    redact = reverse("web:redact_revision", args=[agent.name, "memory", other.pk, first.pk])
    assert staff_client.post(redact, {"reason": "leak"}).status_code == 404
