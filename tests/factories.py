"""Factories. Surface records are made through the edit service, as every door makes them."""

from __future__ import annotations

from typing import Any

import factory
from django.contrib.auth import get_user_model
from django.db import connection

from stores.engine.actors import Actor
from stores.models import Agent, Memory, Subject, VersionedRecord
from stores.services import record_create
from stores.services.agents import token_create


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"reviewer{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.PostGenerationMethodCall("set_password", "correct horse battery staple")

    @factory.post_generation
    def _saved(obj, create, extracted, **kwargs):
        if create:
            obj.save()


class AgentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Agent

    name = factory.Sequence(lambda n: f"agent-{n}")
    display_name = factory.LazyAttribute(lambda agent: agent.name.title())


class SubjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Subject

    agent = factory.SubFactory(AgentFactory)
    display_name = factory.Sequence(lambda n: f"Person {n}")
    external_id = factory.Sequence(lambda n: f"user-{n}")


def agent_token(agent: Agent, *, read_only: bool = False):
    """A live token of `agent` and its secret, made as a maintainer."""
    result = token_create(
        actor=Actor.maintainer("tests"), agent=agent, name="test", read_only=read_only
    )
    assert result.ok, result
    return result.record, result.details["token"]


class RecordMaker:
    """Creates surface records through the service, as a maintainer."""

    actor = Actor.maintainer("tests")

    def __call__(self, surface_key: str, agent: Agent, **values: Any) -> VersionedRecord:
        result = record_create(
            surface_key=surface_key, agent=agent, actor=self.actor, values=values
        )
        assert result.ok, result
        return result.record

    def memory(
        self, agent: Agent, content: str = "The user prefers tea over coffee.", **values: Any
    ):
        return self("memory", agent, content=content, **values)

    def working(
        self,
        agent: Agent,
        key: str = "focus",
        value: str = "Reviewing the patrol log.",
        **values: Any,
    ):
        return self("working", agent, key=key, value=value, **values)

    def skill(
        self,
        agent: Agent,
        name: str = "deploy",
        content: str = "# Deploy\n\n## Steps\nRun it.\n",
        **values: Any,
    ):
        return self("skill", agent, name=name, content=content, **values)

    def task(
        self,
        agent: Agent,
        name: str = "morning",
        directive: str = "Summarise the overnight alerts.",
        **values: Any,
    ):
        values.setdefault("schedule", "0 7 * * *")
        return self("task", agent, name=name, directive=directive, **values)


def crowd_with_copies(memory: Memory, agent, copies: int) -> None:
    """`copies` memories of `agent` with `memory`'s text and vector, in one statement: as
    far as the index can tell, each is as near to `memory` as `memory` itself."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO stores_memory (agent_id, store, category, tags, content, importance,
                importance_floor, pinned, last_seen_at, reinforcement_count, metadata,
                version, created_at, updated_at, text_hash, embedding_model, embedding_hash,
                embedding)
            SELECT %s, store, category, tags, content, importance, importance_floor, pinned,
                last_seen_at, reinforcement_count, metadata, version, created_at, updated_at,
                text_hash, embedding_model, embedding_hash, embedding
            FROM stores_memory, generate_series(1, %s)
            WHERE id = %s
            """,
            [agent.pk, copies, memory.pk],
        )
        cursor.execute("ANALYZE stores_memory")
