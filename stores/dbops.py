"""Migration operations that apply only on PostgreSQL (SQLite has no pgvector)."""

from __future__ import annotations

from django.db.migrations.operations.base import Operation


class PostgresOnlySQL(Operation):
    reduces_to_sql = True
    reversible = True

    def __init__(self, sql: str, reverse_sql: str) -> None:
        self.sql = sql
        self.reverse_sql = reverse_sql

    def state_forwards(self, app_label, state) -> None:
        pass

    def database_forwards(self, app_label, schema_editor, from_state, to_state) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(self.sql)

    def database_backwards(self, app_label, schema_editor, from_state, to_state) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(self.reverse_sql)

    def describe(self) -> str:
        return f"PostgreSQL only: {self.sql}"

    def deconstruct(self):
        return (self.__class__.__qualname__, [self.sql, self.reverse_sql], {})


def vector_extension() -> PostgresOnlySQL:
    return PostgresOnlySQL("CREATE EXTENSION IF NOT EXISTS vector", "SELECT 1")
