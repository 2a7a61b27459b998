"""The suggestions page in headless Chromium: a conflict settled by keeping one, a merge
previewed then made, with no policy broken. Its screenshot goes to docs/screenshots/ only when
asked (MEMORYADMIN_UPDATE_SCREENSHOTS=1, see test_browser.py)."""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from stores.engine.actors import Actor
from stores.models import Memory, Suggestion
from stores.services import record_create
from stores.services.suggestions import suggest_for_agent
from tests.factories import AgentFactory
from tests.web.conftest import CHROMIUM
from tests.web.test_browser_reviewer import csp_violations, signed_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"
    ),
]

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture
def suspects():
    agent = AgentFactory(name="rockbot", display_name="RockBot")
    seed = Actor.maintainer("seed")
    for content in [
        "The user lives in Paris.",
        "The user lives in Lyon.",
        "The user resides in Toronto with two cats.",
        "The user lives in Toronto with two cats.",
        "The user's aunt lives in Dublin.",
        "The user's uncle lives in Dublin.",
    ]:
        record_create(surface_key="memory", agent=agent, actor=seed, values={"content": content})
    suggest_for_agent(agent)
    return agent


def test_a_person_settles_a_conflict_and_a_merge(page, live_server, screenshots, suspects):
    signed_in(page, live_server)
    page.goto(f"{live_server.url}/a/rockbot/")
    expect(page.locator("[data-suggestions-count]")).to_have_text("2")
    page.click("nav.agent-nav a:has-text('Suggestions')")
    conflict = page.locator("li.suggestion[data-kind='conflict']")
    expect(conflict.locator(".reason")).to_have_text("differ only in 'Paris' → 'Lyon'")
    expect(conflict.locator(".diff del")).to_contain_text("Paris")
    expect(page.locator("li.suggestion")).to_have_count(2)  # not the aunt and the uncle
    screenshots(page, "suggestions.png")
    page.keyboard.press("j")
    expect(page.locator("li.suggestion").first).to_be_focused()
    page.keyboard.press("j")
    expect(page.locator("li.suggestion").nth(1)).to_be_focused()

    lyon = Memory.objects.get(content="The user lives in Lyon.")
    conflict.locator(f".side[data-record='{lyon.pk}'] button:has-text('Keep this one')").click()
    expect(page.locator("li.suggestion")).to_have_count(1)
    expect(page.locator("[data-settled] .outcome")).to_have_attribute("data-status", "invalidated")

    duplicate = page.locator("li.suggestion[data-kind='duplicate']")
    duplicate.locator("textarea").fill("The user lives in Toronto with two cats, Miso and Pepper.")
    duplicate.locator("button:has-text('Preview')").click()
    preview = duplicate.locator("[id^=preview-] .suggestion-preview")
    expect(preview).to_have_attribute("data-status", "preview")
    expect(preview.locator(".preview-head")).to_have_text(
        "Preview · nothing has been written; Merge applies it."
    )
    expect(preview.locator(".would-be")).to_have_text(
        "The user lives in Toronto with two cats, Miso and Pepper."
    )
    expect(preview.locator(".diff ins").last).to_have_text(", Miso and Pepper")
    expect(preview).not_to_contain_text("Saved")
    expect(duplicate.locator("[id^=preview-] .outcome")).to_have_count(0)
    screenshots(page, "suggestions-preview.png", readme=False)
    assert Suggestion.objects.filter(status="open").count() == 1
    duplicate.locator("button.primary:has-text('Merge')").last.click()
    expect(page.locator("li.empty")).to_have_text("Nothing to settle.")
    kept = Memory.objects.get(content__startswith="The user lives in Toronto with two cats,")
    assert kept.reinforcement_count == 2
    assert Memory.objects.filter(superseded_by=kept).count() == 1
    assert csp_violations(page) == []


def test_the_dashboard_counts_what_waits_and_leads_to_it(page, live_server, screenshots, suspects):
    signed_in(page, live_server)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{live_server.url}/a/rockbot/")
    card = page.locator("[data-status='suggestions']")
    expect(card.locator("h2 .badge")).to_have_text("2")
    expect(card.locator("li")).to_have_text(["1 duplicate", "1 conflict"])
    expect(page.locator("[data-suggestions-count]")).to_have_text("2")
    card.scroll_into_view_if_needed()
    screenshots(page, "dashboard-1280.png", readme=False)

    card.locator("a:has-text('1 conflict')").click()
    expect(page.locator("li.suggestion")).to_have_count(1)
    expect(page.locator("li.suggestion")).to_have_attribute("data-kind", "conflict")
    page.go_back()
    card.locator("a.button:has-text('Open the suggestions')").click()
    expect(page.locator("li.suggestion")).to_have_count(2)
    assert csp_violations(page) == []
