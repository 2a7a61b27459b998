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


# --- The change feed: a position taken when the write commits ---------------------------
#
# A revision's id is taken when it is inserted, and transactions commit in any order, so a
# feed read by revision id could hand out id 11 while 10 was still uncommitted, and then
# never hand out 10. The feed's rows (stores_change) are added instead by the database as
# the write commits:
# - PostgreSQL: a deferred constraint trigger fires at commit, takes a per-agent advisory
#   lock (held until the commit is visible) and inserts the transaction's changes for that
#   agent. Two commits of one agent take their ids one after the other, in commit order; the
#   NOTIFY it sends is delivered only if the transaction commits. Each revision carries the
#   id of the transaction that wrote it (`txid`, a column of the database only), so the
#   trigger finds its transaction's rows through an index whatever wrote them (the engine,
#   the importer's batches, restores).
# - SQLite: one writer at a time (immediate transactions), so the order of insertion is the
#   order of commit; a plain trigger adds the row. Like the full-text triggers it is made
#   again after every migrate, as rebuilding a SQLite table drops its triggers.
CHANGES_CHANNEL = "memoryadmin_changes"
# The first key of the feed's advisory locks ('mafd'), so they never collide with other
# advisory locks of the database; the second is derived from the agent id.
FEED_LOCK_CLASS = 0x6D616664
FEED_LOCK_SQL = "SELECT pg_advisory_xact_lock(%s, mod(%s::bigint, 2147483647)::int)"

_POSTGRES_FEED_FUNCTION = f"""
CREATE OR REPLACE FUNCTION stores_feed_commit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tx bigint := pg_current_xact_id()::text::bigint;
    feed_agent bigint;
    upto bigint := 0;
BEGIN
    -- The first of the transaction's deferred triggers to fire does every row of it; the
    -- others only check that they were covered (a row inserted after SET CONSTRAINTS ALL
    -- IMMEDIATE fired the first ones is not, and is added by its own).
    IF current_setting('memoryadmin.feed_tx', true) = tx::text THEN
        IF NEW.id <= current_setting('memoryadmin.feed_upto')::bigint THEN
            RETURN NULL;
        END IF;
    END IF;
    -- Agents in id order: two transactions writing for the same agents lock them alike.
    FOR feed_agent IN
        SELECT DISTINCT r.agent_id FROM stores_revision r WHERE r.txid = tx ORDER BY 1
    LOOP
        PERFORM pg_advisory_xact_lock({FEED_LOCK_CLASS}, mod(feed_agent, 2147483647)::int);
        INSERT INTO stores_change (agent_id, revision_id, kind, memories)
        SELECT r.agent_id, r.id, 'write', 0
        FROM stores_revision r
        WHERE r.txid = tx AND r.agent_id = feed_agent
          AND NOT EXISTS (SELECT 1 FROM stores_change c WHERE c.revision_id = r.id)
        ORDER BY r.id;
        PERFORM pg_notify('{CHANGES_CHANNEL}', feed_agent::text);
    END LOOP;
    SELECT coalesce(max(r.id), 0) INTO upto FROM stores_revision r WHERE r.txid = tx;
    PERFORM set_config('memoryadmin.feed_tx', tx::text, true);
    PERFORM set_config('memoryadmin.feed_upto', upto::text, true);
    RETURN NULL;
END
$$;
"""


POSTGRES_FEED_TRIGGER = "stores_revision_feed"


def postgres_feed_trigger() -> PostgresOnlySQL:
    """The transaction id column of revisions, its index, and the commit trigger."""
    return PostgresOnlySQL(
        # 0 for the revisions written before the feed existed (they were backfilled in id
        # order); every later insert takes its own transaction's id.
        "ALTER TABLE stores_revision ADD COLUMN txid bigint NOT NULL DEFAULT 0;"
        "ALTER TABLE stores_revision ALTER COLUMN txid "
        "SET DEFAULT (pg_current_xact_id()::text::bigint);"
        "CREATE INDEX stores_revision_txid ON stores_revision (txid, agent_id, id);"
        + _POSTGRES_FEED_FUNCTION
        + f"CREATE CONSTRAINT TRIGGER {POSTGRES_FEED_TRIGGER} AFTER INSERT ON stores_revision "
        "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stores_feed_commit();",
        f"DROP TRIGGER IF EXISTS {POSTGRES_FEED_TRIGGER} ON stores_revision;"
        "DROP FUNCTION IF EXISTS stores_feed_commit();"
        "DROP INDEX IF EXISTS stores_revision_txid;"
        "ALTER TABLE stores_revision DROP COLUMN IF EXISTS txid;",
    )


SQLITE_FEED_TRIGGER = "stores_revision_feed"
_SQLITE_FEED_TRIGGER_BODY = (
    "AFTER INSERT ON stores_revision BEGIN "
    "INSERT INTO stores_change (agent_id, revision_id, kind, memories) "
    "VALUES (new.agent_id, new.id, 'write', 0); END"
)


def ensure_sqlite_feed_trigger(connection) -> bool:
    """Create the SQLite trigger that adds a revision's feed row, if missing."""
    if connection.vendor != "sqlite":
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND name IN ('stores_revision', 'stores_change')"
        )
        if len(cursor.fetchall()) < 2:
            return False
        cursor.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = %s",
            [SQLITE_FEED_TRIGGER],
        )
        if cursor.fetchone() is not None:
            return False
        cursor.execute(f"CREATE TRIGGER {SQLITE_FEED_TRIGGER} {_SQLITE_FEED_TRIGGER_BODY}")
    return True


def lock_feed(connection, agent_ids: list[int]) -> None:
    """Take the feed's commit locks of `agent_ids` (PostgreSQL), in the trigger's order.

    For change rows Python writes (a decay pass's, a suggestion's): inserted while the locks
    are held to the commit, their ids fall among each agent's commits as the trigger's rows
    do; the agents' listeners are notified when the transaction commits. The revisions the
    transaction wrote so far are given their rows first (the deferred trigger fires now), so a
    row added after those writes comes after them in the feed, as it did in the transaction.
    """
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(f"SET CONSTRAINTS {POSTGRES_FEED_TRIGGER} IMMEDIATE")
        cursor.execute(f"SET CONSTRAINTS {POSTGRES_FEED_TRIGGER} DEFERRED")
        for agent_id in sorted(set(agent_ids)):
            cursor.execute(FEED_LOCK_SQL, [FEED_LOCK_CLASS, agent_id])
            cursor.execute("SELECT pg_notify(%s, %s)", [CHANGES_CHANNEL, str(agent_id)])
