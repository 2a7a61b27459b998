"""A client cannot pick the address the login lockout counts by claiming one in
X-Forwarded-For: `bin/serve` trusts no proxy header, production only FORWARDED_ALLOW_IPS.

Both servers run for real (bin/serve's own command line; gunicorn with gunicorn.conf.py).
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from tests.factories import UserFactory
from tests.load.server import bin_serve, gunicorn, log_in

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "correct horse battery staple"  # tests/factories.py UserFactory


def person_the_server_knows():
    """A user whose password hash the server can check (the tests' settings hash with MD5,
    which the server's do not accept)."""
    person = UserFactory()
    hasher = PBKDF2PasswordHasher()
    person.password = hasher.encode(PASSWORD, hasher.salt())
    person.save(update_fields=["password"])
    return person


def log_in_claiming(base: str, username: str, password: str, claimed: str) -> int:
    """One login from a fresh browser that claims to be `claimed`; the answer's status."""
    _session, answer = log_in(base, username, password, {"X-Forwarded-For": claimed})
    return answer.status_code


def guess_from_new_addresses(base: str, username: str) -> list[int]:
    """Wrong passwords past the lockout, each from an address never claimed before, then
    the right one from another."""
    answers = [
        log_in_claiming(base, username, "wrong", f"203.0.113.{attempt}")
        for attempt in range(settings.AXES_FAILURE_LIMIT + 2)
    ]
    return [*answers, log_in_claiming(base, username, PASSWORD, "198.51.100.7")]


@pytest.mark.database_free  # bin/serve runs on a SQLite database of its own
def test_bin_serve_counts_failures_by_the_connections_address_whatever_the_header(tmp_path):
    """Regression: 80 wrong guesses with a new X-Forwarded-For each were all answered 200,
    and the right password then logged in."""
    with bin_serve(tmp_path, PASSWORD) as base:
        answers = guess_from_new_addresses(base, "admin")

    limit = settings.AXES_FAILURE_LIMIT
    assert answers[: limit - 1] == [200] * (limit - 1)  # the form again, "did not match"
    assert set(answers[limit - 1 :]) == {429}  # locked out, the right password too


@pytest.mark.django_db(transaction=True)
def test_production_trusts_no_forwarded_header_unless_told_whose(postgres_only, monkeypatch):
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    person = person_the_server_knows()
    with gunicorn(workers=1, threads=2) as base:
        answers = guess_from_new_addresses(base, person.username)

    assert set(answers[settings.AXES_FAILURE_LIMIT - 1 :]) == {429}


@pytest.mark.django_db(transaction=True)
def test_production_takes_the_client_address_from_the_proxy_it_was_told_of(
    postgres_only, monkeypatch
):
    """Behind a proxy at FORWARDED_ALLOW_IPS, each client is counted on its own address."""
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "127.0.0.1")
    person = person_the_server_knows()
    with gunicorn(workers=1, threads=2) as base:
        answers = guess_from_new_addresses(base, person.username)

    assert answers[-1] == 302  # the right password logs in: no claimed address was locked


def health(base: str) -> int:
    """/healthz, asked again if the worker that took the connection was just retiring (its
    replacement boots meanwhile, which takes long on a busy machine)."""
    for _attempt in range(3):
        with contextlib.suppress(requests.ConnectionError, requests.Timeout):
            return requests.get(f"{base}/healthz", timeout=60).status_code
    return requests.get(f"{base}/healthz", timeout=60).status_code


@pytest.mark.django_db(transaction=True)
def test_production_recycles_a_worker_after_its_requests(postgres_only):
    """A worker past WEB_MAX_REQUESTS (plus its jitter) is replaced, and the service goes on."""
    with gunicorn(workers=2, threads=2, WEB_MAX_REQUESTS="20") as base:
        answers = [health(base) for _ in range(60)]
        log_file = ROOT / "var" / f"gunicorn-{base.rsplit(':', 1)[1]}.log"
        # A worker logs its restart after it answered its last request: on a busy machine
        # that line can come a moment after the client has its answers.
        deadline = time.monotonic() + 15
        while "Maximum request limit" not in (log := log_file.read_text()):
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)

    assert set(answers) == {200}
    assert "Maximum request limit" in log
