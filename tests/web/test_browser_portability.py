"""Moving memories in a browser: a PAM file chosen, checked by a dry run, then imported from
the report; a tampered file refused whole, naming the check. Screenshots in a temporary folder
(docs/screenshots/ with MEMORYADMIN_UPDATE_SCREENSHOTS=1, see test_browser.py)."""

from __future__ import annotations

import io
import os

import pytest

from stores.interchange import pam
from stores.models import Memory
from tests.factories import AgentFactory, UserFactory
from tests.web.conftest import BROWSER_TEST
from tests.web.test_browser import log_in

pytestmark = BROWSER_TEST

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture
def store_file(tmp_path, make):
    source = AgentFactory(name="elsewhere")
    make.memory(source, "Rocky prefers short status reports.", alias="m-reports")
    make.memory(
        source, "The nightly build runs on GitHub Actions.", alias="m-build", category="fact"
    )
    buffer = io.BytesIO()
    pam.write_memory_store(source, buffer)
    path = tmp_path / "memory-store.json"
    path.write_bytes(buffer.getvalue())
    return path


def test_an_upload_is_checked_then_imported_from_its_report(
    page, live_server, store_file, screenshots
):
    agent = AgentFactory(name="rockbot", display_name="RockBot")
    log_in(page, live_server, UserFactory(is_staff=True))
    page.goto(f"{live_server.url}/a/rockbot/")
    page.click("text=Import a PAM file")
    page.set_input_files("#pam-file", str(store_file))
    page.click("button[value=check]")
    page.wait_for_selector("#pam-report [data-status=checked]")
    assert "would be created" in page.inner_text("#pam-report").lower()
    assert not Memory.objects.filter(agent=agent).exists()
    screenshots(page, "pam-import-checked.png")

    page.click("#pam-report button[value=import]")
    page.wait_for_selector("#pam-report [data-status=imported]")
    assert set(Memory.objects.filter(agent=agent).values_list("alias", flat=True)) == {
        "m-reports",
        "m-build",
    }


def test_a_tampered_file_is_refused_naming_the_check(
    page, live_server, store_file, tmp_path, screenshots
):
    AgentFactory(name="rockbot")
    tampered = tmp_path / "tampered.json"
    tampered.write_bytes(store_file.read_bytes().replace(b"GitHub Actions", b"Jenkins"))
    log_in(page, live_server, UserFactory(is_staff=True))
    page.goto(f"{live_server.url}/a/rockbot/pam/")
    page.set_input_files("#pam-file", str(tampered))
    page.click("button[value=check]")
    page.wait_for_selector("#pam-report [data-check=content-hash]")
    assert "m-build" in page.inner_text("#pam-report")
    screenshots(page, "pam-refused.png", readme=False)
    assert not Memory.objects.filter(agent__name="rockbot").exists()
