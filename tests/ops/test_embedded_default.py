"""The embedded default exposes nothing by accident: the app's own error pages, static files
without DEBUG, private data files; and its log warns only of real problems."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from asgiref.testing import ApplicationCommunicator
from django.urls import path

import memoryadmin.urls
from memoryadmin.hosting.private_files import installation_secret, private_database

ROOT = Path(__file__).resolve().parents[2]


# --- pages without DEBUG ------------------------------------------------------------------


def asgi_get(url: str) -> tuple[int, bytes]:
    from memoryadmin.asgi import build_application

    async def get() -> tuple[int, bytes]:
        communicator = ApplicationCommunicator(
            build_application(),
            {
                "type": "http",
                "asgi": {"version": "3.0"},
                "http_version": "1.1",
                "method": "GET",
                "scheme": "http",
                "path": url,
                "raw_path": url.encode(),
                "query_string": b"",
                "headers": [(b"host", b"localhost")],
                "client": ("127.0.0.1", 50000),
                "server": ("127.0.0.1", 8000),
            },
        )
        await communicator.send_input({"type": "http.request", "body": b""})
        start = await communicator.receive_output(10)
        body = b""
        while True:
            message = await communicator.receive_output(10)
            body += message.get("body", b"")
            if not message.get("more_body"):
                return start["status"], body

    # A thread of its own: the browser tests' Playwright keeps an event loop running in this
    # one for the rest of the session, and async_to_sync refuses to run beside it.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, get()).result()


def test_the_asgi_application_serves_static_files_with_debug_off(settings):
    settings.DEBUG = False

    status, body = asgi_get("/static/web/app.css")

    assert status == 200
    assert body == (ROOT / "static" / "web" / "app.css").read_bytes()


def boom(request):
    raise RuntimeError("a bug")


urlpatterns = [path("boom/", boom), *memoryadmin.urls.urlpatterns]
handler500 = memoryadmin.urls.handler500


def test_an_unknown_page_is_the_apps_own_not_found_page(client, db):
    response = client.get("/no/such/page/", HTTP_HOST="localhost")

    assert response.status_code == 404
    page = response.content.decode()
    assert "Nothing here" in page
    assert "web/app.css" in page  # the app's layout, not Django's bare or technical page
    assert "Traceback" not in page and "URLconf" not in page


@pytest.mark.urls(__name__)
def test_a_server_error_is_the_apps_own_page_without_details(client, db):
    client.raise_request_exception = False

    response = client.get("/boom/", HTTP_HOST="localhost")

    assert response.status_code == 500
    page = response.content.decode()
    assert "Something went wrong" in page
    assert "a bug" not in page and "Traceback" not in page


# --- private files ----------------------------------------------------------------------


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_an_existing_database_readable_by_others_is_narrowed(tmp_path):
    database = tmp_path / "memoryadmin.sqlite3"
    for name in (database, Path(f"{database}-wal")):
        name.write_bytes(b"")
        name.chmod(0o644)

    private_database(database)

    assert mode(database) == 0o600
    assert mode(Path(f"{database}-wal")) == 0o600


def test_a_secret_key_made_elsewhere_first_is_the_one_kept(tmp_path):
    # Another process linked its key first: this one reads it and leaves nothing behind.
    (tmp_path / "secret_key").write_text("theirs\n")
    (tmp_path / "secret_key").chmod(0o600)

    assert installation_secret(tmp_path / "secret_key") == "theirs"
    assert [entry.name for entry in tmp_path.iterdir()] == ["secret_key"]


# --- the log --------------------------------------------------------------------------

EVERYDAY_WORK = """
from django.core.management import call_command
from django.test import Client
from stores.models import Agent
from stores.engine.actors import Actor
from stores.services import record_create, record_edit

call_command("migrate", verbosity=0)
agent = Agent.objects.create(name="rockbot")
me = Actor.maintainer("tests")
memory = record_create(
    surface_key="memory", agent=agent, actor=me, values={"content": "The user lives in Paris."}
)
edit = dict(surface_key="memory", agent=agent, ref=memory.id, actor=me)
record_edit(**edit, old_string="Paris", new_string="Lyon")
record_edit(**edit, old_string="Pariss", new_string="Rome")  # a refusal: no_match
client = Client(HTTP_HOST="localhost")
client.get("/no/such/page/")
client.get(f"/api/v1/memories/{memory.id}/")  # no token: 401
print("done")
"""


def test_everyday_work_on_the_embedded_default_logs_no_warning(tmp_path):
    """Writes (each re-embedded by an eager task), a refusal, a missing page, an API call
    without a token: answers, not problems. kombu warned at every write that no broker
    host was supplied, and django.request warned of every 4xx."""
    clean = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("MEMORYADMIN_", "DJANGO_"))
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-v", "0", "-c", EVERYDAY_WORK],
        cwd=ROOT,
        env={**clean, "MEMORYADMIN_DATA_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("done")
    log = done.stderr.splitlines()
    assert any(" INFO memoryadmin.writes " in line for line in log), done.stderr
    assert [line for line in log if " WARNING " in line or " ERROR " in line] == []
