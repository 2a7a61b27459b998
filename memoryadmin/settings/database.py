"""The database: SQLite beside the data by default, PostgreSQL from MEMORYADMIN_DATABASE_URL."""

from __future__ import annotations

from typing import Any

import dj_database_url

from memoryadmin.hosting.private_files import private_database, private_directory
from memoryadmin.settings.environment import DATA_DIR, env, env_bool, env_float, env_int


def _from_url(url: str) -> dict[str, Any]:
    database: dict[str, Any] = dict(
        dj_database_url.parse(
            url,
            # Django's threads are a fixed pool (memoryadmin/asgi.py), so each thread's kept
            # connection serves its next request.
            conn_max_age=int(env("CONN_MAX_AGE", "60") or 0),
            conn_health_checks=True,
        )
    )
    if database["ENGINE"] != "django.db.backends.postgresql":
        return database
    database["ENGINE"] = "memoryadmin.hosting.postgresql"
    options = database.setdefault("OPTIONS", {})
    # An unreachable host must fail a request (503) in seconds, not hang a worker thread.
    options.setdefault("connect_timeout", env_int("DATABASE_CONNECT_TIMEOUT", 5))
    # Each of Django's threads keeps a connection of its own (WEB_THREADS per process). A pool
    # per process (Django 5.1+, psycopg_pool) shares fewer connections among them, for a
    # database that has fewer to give. Off by default: after a database restart the pool
    # reconnects with a growing back-off, so the service takes longer to recover than with a
    # connection per thread (tests/e2e/test_faults.py).
    if env_bool("DATABASE_POOL", False):
        database["CONN_MAX_AGE"] = 0  # the pool keeps them; Django must not
        # With a pool, Django turns this into the pool's check of each connection it hands out.
        database["CONN_HEALTH_CHECKS"] = True
        options["pool"] = {
            "min_size": env_int("DATABASE_POOL_MIN_SIZE", 1),
            "max_size": env_int("DATABASE_POOL_MAX_SIZE", 20),
            # A request waits this long for a free connection before failing (503).
            "timeout": env_float("DATABASE_POOL_TIMEOUT", 10),
        }
    return database


def _sqlite() -> dict[str, Any]:
    return {
        "ENGINE": "django.db.backends.sqlite3",
        # Every agent's memory: readable by the user running memoryadmin only.
        "NAME": private_database(private_directory(DATA_DIR) / "memoryadmin.sqlite3"),
        # Several agents write at once: take the write lock at BEGIN and wait for it,
        # instead of failing read-then-write transactions with "database is locked".
        "OPTIONS": {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            # secure_delete: a page or cell freed is overwritten with zeros, so text an erasure
            # removed does not linger in the file's free space (README: "Erasing and redacting").
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
            "PRAGMA secure_delete=ON;",
        },
    }


_database_url = env("DATABASE_URL")
DATABASES = {"default": _from_url(_database_url) if _database_url else _sqlite()}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
