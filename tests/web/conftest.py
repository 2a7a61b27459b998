from __future__ import annotations

import os
from pathlib import Path

import pytest

from stores.engine.actors import Actor
from stores.models import AgentAccess
from tests.factories import UserFactory, agent_token


@pytest.fixture
def staff_client(client, staff_user):
    client.force_login(staff_user)
    return client


@pytest.fixture
def viewer_client(client, agent):
    viewer = UserFactory()
    AgentAccess.objects.create(user=viewer, agent=agent, role=AgentAccess.Role.VIEWER)
    client.force_login(viewer)
    return client


@pytest.fixture
def agent_actor(agent):
    token, _raw = agent_token(agent)
    return Actor.for_token(token)


def htmx(target: str = "") -> dict[str, str]:
    headers = {"HX-Request": "true"}
    if target:
        headers["HX-Target"] = target
    return headers


# --- the browser tests (test_browser*.py) ---------------------------------------------------

CHROMIUM = Path("/usr/bin/chromium")
README_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
# What every browser test module marks itself with (`pytestmark = BROWSER_TEST`).
BROWSER_TEST = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"
    ),
    # The fixtures these tests run on stay clear of what the next pytest removes.
    pytest.mark.filterwarnings("error::pytest.PytestRemovedIn10Warning"),
]


LOOKED_AT_SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"


class Screenshots:
    """The browser tests' screenshots, taken only when MEMORYADMIN_UPDATE_SCREENSHOTS=1: the
    README's into docs/screenshots/, the others into var/screenshots/ to look at. Nothing
    looks at one otherwise, and each took a fifth of a second of Chromium's time."""

    def __init__(self, taken: bool) -> None:
        self.taken = taken

    def __call__(self, page, name: str, *, full_page: bool = True, readme: bool = True) -> None:
        if not self.taken:
            return
        folder = README_SCREENSHOTS if readme else LOOKED_AT_SCREENSHOTS
        folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(folder / name), full_page=full_page)


@pytest.fixture
def screenshots() -> Screenshots:
    return Screenshots(os.environ.get("MEMORYADMIN_UPDATE_SCREENSHOTS") == "1")


@pytest.fixture
def quick_live_poll(settings):
    """Open pages ask what changed every second rather than every five: for the tests that
    wait for a page to notice a change."""
    changes = {**settings.MEMORYADMIN["CHANGES"], "PAGE_POLL_SECONDS": 1}
    settings.MEMORYADMIN = {**settings.MEMORYADMIN, "CHANGES": changes}


@pytest.fixture(scope="session")
def base_url() -> str | None:
    """No base URL: the tests open `live_server.url` pages. Without pytest-base-url installed,
    pytest-playwright's own stand-in is a session fixture on an instance, which pytest 9
    deprecates; defining it here keeps that one out of the run."""
    return None


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {
        **browser_type_launch_args,
        "executable_path": str(CHROMIUM),
        "headless": True,
        "args": [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            "--disable-sync",
        ],
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1360, "height": 900}}
