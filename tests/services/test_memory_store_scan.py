"""A memory store's own fields (name, description, metadata values) meet the door's scan like
any write: refused, masked or allowed by the agent's policy; held is refused, since a store's
fields have no revision to wait in review with."""

from __future__ import annotations

import pytest

from stores.engine.actors import Actor
from stores.errors import Invalid, SensitiveData
from stores.models import Agent, AuditEntry, MemoryStore, ScanPolicy
from stores.services import memory_stores as services
from tests.factories import agent_token

AWS_KEY = "AKIAQ7XJ2L5N8P3R6T9V"
EMAIL = "ann.lee@example.org"


@pytest.fixture
def actor(agent) -> Actor:
    return Actor.for_token(agent_token(agent)[0])


def with_policy(agent, **policies):
    Agent.objects.filter(pk=agent.pk).update(**policies)
    agent.refresh_from_db()
    return agent


def test_a_credential_in_a_stores_name_is_refused_and_nothing_is_written(agent, actor):
    with pytest.raises(SensitiveData) as refusal:
        services.store_create(agent=agent, actor=actor, name=f"Keys {AWS_KEY}")
    assert "AWS Access Key" in refusal.value.message and AWS_KEY not in refusal.value.message
    assert not MemoryStore.objects.exists() and not AuditEntry.objects.exists()


def test_personal_data_is_masked_where_the_policy_masks(agent, actor):
    with_policy(agent, personal_data_policy=ScanPolicy.MASK)
    store = services.store_create(
        agent=agent,
        actor=actor,
        name="Contacts",
        description=f"Mail {EMAIL}.",
        metadata={"owner": EMAIL, "team": "ops"},
    )
    store.refresh_from_db()
    assert store.description == "Mail [masked email address]."
    assert store.metadata == {"owner": "[masked email address]", "team": "ops"}


def test_what_the_policy_would_hold_is_refused(agent, actor):
    with_policy(agent, credentials_policy=ScanPolicy.HOLD)
    store = services.store_create(agent=agent, actor=actor, name="Keys")
    with pytest.raises(SensitiveData, match="cannot wait for a person's review"):
        services.store_update(store=store, actor=actor, changes={"metadata": {"key": AWS_KEY}})
    store.refresh_from_db()
    assert store.metadata == {}


def test_an_update_reads_only_what_it_adds(agent, actor):
    store = services.store_create(agent=agent, actor=actor, name="Contacts", description=EMAIL)
    with_policy(agent, personal_data_policy=ScanPolicy.REFUSE)

    renamed = services.store_update(store=store, actor=actor, changes={"name": "People"})

    assert (renamed.name, renamed.description) == ("People", EMAIL)
    with pytest.raises(SensitiveData):
        services.store_update(store=store, actor=actor, changes={"metadata": {"o": EMAIL}})


def test_a_name_a_mask_makes_too_long_is_refused_as_invalid(agent, actor):
    with_policy(agent, personal_data_policy=ScanPolicy.MASK)
    name = "n" * (services.MAX_NAME_LENGTH - len(EMAIL) - 1) + " " + EMAIL
    with pytest.raises(Invalid, match="name must be a string of 1 to 255"):
        services.store_create(agent=agent, actor=actor, name=name)
    assert not MemoryStore.objects.exists()
