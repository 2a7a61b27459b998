"""Rows inserted in bulk: on PostgreSQL by COPY, elsewhere by Django's bulk_create.

Machinery under the importer: it reaches below the ORM (the driver's COPY, each field's own
preparation of its value for the database), so the domain asks for rows to be inserted and
never sees how.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from functools import partial
from operator import attrgetter
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection, connections, models
from django.db.backends.base.base import BaseDatabaseWrapper


def insert_rows(
    model: type[models.Model],
    rows: Sequence[models.Model],
    *,
    unique_fields: tuple[str, ...] = (),
    update_fields: tuple[str, ...] = (),
) -> None:
    """Insert new, validated model instances in one go, each given its id (`bulk_create`);
    with `unique_fields`, a row that clashes on them updates `update_fields` of the row there.

    On PostgreSQL by COPY, with ids drawn from the table's sequence first: Django's
    bulk_create quoted every value into the statement in Python, which was 70% of an import
    of 100,000 memories (bench/edit_path.py). The rows are the same: every concrete field's
    value as the field prepares it for the database.
    """
    if not rows:
        return
    if connection.vendor != "postgresql":
        model.objects.bulk_create(
            rows,
            batch_size=500,
            update_conflicts=bool(unique_fields),
            unique_fields=list(unique_fields) or None,
            update_fields=list(update_fields) or None,
        )
        return
    meta = model._meta
    quote = connection.ops.quote_name
    fields = list(meta.concrete_fields)
    columns = ", ".join(quote(field.column) for field in fields)
    db = connections[DEFAULT_DB_ALIAS]  # once: each attribute of the proxy is a lookup
    values_of = _row_values(fields, db)
    target = quote(meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [meta.db_table, meta.pk.column, len(rows)],
        )
        for row, (pk,) in zip(rows, cursor.fetchall(), strict=True):
            row.pk = pk
        if unique_fields:
            # COPY cannot update a row it clashes with: stage the rows, then one INSERT.
            cursor.execute(f"CREATE TEMP TABLE import_staging (LIKE {target})")
            into = "import_staging"
        else:
            into = target
        with cursor.cursor.copy(f"COPY {into} ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(values_of(row))
        if unique_fields:
            conflict = ", ".join(quote(meta.get_field(name).column) for name in unique_fields)
            updates = ", ".join(
                f"{quote(column)} = EXCLUDED.{quote(column)}"
                for column in (meta.get_field(name).column for name in update_fields)
            )
            cursor.execute(
                f"INSERT INTO {target} ({columns}) SELECT {columns} FROM import_staging "
                f"ON CONFLICT ({conflict}) DO UPDATE SET {updates}"
            )
            cursor.execute("DROP TABLE import_staging")
    for row in rows:
        row._state.adding = False
        row._state.db = connection.alias


# Django's own field classes (not subclasses, which may convert) whose value, when it is
# exactly this Python type, goes to the database as it is: get_db_prep_save returns it
# unchanged. Any other value takes Django's path.
_PLAIN_TYPES: dict[type[models.Field], type] = {
    models.BooleanField: bool,
    models.IntegerField: int,
    models.PositiveIntegerField: int,
    models.BigIntegerField: int,
    models.AutoField: int,
    models.BigAutoField: int,
    models.FloatField: float,
    models.CharField: str,
    models.TextField: str,
}


def _row_values(
    fields: list[models.Field], db: BaseDatabaseWrapper
) -> Callable[[models.Model], list[Any]]:
    """A row's values of `fields` for the database, each as its `_preparer` gives it.

    The values are read in one call, and a value of a plain field that is None or exactly its
    type is taken as it is without calling its preparer (which would read it again to find
    that): a call per field of every row was a fifth of an import's CPU in this module.
    """
    read = attrgetter(*(field.attname for field in fields))
    steps = [(_plain_type(field), _preparer(field, db)) for field in fields]

    def values(row: models.Model) -> list[Any]:
        read_values = read(row) if len(steps) > 1 else (read(row),)
        return [
            value if plain is not None and (value is None or type(value) is plain) else prepare(row)
            for value, (plain, prepare) in zip(read_values, steps, strict=True)
        ]

    return values


def _plain_type(field: models.Field) -> type | None:
    """The type a value of `field` goes to the database as, unprepared (see `_PLAIN_TYPES`)."""
    kind = field.target_field if isinstance(field, models.ForeignKey) else field
    return _PLAIN_TYPES.get(type(kind))


def _preparer(field: models.Field, db: BaseDatabaseWrapper) -> Callable[[models.Model], Any]:
    """A row's value of `field` for the database, as `field.get_db_prep_save` gives it.

    Django's preparation of each value (the connection proxy's lookups, settings and
    time-zone checks, conversions of values already of their type) was a third of an
    import's time; values of a plain type, aware datetimes and JSON objects and arrays
    skip it.
    """
    attname = field.attname
    if isinstance(field, models.DateTimeField) and not (field.auto_now or field.auto_now_add):

        def datetime_value(row: models.Model) -> Any:
            value = getattr(row, attname)
            if value is None or (isinstance(value, dt.datetime) and value.tzinfo is not None):
                return value
            return field.get_db_prep_save(value, db)

        return datetime_value
    if type(field) is models.JSONField:
        dumps = partial(json.dumps, cls=field.encoder)

        def json_value(row: models.Model) -> Any:
            # As the driver's JSON adapter would write it (Django's adapt_json_value), without
            # the adapter: COPY's text is the column's input, which jsonb parses.
            value = getattr(row, attname)
            if type(value) is dict or type(value) is list:
                return dumps(value)
            return field.get_db_prep_save(field.pre_save(row, True), db)

        return json_value
    plain = _plain_type(field)
    if plain is not None:

        def plain_value(row: models.Model) -> Any:
            value = getattr(row, attname)
            if value is None or type(value) is plain:
                return value
            return field.get_db_prep_save(value, db)

        return plain_value
    return lambda row: field.get_db_prep_save(field.pre_save(row, True), db)
