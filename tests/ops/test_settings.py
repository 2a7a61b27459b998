"""Production settings: `check --deploy` passes with them, and a missing one stops start-up."""

from __future__ import annotations

import os
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


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
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
    )


def test_production_settings_pass_the_deployment_checks():
    done = manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION_ENV)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_development_settings_fail_the_deployment_checks():
    # The check is not a rubber stamp: the development defaults are refused.
    done = manage("check", "--deploy", "--fail-level", "WARNING", env={})

    assert done.returncode != 0
    assert "security.W018" in done.stderr  # DEBUG on


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
