"""Queries compiled once: the same instances as the QuerySet, without compiling it again."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.db.models import F
from django.db.models.sql.compiler import SQLCompiler, SQLInsertCompiler, SQLUpdateCompiler
from django.db.transaction import TransactionManagementError
from django.forms.models import model_to_dict

from stores.engine.actors import Actor
from stores.engine.lookup import find_record
from stores.models import AgentToken, Memory, Revision
from stores.opnames import OpName
from stores.runtime.prepared import PreparedQuery, insert_new, update_if_version
from stores.selectors.revisions import record_origin
from stores.services import record_edit
from stores.services.agents import token_authenticate, token_revoke
from stores.surfaces import SURFACES
from tests.factories import agent_token

MAINTAINER = Actor.maintainer("tests")


@pytest.fixture
def select_compilations(monkeypatch) -> list[str]:
    """The SELECT statements Django compiles from now on."""
    compiled: list[str] = []
    compile_select = SQLCompiler.as_sql

    def counted(self, *args, **kwargs):
        sql, params = compile_select(self, *args, **kwargs)
        if type(self) is SQLCompiler or sql.lstrip().upper().startswith("SELECT"):
            compiled.append(sql)
        return sql, params

    monkeypatch.setattr(SQLCompiler, "as_sql", counted)
    return compiled


def test_a_prepared_query_gives_what_its_queryset_gives(agent, make, django_assert_num_queries):
    make.memory(agent, "First.")
    second = make.memory(agent, "Second.", alias="second")
    by_alias = PreparedQuery(
        lambda agent_id, alias: (
            Memory.objects.select_related("agent")
            .filter(agent_id=agent_id, alias=alias)
            .defer("embedding")
        ),
        int,
        str,
    )

    by_alias.run(agent.pk, "warm-up")
    with django_assert_num_queries(1):
        (found,) = by_alias.run(agent.pk, "second")
        assert found.agent == agent  # loaded with it, no query of its own
    assert by_alias.run(agent.pk, "first") == []
    assert by_alias.run(agent.pk + 1, "second") == []
    expected = Memory.objects.get(pk=second.pk)
    assert found.pk == second.pk and found.content == "Second."
    assert found.created_at == expected.created_at and found.tags == expected.tags
    assert found.get_deferred_fields() == {"embedding"}


def test_a_value_the_lookup_would_change_cannot_be_a_placeholder(agent):
    containing = PreparedQuery(lambda text: Memory.objects.filter(content__contains=text), str)

    with pytest.raises(ValueError, match="not a parameter of its own"):
        containing.run("tea")


@pytest.mark.django_db(transaction=True)
def test_a_locking_read_needs_a_transaction(agent, make):
    memory = make.memory(agent)
    locked = PreparedQuery(lambda pk: Memory.objects.select_for_update().filter(pk=pk), int)

    with transaction.atomic():
        assert [found.pk for found in locked.run(memory.pk)] == [memory.pk]
    with pytest.raises(TransactionManagementError):
        locked.run(memory.pk)


def test_a_token_is_looked_up_without_compiling_its_query_again(agent, select_compilations):
    token, raw = agent_token(agent)
    assert token_authenticate(raw) == token
    select_compilations.clear()

    found = token_authenticate(raw)
    assert token_authenticate("ma_unknown") is None

    assert found == token and found.agent == agent
    assert select_compilations == []
    token_revoke(actor=MAINTAINER, token=AgentToken.objects.get(pk=token.pk))
    assert token_authenticate(raw) is None  # revoked: at once, there is no cache


def test_an_edit_reads_its_record_without_compiling_a_select(agent, make, select_compilations):
    memory = make.memory(agent, "The user likes tea.")
    edit = {"surface_key": "memory", "agent": agent, "ref": memory.pk, "actor": MAINTAINER}
    assert record_edit(**edit, old_string="tea", new_string="mate").ok
    select_compilations.clear()

    assert record_edit(**edit, old_string="mate", new_string="tea").ok

    assert select_compilations == []


def test_a_full_read_names_its_first_and_last_writes_without_compiling_a_select(
    agent, make, select_compilations, django_assert_num_queries
):
    memory = make.memory(agent, "The user likes tea.")
    edit = {"surface_key": "memory", "agent": agent, "ref": memory.pk}
    assert record_edit(**edit, actor=MAINTAINER, old_string="tea", new_string="mate").ok
    second = Actor.maintainer("a second hand")
    assert record_edit(**edit, actor=second, old_string="mate", new_string="tea").ok
    record_origin("memory", memory.pk)
    select_compilations.clear()

    with django_assert_num_queries(2):
        origin = record_origin("memory", memory.pk)

    assert select_compilations == []
    assert origin["created_by"]["op"] == OpName.CREATE
    assert origin["last_changed_by"]["actor"] == second.label
    assert origin["last_changed_by"]["revision"] == (
        Revision.objects.filter(record_id=memory.pk, surface="memory").latest("version_after").pk
    )
    assert record_origin("memory", memory.pk + 1000) == {
        "created_by": None,
        "last_changed_by": None,
    }


def test_a_ref_past_any_id_is_an_alias_that_no_record_has(agent, make):
    make.memory(agent)

    with pytest.raises(Exception, match="No memory record"):
        find_record(SURFACES["memory"], agent=agent, ref="9" * 30, actor=MAINTAINER)


@pytest.fixture
def write_compilations(monkeypatch) -> list[str]:
    """The UPDATE and INSERT statements Django compiles from now on."""
    compiled: list[str] = []
    for compiler in (SQLUpdateCompiler, SQLInsertCompiler):
        compile_write = compiler.as_sql

        def counted(self, *args, _compile=compile_write, **kwargs):
            result = _compile(self, *args, **kwargs)
            compiled.extend(
                [sql for sql, _params in result] if isinstance(result, list) else [result[0]]
            )
            return result

        monkeypatch.setattr(compiler, "as_sql", counted)
    return compiled


def test_an_edit_writes_its_record_and_revision_without_compiling_them(
    agent, make, write_compilations
):
    memory = make.memory(agent, "The user likes tea.")
    edit = {"surface_key": "memory", "agent": agent, "ref": memory.pk, "actor": MAINTAINER}
    assert record_edit(**edit, old_string="tea", new_string="mate").ok
    write_compilations.clear()

    result = record_edit(**edit, old_string="mate", new_string="tea")

    assert result.ok and result.version == 3
    written = [
        sql for sql in write_compilations if "stores_memory" in sql or "stores_revision" in sql
    ]
    assert written == []
    memory.refresh_from_db()
    assert (memory.content, memory.version) == ("The user likes tea.", 3)
    assert Revision.objects.get(pk=result.revision).after_text == "The user likes tea."


def test_a_revision_inserted_reads_back_as_one_django_saved(agent, make):
    memory = make.memory(agent, "The user likes tea.")
    first = Revision.objects.filter(record_id=memory.pk).get()

    def copy(version: int) -> Revision:
        fields = model_to_dict(first, exclude=["id", "agent", "reviewed_by", "reverted_revision"])
        # A record's versions are unique among its revisions.
        return Revision(agent=agent, **{**fields, "version_after": version})

    saved, inserted = copy(7), copy(8)
    saved.save(force_insert=True)
    insert_new(inserted)

    assert inserted.pk is not None and inserted.pk != saved.pk
    read = Revision.objects.in_bulk([saved.pk, inserted.pk])
    unlike = ["id", "created_at", "version_after"]
    assert model_to_dict(read[inserted.pk], exclude=unlike) == model_to_dict(
        read[saved.pk], exclude=unlike
    )
    assert abs(read[inserted.pk].created_at - read[saved.pk].created_at).total_seconds() < 5


def test_a_versioned_update_refuses_an_expression(agent, make):
    memory = make.memory(agent, "The user likes tea.")
    with pytest.raises(TypeError, match="importance"):
        update_if_version(Memory, memory.pk, memory.version, {"importance": F("importance") * 2})
    assert update_if_version(Memory, memory.pk, memory.version + 1, {"importance": 0.2}) == 0
    assert update_if_version(Memory, memory.pk, memory.version, {"importance": 0.2}) == 1
    version = memory.version
    memory.refresh_from_db()
    assert (memory.importance, memory.version) == (0.2, version + 1)
