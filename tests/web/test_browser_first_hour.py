"""A new user's first hour in headless Chromium: a phrase selected and retyped replaces it, a
staff member reaches a first agent, a page view writes nothing, a stale preview says so, and the
navigation fits a laptop screen. Screenshots are taken only when asked
(MEMORYADMIN_UPDATE_SCREENSHOTS=1, see test_browser.py)."""

from __future__ import annotations

import os
import time

import pytest

from stores.engine.actors import Actor
from stores.models import Agent, Memory, Revision, RulesDocument
from stores.services import record_create
from tests.factories import AgentFactory, UserFactory
from tests.web.conftest import BROWSER_TEST
from tests.web.test_browser import edit_in_another_session, log_in, select_text

pytestmark = BROWSER_TEST

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

SEED = Actor.maintainer("seed")


@pytest.fixture
def agent():
    return AgentFactory(name="rockbot", display_name="RockBot")


def memory(agent, content: str) -> Memory:
    result = record_create(
        surface_key="memory", agent=agent, actor=SEED, values={"content": content}
    )
    return Memory.objects.get(pk=result.id)


def test_a_selected_phrase_retyped_replaces_it(page, live_server, agent, screenshots):
    record = memory(agent, "She takes her tea without sugar.")
    log_in(page, live_server, UserFactory(is_staff=True))
    page.goto(f"{live_server.url}/a/rockbot/memory/{record.pk}/")

    select_text(page, "#record-text", "tea without sugar")
    assert page.input_value("#old_string") == "tea without sugar"
    page.wait_for_selector("#edit-result [data-status=hint]")
    assert "takes the place of the selected phrase" in page.inner_text("#edit-result")
    # Typed as a person types, Shift included, straight after the selection.
    page.keyboard.type("Coffee with oat milk")
    assert page.input_value("#new_string") == "Coffee with oat milk"
    page.wait_for_selector(".preview [data-apply]:not([disabled])")
    assert page.inner_text(".preview ins") == "Coffee with oat milk"
    screenshots(page, "phrase-retyped.png", readme=False)
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".badge.version:has-text('version 2')")

    record.refresh_from_db()
    assert record.content == "She takes her Coffee with oat milk."


def test_ctrl_enter_applies_a_preview_the_moment_it_shows(page, live_server, agent):
    """A key pressed as soon as the preview shows applies it, though htmx wires the preview's
    buttons only when the swap settles (held back here to make that moment last)."""
    record = memory(agent, "She takes her tea without sugar.")
    log_in(page, live_server, UserFactory(is_staff=True))
    page.goto(f"{live_server.url}/a/rockbot/memory/{record.pk}/")
    page.evaluate("htmx.config.defaultSettleDelay = 60000")

    page.fill("#old_string", "without sugar")
    page.fill("#new_string", "with honey")
    page.focus("#new_string")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".preview [data-apply]")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".badge.version:has-text('version 2')", timeout=10_000)

    record.refresh_from_db()
    assert record.content == "She takes her tea with honey."


def test_the_rules_page_writes_nothing_until_the_first_rule(page, live_server, agent, screenshots):
    log_in(page, live_server, UserFactory(is_staff=True))
    page.click("nav.agent-nav >> text=Rules")
    page.wait_for_selector(
        "text=No rules document yet: nothing is stored until the first change to it."
    )
    screenshots(page, "rules-empty.png", readme=False)
    assert not RulesDocument.objects.exists()
    assert not Revision.objects.exists()
    page.goto(f"{live_server.url}/a/rockbot/")
    assert page.inner_text(".tile[href$='/rules/'] .tile-number") == "0"

    page.goto(f"{live_server.url}/a/rockbot/rules/")
    page.fill("#new-rule", "Answer in French.")
    page.click(".add-rule button[type=submit]")
    page.wait_for_selector("#rule-result-new .preview [data-apply]")
    assert not RulesDocument.objects.exists()  # a preview writes nothing either
    page.click("#rule-result-new .preview [data-apply]")
    page.wait_for_selector(".badge.version:has-text('version 2')")
    screenshots(page, "rules-first-rule.png", readme=False)

    assert RulesDocument.objects.get(agent=agent).content == "- Answer in French.\n"
    page.goto(f"{live_server.url}/a/rockbot/")
    assert page.inner_text(".tile[href$='/rules/'] .tile-number") == "1"


