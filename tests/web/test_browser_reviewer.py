"""The reviewer's pages in headless Chromium: change rows that open to their diff,
lists that mark matches and create records, the API docs under the CSP, a phone's layout,
and swaps that break no policy. Screenshots go to docs/screenshots/ only when asked
(MEMORYADMIN_UPDATE_SCREENSHOTS=1, see test_browser.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from stores.engine.actors import Actor
from stores.models import Memory, Revision
from stores.services import record_create, record_edit
from tests.factories import AgentFactory, SubjectFactory, UserFactory, agent_token
from tests.web.conftest import CHROMIUM
from tests.web.test_browser import log_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"
    ),
]

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

PHONE = {"width": 390, "height": 844}
# Every Content-Security-Policy violation of the page, as the browser reports it.
WATCH_CSP = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  const { violatedDirective, blockedURI, sourceFile } = event;
  window.cspViolations.push(`${violatedDirective} ${blockedURI} from ${sourceFile}`);
});
"""


@pytest.fixture
def household():
    agent = AgentFactory(name="rockbot", display_name="RockBot")
    ana = SubjectFactory(agent=agent, display_name="Ana Martin", external_id="ana")
    seed = Actor.maintainer("seed")
    for content, extra in [
        ("The user lives in Paris and likes tea in the morning.", {"category": "profile"}),
        ("Ana prefers short answers in French.", {"subject": ana, "category": "preferences"}),
        ("Met Ana at the bakery near the Paris office on Monday.", {"store": "episodic"}),
        ("Ana's birthday is on 12 May.", {"store": "fact", "subject": ana}),
        (
            "The garage door code changed in March; the new code is with Ana, and the "
            "spare key hangs in the shed behind the bicycles, next to the garden tools.",
            {"category": "home", "tags": ["security", "house"]},
        ),
    ]:
        record_create(
            surface_key="memory", agent=agent, actor=seed, values={"content": content, **extra}
        )
    garage = Memory.objects.get(content__startswith="The garage")
    record_edit(
        surface_key="memory",
        agent=agent,
        ref=garage.pk,
        actor=Actor.for_token(agent_token(agent)[0]),
        old_string="in March",
        new_string="in April",
    )
    return agent


def signed_in(page, live_server):
    page.add_init_script(WATCH_CSP)
    log_in(page, live_server, UserFactory(is_staff=True, username="reviewer"))
    return page


def csp_violations(page) -> list[str]:
    return page.evaluate("window.cspViolations")


def test_a_change_row_shows_the_text_and_opens_to_its_diff(
    page, live_server, household, screenshots
):
    signed_in(page, live_server)
    page.goto(f"{live_server.url}/a/rockbot/changes/")
    edit = Revision.objects.get(op="edit")
    row = page.locator("tr", has=page.locator(f"details[hx-get$='/changes/{edit.pk}/']"))

    expect(row.locator("summary")).to_contain_text("The garage door code changed in April")
    expect(row.locator("time")).to_have_text("just now")
    assert row.locator("time").get_attribute("title").endswith("UTC")
    row.locator("summary").click()
    expect(row.locator(".change-detail del")).to_have_text("March")
    expect(row.locator(".change-detail ins")).to_have_text("April")
    screenshots(page, "changes-row-opened.png")

    page.goto(f"{live_server.url}/a/rockbot/")
    dashboard_row = page.locator("section:has(h2:text-is('Recent changes')) tbody tr").first
    dashboard_row.locator("summary").click()
    expect(dashboard_row.locator(".change-detail ins")).to_have_text("April")
    assert csp_violations(page) == []


def test_a_search_marks_its_matches_and_sorts_read_in_words(
    page, live_server, household, screenshots
):
    signed_in(page, live_server)
    page.goto(f"{live_server.url}/a/rockbot/memory/")
    expect(page.locator(".count")).to_have_text("5 memories")

    page.fill("#q", "paris office")

    expect(page.locator("table.records mark").first).to_be_visible()
    marked = page.locator("table.records mark").all_inner_texts()
    assert "Paris office" in marked  # the whole query, where it occurs
    sorts = page.locator("select[name=sort] option").all_inner_texts()
    assert sorts[:3] == [
        "Best match (without a search: recently updated)",
        "Best match",
        "Recently updated",
    ]
    assert page.locator("select[name=sort] option:checked").inner_text().startswith("Best match")
    screenshots(page, "list-search-marked.png")


def test_a_memory_is_created_from_its_list(page, live_server, household, screenshots):
    signed_in(page, live_server)
    page.goto(f"{live_server.url}/a/rockbot/memory/")
    page.click("text=New memory")
    page.wait_for_selector("form.create-form")

    page.fill("#id_content", "Ana keeps two beehives in the garden.")
    page.select_option("#id_subject", label="Ana Martin")
    page.fill("#id_category", "hobbies")
    page.fill("#id_tags", "bees, garden")
    screenshots(page, "create-memory.png")
    page.click("button[type=submit]:has-text('Create memory')")

    expect(page.locator(".messages")).to_contain_text("(version 1)")
    memory = Memory.objects.get(content__startswith="Ana keeps two beehives")
    assert page.url.endswith(f"/a/rockbot/memory/{memory.pk}/")
    assert (memory.subject.external_id, memory.tags) == ("ana", ["bees", "garden"])
    assert Revision.objects.get(record_id=memory.pk, surface="memory").actor == "user:reviewer"


def test_a_refused_create_says_why_above_the_form(page, live_server, household):
    signed_in(page, live_server)
    page.goto(f"{live_server.url}/a/rockbot/task/new/")
    page.fill("#id_name", "brief")
    page.fill("#id_schedule", "every morning")
    page.fill("#id_directive", "Summarise the news.")

    page.click("button:has-text('Create scheduled task')")

    expect(page.locator("[data-status=invalid]")).to_contain_text("cron expression")
    assert page.input_value("#id_directive") == "Summarise the news."


