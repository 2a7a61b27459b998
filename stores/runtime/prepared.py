"""Queries compiled once: a QuerySet's SQL kept and run again with new parameter values.

Django compiles a QuerySet into SQL each time it is evaluated. For the reads every request
makes (the token of the `Authorization` header, the record an edit locks) that compilation
was most of their cost in Python, more than the database's answer (bench/edit_path.py,
profiled). A PreparedQuery builds its QuerySet once per thread's connection to the
default database, with placeholder values; it keeps the SQL and the places its
placeholders took among the parameters, and for each call sends that SQL with the real
values, then makes the model instances as Django's own iterator does (the same converters,
`from_db`, select_related, annotations).

Only plain lookups whose values reach the SQL unchanged may take a placeholder: text
compared as it is, or an integer (an id). Building the query checks that each placeholder
came out as one parameter of its own, so a lookup that would transform its value fails
there, at once, rather than answer a different question.

The statements these build have texts that never change, so where the database backend
offers a cursor that prepares them on the server (`preparing_cursor`: the project's
PostgreSQL backend) they take it, and the server parses and plans each once per connection.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Field, Model, QuerySet
from django.db.models.query import get_related_populators
from django.db.transaction import TransactionManagementError

M = TypeVar("M", bound=Model)

# Placeholders no real value takes: text no token or alias holds, and ids within the range
# of a big integer (an id lookup beyond it compiles to no SQL at all) that none reaches.
TEXT_PLACEHOLDER = "\uffff\uffffprepared-{}\uffff"
ID_PLACEHOLDER = 9_000_000_000_000_000_000


@dataclass(frozen=True)
class _Compiled:
    sql: str
    params: tuple[Any, ...]
    slots: tuple[tuple[int, int], ...]  # (index among the parameters, argument number)
    compiler: Any
    converters: dict[int, Any]
    model: type[Model]
    fields: slice
    init_list: list[str]
    populators: list[Any]
    annotations: dict[str, int]
    for_update: bool


class PreparedQuery(Generic[M]):
    """`build(*placeholders)` -> a QuerySet, compiled once per connection; `run(*values)`."""

    def __init__(self, build: Callable[..., QuerySet[M]], *kinds: type[str] | type[int]) -> None:
        self._build = build
        self._kinds = kinds
        self._compiled: weakref.WeakKeyDictionary[BaseDatabaseWrapper, _Compiled] = (
            weakref.WeakKeyDictionary()
        )

    def _placeholders(self) -> list[str | int]:
        return [
            TEXT_PLACEHOLDER.format(number) if kind is str else ID_PLACEHOLDER + number
            for number, kind in enumerate(self._kinds)
        ]

    def _compile(self, alias: str) -> _Compiled:
        placeholders = self._placeholders()
        queryset = self._build(*placeholders).using(alias)
        compiler = queryset.query.get_compiler(using=alias)
        sql, params = compiler.as_sql()
        slots = []
        for number, placeholder in enumerate(placeholders):
            places = [
                index
                for index, param in enumerate(params)
                # The driver's own kind of the value counts too (psycopg's Int8, which Django
                # gives a big integer column's value on PostgreSQL); `run` keeps it.
                if isinstance(param, type(placeholder)) and param == placeholder
            ]
            if not places:
                raise ValueError(f"placeholder {number} is not a parameter of its own: {sql}")
            slots += [(index, number) for index in places]
        klass_info, select = compiler.klass_info, compiler.select
        first, last = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
        return _Compiled(
            sql=sql,
            params=tuple(params),
            slots=tuple(slots),
            compiler=compiler,
            converters=compiler.get_converters([s[0] for s in select[: compiler.col_count]]),
            model=klass_info["model"],
            fields=slice(first, last),
            init_list=[column[0].target.attname for column in select[first:last]],
            populators=get_related_populators(klass_info, select, alias),
            annotations=dict(compiler.annotation_col_map or {}),
            for_update=queryset.query.select_for_update,
        )

    def run(self, *values: str | int) -> list[M]:
        """The instances the QuerySet built from `values` would give, in its order."""
        if len(values) != len(self._kinds):
            raise TypeError(f"{len(self._kinds)} values expected, {len(values)} given")
        connection = connections[DEFAULT_DB_ALIAS]  # this thread's
        compiled = self._compiled.get(connection)
        if compiled is None:
            compiled = self._compiled[connection] = self._compile(connection.alias)
        if compiled.for_update and connection.get_autocommit():
            raise TransactionManagementError("A locking read needs a transaction.")
        params = list(compiled.params)
        for index, number in compiled.slots:
            params[index] = type(compiled.params[index])(values[number])
        with _statement_cursor(connection) as cursor:
            cursor.execute(compiled.sql, params)
            rows = cursor.fetchall()
        if compiled.converters:
            rows = compiled.compiler.apply_converters(rows, compiled.converters)
        alias = connection.alias
        instances = []
        for row in rows:
            instance = compiled.model.from_db(alias, compiled.init_list, row[compiled.fields])
            for populator in compiled.populators:
                populator.populate(row, instance)
            for name, position in compiled.annotations.items():
                setattr(instance, name, row[position])
            instances.append(instance)
        return instances


# --- writes ------------------------------------------------------------------------------------
#
# An edit's UPDATE and its revision's INSERT went through Django's compiler each time, which
# took longer in Python than PostgreSQL took to run them (bench/edit_path.py, profiled). Their
# SQL depends only on the model and the fields written, so it is built once; each call sends
# it with the values as each field prepares them for the database, as Django's compilers do
# for a plain value (an expression is refused: it has no one value to send). Model signals
# are not sent: no receiver listens to these models' saves.

_UPDATES: dict[tuple[type[Model], tuple[str, ...], str], str] = {}
_INSERTS: dict[tuple[type[Model], str], str] = {}


def update_if_version(model: type[Model], pk: int, version: int, values: dict[str, Any]) -> int:
    """UPDATE the row `pk` of `model` to `values` with its `version` one higher, only if its
    version is `version`: how many rows it changed (0 or 1)."""
    connection = connections[DEFAULT_DB_ALIAS]
    meta = model._meta
    fields = [meta.get_field(name) for name in values]
    key = (model, tuple(values), connection.vendor)
    sql = _UPDATES.get(key)
    if sql is None:
        version_column = _column(meta.get_field("version"), connection)
        assignments = [f"{version_column} = {version_column} + 1"]
        assignments += [f"{_column(field, connection)} = %s" for field in fields]
        sql = _UPDATES[key] = (
            f"UPDATE {connection.ops.quote_name(meta.db_table)} SET {', '.join(assignments)} "
            f"WHERE {_column(meta.pk, connection)} = %s AND {version_column} = %s"
        )
    params = [
        _prepared(field, value, connection)
        for field, value in zip(fields, values.values(), strict=True)
    ]
    with _statement_cursor(connection) as cursor:
        cursor.execute(sql, [*params, pk, version])
        return cursor.rowcount


def insert_new(instance: Model) -> None:
    """INSERT a new instance with every concrete field but its automatic id, which it is
    given, as `save(force_insert=True)` would."""
    connection = connections[DEFAULT_DB_ALIAS]
    meta = type(instance)._meta
    fields = [field for field in meta.concrete_fields if field is not meta.pk]
    key = (type(instance), connection.vendor)
    sql = _INSERTS.get(key)
    if sql is None:
        columns = ", ".join(_column(field, connection) for field in fields)
        sql = _INSERTS[key] = (
            f"INSERT INTO {connection.ops.quote_name(meta.db_table)} ({columns}) "
            f"VALUES ({', '.join(['%s'] * len(fields))}) "
            f"RETURNING {_column(meta.pk, connection)}"
        )
    params = [_prepared(field, field.pre_save(instance, True), connection) for field in fields]
    with _statement_cursor(connection) as cursor:
        cursor.execute(sql, params)
        (instance.pk,) = cursor.fetchone()
    instance._state.adding = False
    instance._state.db = connection.alias


def _statement_cursor(connection: BaseDatabaseWrapper) -> Any:
    """A cursor for a statement whose text is sent again and again: one that has it prepared
    on the server where the backend offers one (`preparing_cursor`), else the plain one."""
    preparing = getattr(connection, "preparing_cursor", None)
    return preparing() if preparing is not None else connection.cursor()


def _column(field: object, connection: BaseDatabaseWrapper) -> str:
    assert isinstance(field, Field) and field.column is not None  # a column of the table
    return connection.ops.quote_name(field.column)


def _prepared(field: object, value: Any, connection: BaseDatabaseWrapper) -> Any:
    assert isinstance(field, Field)
    if hasattr(value, "resolve_expression"):
        raise TypeError(f"{field.name}: an expression has no one value to send")
    if hasattr(value, "prepare_database_save"):  # a model instance for a relation: its key
        return value.prepare_database_save(field)
    return field.get_db_prep_save(value, connection)