def test_a_new_administrator_reaches_a_first_agent_and_its_token(page, live_server, screenshots):
    log_in(page, live_server, UserFactory(is_staff=True, username="admin"))
    page.wait_for_selector("text=No agents yet.")
    screenshots(page, "home-no-agents.png", readme=False)
    page.click("text=New agent")
    page.fill("#id_name", "RockBot")
    page.fill("#id_description", "Home assistant for the Martin family.")
    screenshots(page, "agent-new.png", readme=False)
    page.click("button:has-text('Create agent')")

    page.wait_for_selector("text=RockBot is ready. Create its first token below")
    assert page.url == f"{live_server.url}/a/rockbot/tokens/"
    page.fill("#token-name", "first")
    page.click("button:has-text('Create token')")
    secret = page.wait_for_selector("#new-token").input_value()
    screenshots(page, "agent-first-token.png", readme=False)
    assert Agent.objects.get(name="rockbot").tokens.get().prefix in secret


def test_a_refusal_is_the_apps_own_page(page, live_server, screenshots):
    log_in(page, live_server, UserFactory(is_staff=True))  # without the admin's permissions
    page.goto(f"{live_server.url}/admin/stores/agent/add/")
    page.wait_for_selector("h1:has-text('Not allowed')")
    screenshots(page, "forbidden.png", readme=False)
    assert page.locator(".topbar").is_visible()  # the app's layout, not a bare "403 Forbidden"


def test_a_stale_preview_says_so_and_previews_again(
    page, browser, live_server, agent, screenshots, quick_live_poll
):
    record = memory(agent, "The user lives in Paris and likes tea in the morning.")
    detail = f"{live_server.url}/a/rockbot/memory/{record.pk}/"
    log_in(page, live_server, UserFactory(is_staff=True, username="second"))
    page.goto(detail)
    page.fill("#old_string", "likes tea")
    page.fill("#new_string", "likes mint tea")
    page.wait_for_selector(".preview [data-apply]:has-text('Apply as version 2')")

    edit_in_another_session(
        browser, live_server, detail, "first", "lives in Paris", "lives in Lyon"
    )

    page.wait_for_selector("#live-notice[role=alert]", timeout=15_000)
    stale = page.wait_for_selector(".preview [data-stale]")
    assert "made from version 1; the record is now at version 2" in stale.inner_text()
    assert not page.is_visible(".preview [data-apply]")
    assert "just now" in page.inner_text("#live-notice")
    screenshots(page, "stale-preview.png", readme=False)

    page.click("text=Preview again on the current text")
    page.wait_for_selector("#edit-result .conflict")
    # One banner: the conflict says what the live notice said, and the notice steps back.
    assert page.locator("[role=alert]").count() == 1
    assert page.inner_text("#live-notice") == ""
    screenshots(page, "stale-repreviewed.png", readme=False)
    page.click(".conflict [data-apply]:has-text('Re-apply on version 2')")
    page.wait_for_selector(".badge.version:has-text('version 3')")
    record.refresh_from_db()
    assert record.content == "The user lives in Lyon and likes mint tea in the morning."


def test_a_write_answered_slowly_is_not_reported_as_someone_elses_change(
    page, live_server, agent, quick_live_poll
):
    """The page's poll asks between the write's commit and its answer: it must not tell the
    person their own edit was made by someone while they had the record open."""
    record = memory(agent, "The user likes tea in the morning.")
    log_in(page, live_server, UserFactory(is_staff=True))
    page.goto(f"{live_server.url}/a/rockbot/memory/{record.pk}/")

    def answer_late(route):
        answer = route.fetch()
        time.sleep(2.5)  # two polls' worth
        route.fulfill(response=answer)

    page.route(f"**/memory/{record.pk}/ops/edit/", answer_late)
    page.fill("#old_string", "likes tea")
    page.fill("#new_string", "likes mint tea")
    page.click(".preview [data-apply]:has-text('Apply as version 2')")
    page.wait_for_selector(".badge.version:has-text('version 2')")
    assert page.locator("#live-notice[role=alert], .preview [data-stale]").count() == 0
    page.wait_for_timeout(1500)  # the next poll asks from version 2 and hears nothing new
    assert page.locator("#live-notice[role=alert]").count() == 0
    record.refresh_from_db()
    assert record.content == "The user likes mint tea in the morning."


def test_the_navigation_fits_a_laptop_and_the_admin_names_read_right(
    page, live_server, agent, screenshots
):
    page.set_viewport_size({"width": 1280, "height": 800})
    log_in(page, live_server, UserFactory(is_staff=True, is_superuser=True))
    page.wait_for_selector("nav.agent-nav")
    screenshots(page, "nav-1280.png", full_page=False, readme=False)
    tops = page.eval_on_selector_all(
        "nav.agent-nav a",
        "links => links.map(link => Math.round(link.getBoundingClientRect().top))",
    )
    assert len(tops) == 13 and len(set(tops)) == 1, tops  # Webhooks too, on the one line

    page.goto(f"{live_server.url}/admin/")
    admin_index = page.inner_text("#content-main")
    assert "Memories" in admin_index and "Agent access grants" in admin_index
    assert "Memorys" not in admin_index and "accesss" not in admin_index
