"""A real gunicorn serving memoryadmin against the test database, for tests that go over HTTP."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import requests
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def database_url() -> str:
    """The URL of the database this test process uses (the test database on PostgreSQL)."""
    db = connection.settings_dict
    user = quote(db.get("USER") or "", safe="")
    password = f":{quote(db['PASSWORD'], safe='')}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


@contextlib.contextmanager
def gunicorn(
    *,
    django_only: bool = False,
    workers: int = 4,
    threads: int = 4,
    port: int | None = None,
    **settings: str,
) -> Iterator[str]:
    """Start gunicorn on loopback; yield its base URL; stop it.

    It runs the production server as the container does: the project's gunicorn.conf.py
    (read from the working folder) with memoryadmin.asgi, Django in `threads` threads per
    worker. `django_only` runs Django alone instead (memoryadmin.wsgi in gunicorn's threaded
    workers: no MCP, no held long polls), the peer bench/edit_path.py measures it against.
    `settings` are MEMORYADMIN_* environment variables for the server (without the prefix).
    """
    port = port or int(os.environ.get("MEMORYADMIN_TEST_HTTP_PORT", "0")) or free_port()
    env = {
        **os.environ,
        "MEMORYADMIN_DATABASE_URL": database_url(),
        "MEMORYADMIN_DEBUG": "false",
        "MEMORYADMIN_EMBEDDING_BACKEND": "stores.embeddings.fake.FakeBackend",
        "MEMORYADMIN_API_RATE_LIMIT": "1000000/minute",
        "MEMORYADMIN_LOG_LEVEL": "WARNING",
        "MEMORYADMIN_WEB_THREADS": str(threads),
        **{f"MEMORYADMIN_{name}": value for name, value in settings.items()},
    }
    if "BROKER_URL" not in settings:
        env.pop("MEMORYADMIN_BROKER_URL", None)  # eager tasks: re-embedding after each commit
    # Command-line options override the config file.
    command = [str(Path(sys.executable).parent / "gunicorn"), "-b", f"127.0.0.1:{port}"]
    if django_only:
        command += ["memoryadmin.wsgi", "--worker-class", "gthread", "--threads", str(threads)]
    else:
        command += ["-c", "gunicorn.conf.py", "memoryadmin.asgi:application"]
    command += ["-w", str(workers), "--timeout", "120", "--graceful-timeout", "5"]
    log = (ROOT / "var").joinpath(f"gunicorn-{port}.log")
    log.parent.mkdir(exist_ok=True)
    with log.open("w") as output:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=output)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(base, process, log)
        yield base
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_until_up(base: str, process: subprocess.Popen, log: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {process.returncode}:\n{log.read_text()}")
        # A booting worker may hold an accepted connection until its application is loaded:
        # on a busy machine that outlasts one read timeout, which is not being down.
        with contextlib.suppress(requests.ConnectionError, requests.Timeout):
            if requests.get(f"{base}/accounts/login/", timeout=5).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"the server did not answer within {seconds:g} s:\n{log.read_text()}")


@contextlib.contextmanager
def bin_serve(tmp_path: Path, admin_password: str) -> Iterator[str]:
    """bin/serve itself, from a copy of the tree whose bin/setup installs nothing; what it
    prints goes to `tmp_path / "serve.log"`."""
    for name in ("memoryadmin", "stores", "templates", "static", "manage.py", ".venv"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "bin").mkdir()
    shutil.copy(ROOT / "bin" / "serve", tmp_path / "bin" / "serve")
    (tmp_path / "bin" / "setup").write_text("#!/usr/bin/env bash\nexit 0\n")
    (tmp_path / "bin" / "setup").chmod(0o755)
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MEMORYADMIN_")},
        "MEMORYADMIN_DATA_DIR": str(tmp_path / "var"),
        "MEMORYADMIN_ADMIN_PASSWORD": admin_password,
        "MEMORYADMIN_EMBEDDING_BACKEND": "stores.embeddings.fake.FakeBackend",
        "FORWARDED_ALLOW_IPS": "*",  # uvicorn's own default would trust loopback: no matter
    }
    log = tmp_path / "serve.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            ["bash", "bin/serve", f"127.0.0.1:{port}"],
            cwd=tmp_path,
            env=env,
            stdout=output,
            stderr=output,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        # bin/serve migrates and creates the administrator first: three starts of Django.
        wait_until_up(base, process, log, seconds=240)
        yield base
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


_CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def csrf_from(html: str) -> str:
    match = _CSRF_INPUT.search(html)
    if match is None:
        raise AssertionError("no CSRF token in the page")
    return match.group(1)


def log_in(
    base: str, username: str, password: str, headers: dict[str, str] | None = None
) -> tuple[requests.Session, requests.Response]:
    """A browser's login through the form: its session and the form's answer (302 when in)."""
    session = requests.Session()
    page = session.get(f"{base}/accounts/login/", timeout=30)
    answer = session.post(
        f"{base}/accounts/login/",
        data={
            "username": username,
            "password": password,
            "csrfmiddlewaretoken": csrf_from(page.text),
        },
        headers={"Referer": f"{base}/accounts/login/", **(headers or {})},
        timeout=30,
        allow_redirects=False,
    )
    return session, answer


def browser_session(base: str, username: str, password: str) -> requests.Session:
    """A logged-in session as a browser has it: session cookie and CSRF cookie."""
    session, answer = log_in(base, username, password)
    if answer.status_code != 302:
        raise AssertionError(f"login failed ({answer.status_code})")
    return session


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """A throwaway redis-server on loopback (no persistence); yield its URL."""
    port = int(os.environ.get("MEMORYADMIN_TEST_REDIS_PORT", "0")) or free_port()
    process = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.1)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=20)
