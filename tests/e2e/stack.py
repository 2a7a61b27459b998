"""The production stack as real processes on loopback, started the way the containers are.

PostgreSQL with pgvector (bin/postgres), redis-server, `manage.py migrate`, gunicorn with
gunicorn.conf.py, a Celery worker and Celery beat, with the settings docker-compose.yml
gives them (MEMORYADMIN_ENV=production) and a TLS proxy played by the X-Forwarded-Proto
header. Tests drive it over HTTP and read the database directly to check the data.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import psycopg
import requests

ROOT = Path(__file__).resolve().parents[2]
FAKE_BACKEND = "stores.embeddings.fake.FakeBackend"
SLOW_BACKEND = "tests.e2e.slow_backend.SlowFakeBackend"
# How often beat enqueues the stale-vector sweep here (production: every 10 minutes).
SWEEP_INTERVAL_SECONDS = 3

T = TypeVar("T")


def wait_for(
    probe: Callable[[], T | None], what: str, *, timeout: float = 30, interval: float = 0.2
) -> T:
    """Poll until `probe` returns something truthy; fail naming `what` at the deadline."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = probe()
        except (OSError, requests.RequestException, psycopg.Error) as error:
            last_error, value = error, None
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last_error})")


@dataclass
class Stack:
    run_dir: Path
    log_dir: Path
    pg_port: int
    redis_port: int
    http_port: int
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    admin_password: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    secret_key: str = field(default_factory=lambda: secrets.token_urlsafe(50))
    worker_slowed: bool = False

    # --- settings ----------------------------------------------------------------------

    @property
    def database_url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.pg_port}/postgres"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def environment(self, **overrides: str) -> dict[str, str]:
        # Nothing of the test run's own settings (its database, its eager tasks) leaks in.
        inherited = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(("MEMORYADMIN_", "DJANGO_", "E2E_"))
        }
        return {
            **inherited,
            "PYTHONPATH": str(ROOT),
            "MEMORYADMIN_ENV": "production",
            "MEMORYADMIN_SECRET_KEY": self.secret_key,
            "MEMORYADMIN_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "MEMORYADMIN_CSRF_TRUSTED_ORIGINS": f"https://127.0.0.1:{self.http_port}",
            "MEMORYADMIN_TRUST_X_FORWARDED_PROTO": "true",
            "MEMORYADMIN_DATABASE_URL": self.database_url,
            "MEMORYADMIN_DATABASE_CONNECT_TIMEOUT": "2",
            "MEMORYADMIN_BROKER_URL": f"redis://127.0.0.1:{self.redis_port}/0",
            "MEMORYADMIN_EMBEDDING_BACKEND": FAKE_BACKEND,
            "MEMORYADMIN_SWEEP_INTERVAL": str(SWEEP_INTERVAL_SECONDS),
            "MEMORYADMIN_STATIC_ROOT": str(self.run_dir / "static"),
            "MEMORYADMIN_DATA_DIR": str(self.run_dir / "data"),
            "MEMORYADMIN_BIND": f"127.0.0.1:{self.http_port}",
            "MEMORYADMIN_WEB_WORKERS": "2",
            "MEMORYADMIN_ADMIN_PASSWORD": self.admin_password,
            **overrides,
        }

    # --- processes ---------------------------------------------------------------------

    def run(self, *command: str, **env: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            command,
            cwd=ROOT,
            env=self.environment(**env),
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
        return done

    def manage(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return self.run(sys.executable, "manage.py", *args, **env)

    def spawn(self, name: str, command: list[str], **env: str) -> subprocess.Popen:
        log = (self.log_dir / f"{name}.log").open("a")
        # Its own process group: a kill reaches the worker's pool children too, as when a
        # container dies.
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=self.environment(**env),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.processes[name] = process
        return process

    def stop(self, name: str, sig: signal.Signals = signal.SIGTERM, timeout: float = 30) -> None:
        process = self.processes.pop(name, None)
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, sig)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)

    def postgres(self, action: str) -> None:
        subprocess.run(
            ["bin/postgres", action, str(self.run_dir / "postgres"), str(self.pg_port)],
            cwd=ROOT,
            env={**os.environ, "PYTHON": sys.executable},
            check=True,
            capture_output=True,
            timeout=60,
        )

    def start_postgres(self) -> None:
        self.postgres("start")
        wait_for(lambda: self.query("SELECT 1"), "PostgreSQL to accept connections")

    def start_redis(self) -> None:
        self.spawn(
            "redis",
            [
                "redis-server",
                "--port", str(self.redis_port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--dir", str(self.run_dir),
            ],
        )  # fmt: skip
        wait_for(self._redis_answers, "redis-server to answer")

    def _redis_answers(self) -> bool:
        done = subprocess.run(
            ["redis-cli", "-p", str(self.redis_port), "ping"], capture_output=True, text=True
        )
        return done.stdout.strip() == "PONG"

    def start_web(self) -> None:
        self.spawn(
            "web",
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                "gunicorn.conf.py",
                "memoryadmin.asgi:application",
            ],
        )
        wait_for(lambda: self.get("/readyz").status_code == 200, "gunicorn to be ready")

    def start_worker(self, *, delay: float = 0.0, batch_size: int = 64) -> None:
        self.worker_slowed = delay > 0
        self.spawn(
            "worker",
            [
                sys.executable, "-m", "celery", "--app=memoryadmin", "worker",
                "--loglevel=INFO", "--concurrency=2", "--without-gossip", "--without-mingle",
            ],
            MEMORYADMIN_EMBEDDING_BACKEND=SLOW_BACKEND,
            MEMORYADMIN_REEMBED_BATCH_SIZE=str(batch_size),
            E2E_EMBED_DELAY=str(delay),
        )  # fmt: skip

    def start_beat(self) -> None:
        self.spawn(
            "beat",
            [
                sys.executable, "-m", "celery", "--app=memoryadmin", "beat", "--loglevel=INFO",
                f"--schedule={self.run_dir / 'celerybeat-schedule'}",
            ],
        )  # fmt: skip

    def restore(self) -> None:
        """Bring back whatever a fault test left stopped, slowed or dead, so that one
        failure is not repeated by every test after it."""
        if not self._postgres_answers():
            self.postgres("resume")
        if not self.running("redis"):
            self.start_redis()
        if self.worker_slowed:
            self.stop("worker")
        for name, start in (("worker", self.start_worker), ("beat", self.start_beat)):
            if not self.running(name):
                self.stop(name)
                start()

    def running(self, name: str) -> bool:
        process = self.processes.get(name)
        return process is not None and process.poll() is None

    def log_tails(self, lines: int = 15, width: int = 240) -> str:
        """The last lines each process logged: what a failed wait needs to be understood in a
        CI report, where the log folder is gone."""
        parts = []
        for log in sorted(self.log_dir.glob("*.log")):
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"--- {log.name}\n" + "\n".join(line[:width] for line in tail))
        return "\n".join(parts)

    def _postgres_answers(self) -> bool:
        try:
            return bool(self.query("SELECT 1"))
        except psycopg.OperationalError:
            return False

    def start(self) -> None:
        (self.run_dir / "data").mkdir(exist_ok=True)
        self.start_postgres()
        self.start_redis()
        # What the compose file's one-shot migrate service does, then the image build's step.
        self.manage("migrate", "--no-input")
        self.manage("ensure_admin")
        self.manage("collectstatic", "--no-input")
        self.start_web()
        self.start_worker()
        self.start_beat()

    def shutdown(self) -> None:
        for name in ("beat", "worker", "web", "redis"):
            self.stop(name)
        self.postgres("stop")

    # --- talking to it -----------------------------------------------------------------

    def request(
        self, method: str, path: str, *, token: str | None = None, **kwargs: Any
    ) -> requests.Response:
        headers = {"X-Forwarded-Proto": "https", **kwargs.pop("headers", {})}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        kwargs.setdefault("timeout", 30)
        kwargs.setdefault("allow_redirects", False)
        return requests.request(method, self.base_url + path, headers=headers, **kwargs)

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def create_token(self, agent: str) -> str:
        return self.manage("create_agent_token", agent).stdout.strip().splitlines()[-1]

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.database_url, connect_timeout=2, autocommit=True) as db:
            return db.execute(sql, params).fetchall()
