"""A memory store's own changes (create, update, archive, delete) are in the audit log: which
store, what was done, by whom, through which door, and the SHA-256 of each field set, never
the value; an erasure reaches a store's name, description and metadata."""

from __future__ import annotations

import hashlib
import json

from django.urls import reverse

from stores.engine.actors import Actor
from stores.models import AuditEntry, MemoryStore
from stores.services import memory_stores as services
from stores.services.erasing import ERASED, Scope, erase
from tests.factories import agent_token

SECRET = "zebra-quartz-store-9"
ME = Actor.maintainer("tests")


def sha_of(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def store_entries(agent) -> list[dict]:
    entries = AuditEntry.objects.filter(agent=agent, kind=AuditEntry.Kind.MEMORY_STORE)
    return [entry.details for entry in entries.order_by("pk")]


def test_each_change_of_a_store_is_an_audit_entry_without_its_values(agent):
    token, _ = agent_token(agent)
    actor = Actor.for_token(token)
    store = services.store_create(
        agent=agent, actor=actor, name=f"Keys {SECRET}", metadata={"team": "ops"}
    )
    services.store_update(store=store, actor=actor, changes={"description": "Tea notes."})
    services.store_update(store=store, actor=actor, changes={"name": f"Keys {SECRET}"})
    services.store_archive(store=store, actor=actor)
    services.store_archive(store=store, actor=actor)
    services.store_delete(store=store, actor=ME)

    entries = store_entries(agent)
    assert [(entry["action"], entry["channel"]) for entry in entries] == [
        ("created", "api"),
        ("updated", "api"),
        ("archived", "api"),
        ("deleted", "shell"),
    ]
    assert all(entry["store"] == store.public_id for entry in entries)
    assert entries[0]["fields"] == ["name", "description", "metadata"]
    assert entries[0]["sha256"] == {
        "name": sha_of(f"Keys {SECRET}"),
        "description": sha_of(""),
        "metadata": sha_of({"team": "ops"}),
    }
    assert entries[1]["sha256"] == {"description": sha_of("Tea notes.")}
    assert entries[2]["fields"] == entries[3]["fields"] == []
    assert entries[3]["memories_forgotten"] == 0
    logged = AuditEntry.objects.filter(agent=agent, kind=AuditEntry.Kind.MEMORY_STORE)
    assert {entry.actor for entry in logged} == {actor.label, ME.label}
    assert SECRET not in str(list(logged.values())) and "Tea notes" not in str(entries)


def test_the_audit_page_names_the_store_and_what_was_done(client, staff_user, agent):
    client.force_login(staff_user)
    store = services.store_create(agent=agent, actor=ME, name="Preferences")
    services.store_archive(store=store, actor=ME)

    page = client.get(reverse("web:audit")).content.decode()

    assert f"{store.public_id} archived via shell" in page
    assert f"{store.public_id} created (name, description, metadata) via shell" in page
    assert "Preferences" not in page


def test_an_erasure_of_text_reaches_a_stores_own_fields(agent):
    store = services.store_create(
        agent=agent,
        actor=ME,
        name=f"Keys {SECRET}",
        description=f"Holds {SECRET} and more.",
        metadata={"note": SECRET, "team": "ops"},
    )

    receipt = erase(agent=agent, actor=ME, scope=Scope(text=SECRET))

    store.refresh_from_db()
    assert (store.name, store.description, store.metadata) == (
        f"Keys {ERASED}",
        f"Holds {ERASED} and more.",
        {"note": ERASED, "team": "ops"},
    )
    assert receipt["counts"]["memory_stores"] == 1


def test_an_erasure_of_all_of_an_agent_deletes_its_stores(agent, other_agent):
    mine = services.store_create(agent=agent, actor=ME, name="Mine")
    theirs = services.store_create(agent=other_agent, actor=ME, name="Theirs")
    services.memory_create(store=mine, actor=ME, path="/a.md", content="A.")

    receipt = erase(agent=agent, actor=ME, scope=Scope(everything=True))

    assert list(MemoryStore.objects.values_list("pk", flat=True)) == [theirs.pk]
    assert receipt["counts"]["memory_stores"] == 1
    assert receipt["counts"]["records_forgotten"] == 1