def test_the_api_docs_list_the_operations_under_the_csp(page, live_server, db, screenshots):
    page.add_init_script(WATCH_CSP)
    page.goto(f"{live_server.url}/api/docs/")

    operations = page.locator(".opblock-summary-path")
    expect(operations.first).to_be_visible(timeout=15000)
    # Swagger UI draws only the operations near the viewport: scroll down through them.
    seen: set[str] = set()
    for _ in range(60):
        seen.update(operations.all_inner_texts())
        if any(path.startswith("/api/v1/memories/") for path in seen) and len(seen) > 20:
            break
        page.mouse.wheel(0, 700)
        page.wait_for_timeout(100)
    assert len(seen) > 20
    assert any(path.startswith("/api/v1/memories/") for path in seen)
    assert csp_violations(page) == []
    screenshots(page, "api-docs.png", full_page=False)


def test_on_a_phone_the_navigation_folds_and_tables_scroll_in_their_box(
    browser, live_server, household, screenshots
):
    context = browser.new_context(viewport=PHONE, device_scale_factor=2)
    page = signed_in(context.new_page(), live_server)
    nav = page.locator("nav.agent-nav")
    toggle = page.locator("[data-nav-toggle]")

    expect(toggle).to_be_visible()
    expect(nav).to_be_hidden()
    screenshots(page, "phone-dashboard.png", full_page=False)
    toggle.click()
    expect(nav).to_be_visible()
    assert toggle.get_attribute("aria-expanded") == "true"
    screenshots(page, "phone-navigation.png", full_page=False)
    nav.locator("text=Memories").click()
    page.wait_for_selector("table.records")

    widths = page.evaluate(
        """() => {
            const table = document.querySelector("table.records");
            return {page: document.documentElement.scrollWidth, view: window.innerWidth,
                    table: table.scrollWidth, box: table.clientWidth};
        }"""
    )
    assert widths["page"] <= widths["view"], widths  # the page itself does not scroll sideways
    assert widths["table"] > widths["box"], widths  # the table does, inside its box
    screenshots(page, "phone-list.png", full_page=False)
    context.close()


def test_a_panel_swap_breaks_no_content_security_policy(page, live_server, household):
    """A textarea the person resized holds an inline style; htmx carried it over to the
    swapped-in element with setAttribute, which the policy blocks and reports."""
    signed_in(page, live_server)
    memory = Memory.objects.get(content__startswith="The user lives in Paris")
    page.goto(f"{live_server.url}/a/rockbot/memory/{memory.pk}/")
    page.evaluate("document.querySelector('#new_string').style.height = '9rem'")  # a resize

    page.fill("#old_string", "Paris")
    page.fill("#new_string", "Lyon")
    page.wait_for_selector(".preview ins")
    page.focus("#new_string")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".badge.version:has-text('version 2')")

    assert csp_violations(page) == []


def test_a_new_token_is_copied_with_its_snippets(
    browser, live_server, household, screenshots, settings, monkeypatch
):
    # The stdio snippet names where the app is installed: an installation's usual place in
    # the screenshot, not this checkout's.
    monkeypatch.setattr(sys, "executable", "/srv/memoryadmin/.venv/bin/python")
    settings.BASE_DIR = Path("/srv/memoryadmin")
    settings.DATA_DIR = Path("/srv/memoryadmin/var")
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page = signed_in(context.new_page(), live_server)
    page.goto(f"{live_server.url}/a/rockbot/tokens/")
    page.fill("#token-name", "laptop")
    page.click("button:has-text('Create token')")
    page.wait_for_selector("[data-status=created]")
    raw = page.input_value("#new-token")

    page.click("[data-copy=new-token]")
    expect(page.locator("[data-copy=new-token]")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == raw
    page.click("[data-copy=snippet-mcp-http]")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert f'"Authorization": "Bearer {raw}"' in copied
    assert f'"url": "{live_server.url}/mcp/"' in copied
    assert '"/srv/memoryadmin/manage.py"' in page.inner_text("#snippet-mcp-stdio")
    screenshots(page, "tokens.png")
    assert csp_violations(page) == []
    context.close()


def test_a_revert_from_the_review_queue_is_previewed_before_it_is_applied(page, live_server):
    agent = AgentFactory(name="rockbot", review_mode="all")
    memory = Memory.objects.get(
        pk=record_create(
            surface_key="memory",
            agent=agent,
            actor=Actor.maintainer("seed"),
            values={"content": "She takes her tea without sugar."},
        ).id
    )
    assert record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=Actor.for_token(agent_token(agent)[0]),
        old_string="tea without sugar",
        new_string="coffee with oat milk",
    ).ok
    page = signed_in(page, live_server)
    page.goto(f"{live_server.url}/a/rockbot/review/")
    page.click(".review-list .rev [data-revert]")
    page.wait_for_selector(".review-list .preview ins")
    # The preview shows the way back, and nothing is written yet.
    assert page.inner_text(".review-list .preview ins") == "tea without sugar"
    memory.refresh_from_db()
    assert (memory.version, memory.content) == (2, "She takes her coffee with oat milk.")
    page.click(".review-list .preview [data-apply]")
    page.wait_for_selector("#queue [data-status=review]:has-text('1 done')")
    assert page.is_visible("text=Nothing awaits review.")
    memory.refresh_from_db()
    assert (memory.version, memory.content) == (3, "She takes her tea without sugar.")
    assert Revision.objects.get(record_id=memory.pk, version_after=2).review == "reverted"
    assert csp_violations(page) == []
