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


# --- Recall indexes ---------------------------------------------------------------------

# The text-search configuration of memory content. The GIN index and every query must use
# the same one, or PostgreSQL cannot use the index.
MEMORY_TEXT_SEARCH_CONFIG = "english"
# The column holding each memory's text-search document (PostgreSQL only; see below).
MEMORY_SEARCH_DOCUMENT = "search_document"


def memory_fulltext_index() -> PostgresOnlySQL:
    return PostgresOnlySQL(
        "CREATE INDEX IF NOT EXISTS memory_content_fts ON stores_memory USING gin "
        f"(to_tsvector('{MEMORY_TEXT_SEARCH_CONFIG}'::regconfig, content))",
        "DROP INDEX IF EXISTS memory_content_fts",
    )


def memory_vector_index() -> PostgresOnlySQL:
    return PostgresOnlySQL(
        "CREATE INDEX IF NOT EXISTS memory_embedding_hnsw ON stores_memory USING hnsw "
        "(embedding vector_cosine_ops)",
        "DROP INDEX IF EXISTS memory_embedding_hnsw",
    )


def memory_search_document() -> list[PostgresOnlySQL]:
    """The text-search document of each memory, stored in its row and kept by a trigger.

    Ranking a query word that most memories contain made PostgreSQL parse every matching
    memory's content again (`ts_rank(to_tsvector(content), ...)`): about 1 s for 100,000
    rows, against 0.1 s reading the stored document (bench/edit_path.py). A trigger rather
    than a generated column: PostgreSQL recomputes a generated column on every UPDATE of the
    row, which made a decay pass (importance only) 2.4 times as slow; `UPDATE OF content`
    fires only for writes of the text.
    """
    config = f"'{MEMORY_TEXT_SEARCH_CONFIG}'::regconfig"
    return [
        PostgresOnlySQL(
            f"ALTER TABLE stores_memory ADD COLUMN {MEMORY_SEARCH_DOCUMENT} tsvector",
            f"ALTER TABLE stores_memory DROP COLUMN {MEMORY_SEARCH_DOCUMENT}",
        ),
        PostgresOnlySQL(
            "CREATE FUNCTION stores_memory_search_document() RETURNS trigger "
            "LANGUAGE plpgsql AS $$ BEGIN "
            f"NEW.{MEMORY_SEARCH_DOCUMENT} := to_tsvector({config}, NEW.content); "
            "RETURN NEW; END $$",
            "DROP FUNCTION stores_memory_search_document()",
        ),
        PostgresOnlySQL(
            "CREATE TRIGGER stores_memory_search_document "
            "BEFORE INSERT OR UPDATE OF content ON stores_memory "
            "FOR EACH ROW EXECUTE FUNCTION stores_memory_search_document()",
            "DROP TRIGGER stores_memory_search_document ON stores_memory",
        ),
        PostgresOnlySQL(
            f"UPDATE stores_memory SET {MEMORY_SEARCH_DOCUMENT} = to_tsvector({config}, content)",
            "SELECT 1",
        ),
        PostgresOnlySQL(
            "DROP INDEX IF EXISTS memory_content_fts",
            "DROP INDEX IF EXISTS memory_content_fts; "
            "CREATE INDEX memory_content_fts ON stores_memory USING gin "
            f"(to_tsvector({config}, content))",
        ),
        # Keyed by agent first (btree_gin): a word matched in other agents' memories costs
        # this agent's search nothing (with 1,000,000 memories of another agent beside
        # 100,000 of one, every search of the one read the other's matches too).
        PostgresOnlySQL("CREATE EXTENSION IF NOT EXISTS btree_gin", "SELECT 1"),
        PostgresOnlySQL(
            "CREATE INDEX memory_content_fts ON stores_memory USING gin "
            f"(agent_id, {MEMORY_SEARCH_DOCUMENT})",
            "DROP INDEX IF EXISTS memory_content_fts",
        ),
    ]


