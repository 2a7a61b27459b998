"""Django's PostgreSQL backend, with a kept connection's health checked without a round trip,
and a cursor for the statements every request sends, prepared once on the server.

With CONN_HEALTH_CHECKS, Django sends `SELECT 1` on a kept connection before each request's
first query: a statement more than the request's own, on the edit path one in seven. A
connection PostgreSQL has ended (a restart, an idle timeout, an administrator) has its
goodbye waiting on the socket, or the socket closed: only then is the round trip made, and
the connection found dead is replaced as before. Anything else waiting there (none is
expected: the change feed listens on a connection of its own) gets the full check too.

Django binds parameters in the client and never prepares (a pooler in transaction mode
would lose the statements), so PostgreSQL parses and plans every statement it is sent.
The few whose text never changes (the token lookup, the record an edit locks, its UPDATE
and its revision's INSERT: `stores.runtime.prepared`) take `preparing_cursor`, which binds
on the server and prepares each text once per connection. Parsing and planning were a
third of an edit's SQL: the floor's five statements took 0.75 ms p50 unprepared and
0.50 ms prepared, side by side on one machine. A pooler between the app and PostgreSQL
must keep prepared statements (PgBouncer 1.21 and later in transaction mode:
`max_prepared_statements`).
"""

from __future__ import annotations

import select
import sys
from typing import Any

import psycopg
from django.db.backends.postgresql import base, operations
from django.db.backends.postgresql.psycopg_any import register_tzloader
from django.db.backends.utils import CursorWrapper
from django.utils.asyncio import async_unsafe
from psycopg import errors
from psycopg.pq import Format

TIMESTAMPTZ_OID = 1184


class PreparingCursor(psycopg.Cursor[Any]):
    """Binds on the server and has every statement it runs prepared (kept by the
    connection, by the statement's text, for the next call)."""

    def execute(self, query: Any, params: Any = None, **options: Any) -> PreparingCursor:
        return super().execute(query, params, **{**options, "prepare": True})


class DatabaseOperations(operations.DatabaseOperations):
    def last_executed_query(self, cursor: Any, sql: str, params: Any) -> str:
        # A cursor that binds on the server keeps no query text with its values in it: the
        # query log gets the statement with its values as Django composes them for such a
        # cursor, or without them where they cannot be.
        if isinstance(cursor, PreparingCursor):
            try:
                return self.compose_sql(sql, params)
            except errors.DataError:
                return sql
        return super().last_executed_query(cursor, sql, params)


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations

    def get_connection_params(self) -> dict[str, Any]:
        params = super().get_connection_params()
        if params["prepare_threshold"] is None:
            # With no threshold psycopg prepares nothing, even when asked. A threshold no
            # statement reaches leaves every other statement unprepared, as Django has it.
            params["prepare_threshold"] = sys.maxsize
        return params

    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed:
            return False
        waiting = select.poll()
        waiting.register(connection.fileno(), select.POLLIN)
        return not waiting.poll(0) or super().is_usable()

    @async_unsafe
    def preparing_cursor(self) -> CursorWrapper:
        """A cursor like `cursor()` (the same checks and wrapping), whose statements are
        prepared on the server."""
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            # The driver's cursor, which django-stubs types as the wrapper made around it.
            cursor: Any = PreparingCursor(self.connection)
            tzloader = self.connection.adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT)
            if self.timezone != tzloader.timezone:
                register_tzloader(self.timezone, cursor)
            self.validate_thread_sharing()
            if self.queries_logged:
                return self.make_debug_cursor(cursor)
            return self.make_cursor(cursor)
