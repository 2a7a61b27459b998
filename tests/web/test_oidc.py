"""Single sign-on against a real OpenID Connect provider on loopback: django-oauth-toolkit in a
small project of its own (tests/oidc_provider/), run as its own process, with Chromium
walking the login. The provider can be told to issue a tampered, wrongly addressed or
expired ID token (its `mode` file); each is refused.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from memoryadmin.web import sso
from stores.models import AgentAccess, ProviderIdentity
from tests.factories import AgentFactory, UserFactory
from tests.web.conftest import BROWSER_TEST

pytestmark = BROWSER_TEST

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ROOT = Path(__file__).resolve().parents[2]
CLIENT_ID = "memoryadmin-test-client"
CLIENT_SECRET = "memoryadmin-test-secret-5d1e"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Provider:
    def __init__(self, base: str, state: Path) -> None:
        self.base = base
        self.state = state
        self.discovery_url = f"{base}/o/.well-known/openid-configuration/"

    def issue(self, mode: str) -> None:
        """What the provider's next ID tokens are: "" (right), tampered, wrong_audience, expired."""
        (self.state / "mode").write_text(mode)

    def name(self, names: dict[str, str]) -> None:
        """The `preferred_username` the provider gives each of these users from now on."""
        (self.state / "names").write_text(json.dumps(names))


@pytest.fixture(scope="module")
def provider(live_server, tmp_path_factory) -> Iterator[Provider]:
    state = tmp_path_factory.mktemp("oidc-provider")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (state / "signing-key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.oidc_provider.settings",
        "OIDC_PROVIDER_STATE": str(state),
    }
    redirect_uri = f"{live_server.url}/oidc/callback/"
    seed = [
        sys.executable,
        "-m",
        "tests.oidc_provider.seed",
        redirect_uri,
        CLIENT_ID,
        CLIENT_SECRET,
    ]
    subprocess.run(seed, cwd=ROOT, env=env, check=True, timeout=120)
    port = free_port()
    log = (state / "provider.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "django", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    found = Provider(f"http://127.0.0.1:{port}", state)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(found.discovery_url, timeout=5).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((state / "provider.log").read_text())
            time.sleep(0.2)
        yield found
    finally:
        process.terminate()
        process.wait(timeout=20)
        log.close()


@pytest.fixture
def sso_settings(settings, provider):
    provider.issue("")
    provider.name({})
    sso.discovery.cache_clear()
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "OIDC": {
            **settings.MEMORYADMIN["OIDC"],
            "DISCOVERY_URL": provider.discovery_url,
            "CLIENT_ID": CLIENT_ID,
            "CLIENT_SECRET": CLIENT_SECRET,
            "STAFF_GROUPS": ["memoryadmin-admins"],
            "AGENT_GROUPS": [
                "rockbot-editors=rockbot:editor",
                "patrol-viewers=patrol:viewer",
                "patrol-viewers=rockbot:viewer",
            ],
        },
    }
    return settings


def sso_login(page, live_server, username: str) -> str:
    """Walk the login in the browser; the URL of the provider's answer (the callback)."""
    callbacks: list[str] = []
    page.on(
        "request",
        lambda request: callbacks.append(request.url) if "/oidc/callback/" in request.url else None,
    )
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_role("link", name="Log in with single sign-on").click()
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("provider-password")
    page.get_by_role("button", name="Sign in to the provider").click()
    page.wait_for_url(lambda url: "/oidc/callback/" not in url and "127.0.0.1" not in url)
    return callbacks[0]


def test_a_person_logs_in_with_the_provider_and_is_created_as_staff(
    page, live_server, sso_settings, screenshots
):
    page.goto(f"{live_server.url}/accounts/login/")
    screenshots(page, "login-single-sign-on.png", full_page=False)

    callback = sso_login(page, live_server, "alice")

    assert page.url == f"{live_server.url}/"
    alice = get_user_model().objects.get(username="alice")
    assert alice.is_staff
    assert not alice.has_usable_password()
    assert alice.email == "alice@example.org"
    # PKCE, state and nonce were part of it: the authorization request carried them.
    assert "state=" in callback and "code=" in callback


