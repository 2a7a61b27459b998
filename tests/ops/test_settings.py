"""Settings as a process reads them: production's pass `check --deploy` and a missing one stops
start-up; the embedded default keeps DEBUG off, its own secret key and private files."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PRODUCTION_ENV = {
    "MEMORYADMIN_ENV": "production",
    "MEMORYADMIN_SECRET_KEY": "x7Qm2v9LkP0sT4wZrB8nC1dF6gH3jY5uE-aV_oXiN2qRtS7mK9pL4zW8cJ0bD3f",
    "MEMORYADMIN_ALLOWED_HOSTS": "memory.example.com",
    "MEMORYADMIN_CSRF_TRUSTED_ORIGINS": "https://memory.example.com",
    "MEMORYADMIN_DATABASE_URL": "postgres://memoryadmin:secret@127.0.0.1:1/memoryadmin",
    "MEMORYADMIN_BROKER_URL": "redis://127.0.0.1:1/0",
    "MEMORYADMIN_TRUST_X_FORWARDED_PROTO": "true",
}


def manage(*args: str, env: dict[str, str], umask: int = -1) -> subprocess.CompletedProcess[str]:
    # A clean slate: nothing from this test run (its database, the browser tests' async
    # switch) may leak into the deployment being checked.
    clean = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("MEMORYADMIN_", "DJANGO_"))
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        umask=umask,
    )


def setting(name: str, env: dict[str, str]) -> str:
    done = manage(
        "shell",
        "-v",
        "0",
        "-c",
        f"from django.conf import settings; print(settings.{name})",
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_production_settings_pass_the_deployment_checks():
    done = manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION_ENV)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_development_settings_fail_the_deployment_checks(tmp_path):
    # The check is not a rubber stamp: the development defaults (plain HTTP) are refused.
    done = manage(
        "check", "--deploy", "--fail-level", "WARNING", env={"MEMORYADMIN_DATA_DIR": str(tmp_path)}
    )

    assert done.returncode != 0
    assert "security.W012" in done.stderr  # session cookie sent over plain HTTP
    assert "security.W018" not in done.stderr  # DEBUG is off there too
    assert "security.W009" not in done.stderr  # the generated secret key is strong


def test_debug_is_off_unless_asked_for(tmp_path):
    data = {"MEMORYADMIN_DATA_DIR": str(tmp_path)}

    assert setting("DEBUG", env=data) == "False"
    assert setting("DEBUG", env={**data, "MEMORYADMIN_DEBUG": "true"}) == "True"


def test_each_installation_makes_its_own_private_secret_key(tmp_path):
    first, second = tmp_path / "first" / "data", tmp_path / "second"

    key = setting("SECRET_KEY", env={"MEMORYADMIN_DATA_DIR": str(first)})

    assert len(key) >= 50
    assert (first / "secret_key").read_text().strip() == key
    assert mode(first / "secret_key") == 0o600
    assert mode(first) == 0o700  # the data folder it made
    assert setting("SECRET_KEY", env={"MEMORYADMIN_DATA_DIR": str(first)}) == key  # kept
    assert setting("SECRET_KEY", env={"MEMORYADMIN_DATA_DIR": str(second)}) != key
    assert sorted(path.name for path in first.iterdir()) == ["memoryadmin.sqlite3", "secret_key"]


def test_a_secret_key_from_the_environment_wins_and_nothing_is_written(tmp_path):
    env = {"MEMORYADMIN_DATA_DIR": str(tmp_path), "MEMORYADMIN_SECRET_KEY": "k" * 20 + "ey" * 20}

    assert setting("SECRET_KEY", env=env) == "k" * 20 + "ey" * 20
    assert not (tmp_path / "secret_key").exists()


def test_the_sqlite_database_and_its_journals_are_private(tmp_path):
    database = tmp_path / "memoryadmin.sqlite3"
    # The usual umask would let SQLite make every file world-readable (0644).
    done = manage(
        "shell",
        "-v",
        "0",
        "-c",
        "import os, stat; from django.db import connection\n"
        "with connection.cursor() as cursor: cursor.execute('CREATE TABLE probe (x)')\n"
        f"for suffix in ('-wal', '-shm'):\n"
        f"    print(oct(stat.S_IMODE(os.stat('{database}' + suffix).st_mode)))",
        env={"MEMORYADMIN_DATA_DIR": str(tmp_path)},
        umask=0o022,
    )

    assert done.returncode == 0, done.stderr
    assert mode(database) == 0o600
    assert done.stdout.split() == ["0o600", "0o600"]


@pytest.mark.parametrize(
    "variable",
    [
        "MEMORYADMIN_SECRET_KEY",
        "MEMORYADMIN_ALLOWED_HOSTS",
        "MEMORYADMIN_DATABASE_URL",
        "MEMORYADMIN_BROKER_URL",
    ],
)
def test_a_missing_production_variable_stops_start_up_and_is_named(variable):
    env = {name: value for name, value in PRODUCTION_ENV.items() if name != variable}

    done = manage("check", env=env)

    assert done.returncode != 0
    assert "ImproperlyConfigured" in done.stderr
    assert variable in done.stderr.splitlines()[-1]


@pytest.mark.parametrize("url", ["file:///etc/passwd", "localhost:11434/v1"])
def test_a_judge_url_that_is_not_http_stops_start_up_and_is_named(tmp_path, url):
    env = {"MEMORYADMIN_DATA_DIR": str(tmp_path), "MEMORYADMIN_JUDGE_URL": url}

    done = manage("check", env=env)

    assert done.returncode != 0
    assert "ImproperlyConfigured" in done.stderr
    assert "MEMORYADMIN_JUDGE_URL must be" in done.stderr.splitlines()[-1]


def test_a_judge_on_loopback_is_the_operators_choice(tmp_path):
    # Unlike a webhook's URL, which a user types in, the judge's is set by whoever runs the
    # server: a model served beside it on loopback is allowed.
    env = {
        "MEMORYADMIN_DATA_DIR": str(tmp_path),
        "MEMORYADMIN_JUDGE_URL": "http://127.0.0.1:11434/v1",
    }

    assert setting('MEMORYADMIN["JUDGE"]["URL"]', env) == "http://127.0.0.1:11434/v1"