def memory_substring_indexes() -> list[PostgresOnlySQL]:
    """Trigram indexes for the web list's search, a case-insensitive substring match
    (`UPPER(field::text) LIKE UPPER('%q%')`) over each field it searches: without them each
    search read every memory of the agent (about 100 ms at 100,000 rows). Not keyed by
    agent as the full-text index is: with the agent first, the planner preferred reading
    every memory of the agent to the trigram match (195 ms instead of 11 at 100,000)."""
    operations = [
        PostgresOnlySQL("CREATE EXTENSION IF NOT EXISTS pg_trgm", "SELECT 1"),
    ]
    for field in ("content", "category", "alias"):
        operations.append(
            PostgresOnlySQL(
                f"CREATE INDEX memory_{field}_trigram ON stores_memory USING gin "
                f"((UPPER({field}::text)) gin_trgm_ops)",
                f"DROP INDEX IF EXISTS memory_{field}_trigram",
            )
        )
    return operations


def memory_fresh_statistics() -> PostgresOnlySQL:
    """Statistics on how many memories have the vector of their text, for the planner.

    Without them PostgreSQL guesses 0.5% for any comparison of two columns, so the vector
    side of recall looked like a few hundred rows to sort exactly; it read every vector of
    the agent instead of asking the HNSW index (stores.selectors.embeddings.fresh_filter).
    """
    return PostgresOnlySQL(
        "CREATE STATISTICS memory_fresh ON ((embedding_hash = text_hash)) FROM stores_memory",
        "DROP STATISTICS IF EXISTS memory_fresh",
    )


# SQLite: an FTS5 index over memory content, kept in step by triggers. It is (re)made after
# every migrate rather than in one migration, because Django rebuilds a SQLite table to
# alter it, and dropping the old table drops its triggers with it.
SQLITE_MEMORY_FTS = "stores_memory_fts"
_SQLITE_FTS_TRIGGERS = {
    "stores_memory_fts_insert": (
        "AFTER INSERT ON stores_memory BEGIN "
        f"INSERT INTO {SQLITE_MEMORY_FTS}(rowid, content) VALUES (new.id, new.content); END"
    ),
    "stores_memory_fts_delete": (
        "AFTER DELETE ON stores_memory BEGIN "
        f"INSERT INTO {SQLITE_MEMORY_FTS}({SQLITE_MEMORY_FTS}, rowid, content) "
        "VALUES ('delete', old.id, old.content); END"
    ),
    "stores_memory_fts_update": (
        "AFTER UPDATE OF content ON stores_memory BEGIN "
        f"INSERT INTO {SQLITE_MEMORY_FTS}({SQLITE_MEMORY_FTS}, rowid, content) "
        "VALUES ('delete', old.id, old.content); "
        f"INSERT INTO {SQLITE_MEMORY_FTS}(rowid, content) VALUES (new.id, new.content); END"
    ),
}


def ensure_sqlite_memory_fulltext(connection) -> bool:
    """Create the FTS5 index and its triggers if missing; rebuild it if any were missing.

    Returns whether anything was (re)made. Does nothing on other databases.
    """
    if connection.vendor != "sqlite":
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger') AND name LIKE %s",
            [f"{SQLITE_MEMORY_FTS}%"],
        )
        present = {row[0] for row in cursor.fetchall()}
        cursor.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'stores_memory'"
        )
        if cursor.fetchone() is None:
            return False
        missing = {SQLITE_MEMORY_FTS, *_SQLITE_FTS_TRIGGERS} - present
        if not missing:
            return False
        cursor.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {SQLITE_MEMORY_FTS} USING fts5("
            "content, content='stores_memory', content_rowid='id', "
            "tokenize='porter unicode61 remove_diacritics 2')"
        )
        for name, body in _SQLITE_FTS_TRIGGERS.items():
            cursor.execute(f"CREATE TRIGGER IF NOT EXISTS {name} {body}")
        cursor.execute(f"INSERT INTO {SQLITE_MEMORY_FTS}({SQLITE_MEMORY_FTS}) VALUES ('rebuild')")
    return True


def memory_room_for_in_place_updates() -> PostgresOnlySQL:
    """Leave half of each page free, so a decay pass can rewrite every row on its own page.

    Such a rewrite (a HOT update) adds no entry to any index (HNSW, full text, B-trees);
    measured with bench/background.py on 1,000,000 rows: a pass takes about 5 s at 50%,
    against about 180 s at 80% (a fifth of the rows fit) because every other row then
    pays for an entry in every index. The price is a table about twice as large.
    """
    return PostgresOnlySQL(
        "ALTER TABLE stores_memory SET (fillfactor = 50)",
        "ALTER TABLE stores_memory RESET (fillfactor)",
    )