def test_groups_map_to_grants_and_are_read_again_at_each_login(
    page, live_server, sso_settings, browser
):
    rockbot, patrol = AgentFactory(name="rockbot"), AgentFactory(name="patrol")
    AgentFactory(name="unmapped")
    sso_login(page, live_server, "bob")
    bob = get_user_model().objects.get(username="bob")
    assert not bob.is_staff
    roles = dict(AgentAccess.objects.filter(user=bob).values_list("agent__name", "role"))
    assert roles == {"rockbot": "editor", "patrol": "viewer"}
    expect(page.get_by_role("link", name="Rockbot")).to_be_visible()

    # The mapping changes (bob's group no longer gives rockbot); the next login re-reads it.
    sso_settings.MEMORYADMIN["OIDC"]["AGENT_GROUPS"] = [
        "patrol-viewers=patrol:viewer",
        "x=rockbot:editor",
    ]
    AgentAccess.objects.create(user=bob, agent=AgentFactory(name="by-hand"), role="viewer")
    again = browser.new_page()
    sso_login(again, live_server, "bob")
    # Closed here, as pytest-playwright closes `page`: left open, its home page would go on
    # asking the server what changed while the test database is dropped.
    again.close()
    roles = dict(AgentAccess.objects.filter(user=bob).values_list("agent__name", "role"))
    assert roles == {"patrol": "viewer", "by-hand": "viewer"}
    assert rockbot.pk and patrol.pk


@pytest.mark.parametrize("fault", ["tampered", "wrong_audience", "expired"])
def test_a_bad_id_token_is_refused(page, live_server, sso_settings, provider, fault):
    provider.issue(fault)

    sso_login(page, live_server, "alice")

    assert page.url == f"{live_server.url}/accounts/login/?sso=refused"
    expect(page.get_by_role("alert")).to_contain_text("Single sign-on did not log you in")
    assert not get_user_model().objects.filter(username="alice").exists()


def test_a_replayed_callback_is_refused(page, live_server, sso_settings):
    callback = sso_login(page, live_server, "carol")
    assert get_user_model().objects.filter(username="carol").exists()
    page.context.clear_cookies()

    page.goto(callback)

    # The state was used up by the first answer: the code is not even exchanged.
    assert page.url == f"{live_server.url}/accounts/login/?sso=refused"
    page.goto(f"{live_server.url}/")
    assert "/accounts/login/" in page.url


def test_a_provider_user_named_like_a_local_account_does_not_become_it(
    page, live_server, sso_settings
):
    UserFactory(username="alice", is_staff=False)

    sso_login(page, live_server, "alice")

    assert page.url == f"{live_server.url}/accounts/login/?sso=refused"
    assert not get_user_model().objects.get(username="alice").is_staff


def test_local_passwords_can_be_turned_off(client, db, sso_settings):
    UserFactory(username="local", password="correct horse battery staple")
    page = client.get("/accounts/login/").content.decode()
    assert 'name="password"' in page and "Log in with single sign-on" in page

    sso_settings.MEMORYADMIN["LOCAL_PASSWORDS"] = False
    page = client.get("/accounts/login/").content.decode()
    assert 'name="password"' not in page and "Log in with single sign-on" in page
    client.post(
        "/accounts/login/", {"username": "local", "password": "correct horse battery staple"}
    )
    assert "_auth_user_id" not in client.session


def test_without_a_provider_there_is_no_single_sign_on(client, db):
    assert client.get("/oidc/authenticate/").status_code == 404
    assert "single sign-on" not in client.get("/accounts/login/").content.decode()


def test_a_second_provider_user_giving_a_taken_name_is_refused_not_logged_in_as_its_holder(
    page, live_server, sso_settings, provider, browser
):
    """Regression: accounts were found by `preferred_username`, so another provider user who
    gave the same name (or the same name in other case and spacing) logged in as the first."""
    sso_login(page, live_server, "alice")
    alice = get_user_model().objects.get(username="alice")
    assert alice.is_staff

    for claimed in ["alice", " ALICE ", "Al ice"]:
        provider.name({"mallory": claimed})
        impostor = browser.new_page()
        sso_login(impostor, live_server, "mallory")
        assert impostor.url == f"{live_server.url}/accounts/login/?sso=refused"
        impostor.goto(f"{live_server.url}/")
        assert "/accounts/login/" in impostor.url
        impostor.close()
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["alice"]

    # The first user is still known by their subject when the provider renames them.
    provider.name({"alice": "alice.renamed"})
    again = browser.new_page()
    sso_login(again, live_server, "alice")
    assert again.url == f"{live_server.url}/"
    again.close()
    assert get_user_model().objects.count() == 1
    assert ProviderIdentity.objects.get().user == alice


def test_an_account_made_before_identities_were_kept_is_linked_by_its_email(
    page, live_server, sso_settings
):
    made_earlier = UserFactory(username="carol", email="carol@example.org")
    made_earlier.set_unusable_password()
    made_earlier.save()

    sso_login(page, live_server, "carol")

    assert page.url == f"{live_server.url}/"
    assert ProviderIdentity.objects.get().user == made_earlier
