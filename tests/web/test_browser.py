"""The web UI in a real browser: headless Chromium (Debian's) driven by pytest-playwright.

Covers what only a browser shows: htmx swaps (including 4xx refusals), the selection-to-phrase
script, keyboard shortcuts, a conflict between two sessions, a change announced live to a second
session, and that stored XSS stays inert.
Screenshots are taken only when MEMORYADMIN_UPDATE_SCREENSHOTS=1 (e.g.
`MEMORYADMIN_UPDATE_SCREENSHOTS=1 bin/test tests/web/test_browser.py`): the README's into
docs/screenshots/, the others into var/screenshots/ (ignored by git) to look at; a plain run
takes none and leaves the tree as it was.
"""

from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from stores.engine.actors import Actor
from stores.engine.documents import rules_document
from stores.models import Memory, Revision
from stores.services import record_create, record_edit, record_replace
from tests.factories import AgentFactory, SubjectFactory, UserFactory, agent_token
from tests.web.conftest import BROWSER_TEST

PASSWORD = "correct horse battery staple"

pytestmark = BROWSER_TEST

# Playwright's sync API runs an event loop in this thread; Django's ORM calls made here by the
# test itself are still synchronous and safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture
def maintainer():
    return Actor.maintainer("seed")


@pytest.fixture
def rockbot(maintainer):
    agent = AgentFactory(
        name="rockbot",
        display_name="RockBot",
        description="Home assistant for the Martin family.",
    )
    ana = SubjectFactory(agent=agent, display_name="Ana Martin", external_id="ana")
    for content, extra in [
        ("The user lives in Paris and likes tea in the morning.", {"category": "profile"}),
        ("Ana prefers short answers in French.", {"subject": ana, "category": "preferences"}),
        ("Met Ana at the bakery on Monday.", {"store": "episodic", "category": "events"}),
        ("Ana's birthday is on 12 May.", {"store": "fact", "subject": ana, "category": "dates"}),
        ("The garage door code changed in March.", {"category": "home", "tags": ["security"]}),
    ]:
        record_create(
            surface_key="memory",
            agent=agent,
            actor=maintainer,
            values={"content": content, **extra},
        )
    record_create(
        surface_key="skill",
        agent=agent,
        actor=maintainer,
        values={
            "name": "water-plants",
            "summary": "How to water the plants.",
            "content": "# Water plants\n\n## Steps\n- Check the soil.\n- Water the ferns.\n",
        },
    )
    return agent


def log_in(page, live_server, user) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_selector(".topbar .who")


def select_text(page, selector: str, phrase: str) -> None:
    """Select `phrase` inside the element as a person would with the mouse, then release it."""
    page.evaluate(
        """([selector, phrase]) => {
            const element = document.querySelector(selector);
            const node = element.firstChild;
            const start = node.textContent.indexOf(phrase);
            const range = document.createRange();
            range.setStart(node, start);
            range.setEnd(node, start + phrase.length);
            const selection = window.getSelection();
            selection.removeAllRanges();
            selection.addRange(range);
        }""",
        [selector, phrase],
    )
    page.dispatch_event(selector, "mouseup")


def edit_in_another_session(browser, live_server, detail: str, who: str, old: str, new: str):
    """Someone else, logged in elsewhere, edits the record at `detail` (to version 2)."""
    context = browser.new_context()
    other = context.new_page()
    log_in(other, live_server, UserFactory(is_staff=True, username=who))
    other.goto(detail)
    other.fill("#old_string", old)
    other.fill("#new_string", new)
    other.click(".preview [data-apply]")
    other.wait_for_selector(".badge.version:has-text('version 2')")
    context.close()


def test_log_in_search_select_preview_apply(page, live_server, rockbot, screenshots):
    agent_actor = Actor.for_token(agent_token(rockbot)[0])
    record_edit(
        surface_key="memory",
        agent=rockbot,
        ref=Memory.objects.get(content__startswith="The garage").pk,
        actor=agent_actor,
        old_string="March",
        new_string="April",
    )
    user = UserFactory(is_staff=True, username="reviewer")
    log_in(page, live_server, user)
    # The only agent's dashboard is the home page.
    page.wait_for_selector("text=Recent changes")
    screenshots(page, "dashboard.png")

    page.click("nav.agent-nav >> text=Memories")
    page.wait_for_selector("table.records")
    page.fill("#q", "Paris")
    expect(page.locator("table.records tbody tr")).to_have_count(1)
    assert "q=Paris" in page.url
    page.click("table.records tbody a >> nth=1")
    page.wait_for_selector("#record-text")

    select_text(page, "#record-text", "Paris")
    assert page.input_value("#old_string") == "Paris"
    page.fill("#new_string", "Lyon")
    page.wait_for_selector(".preview ins")
    assert page.inner_text(".preview ins") == "Lyon"
    assert page.inner_text(".preview del") == "Paris"
    assert Memory.objects.get(content__contains="Paris").version == 1  # nothing written yet
    screenshots(page, "detail-diff-preview.png")

    page.focus("#new_string")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".badge.version:has-text('version 2')")
    assert "Lyon" in page.inner_text("#record-text")
    memory = Memory.objects.get(content__contains="Lyon")
    assert memory.version == 2
    assert Revision.objects.get(record_id=memory.pk, version_after=2).actor == "user:reviewer"


def test_no_match_is_shown_inline(page, live_server, rockbot):
    log_in(page, live_server, UserFactory(is_staff=True))
    memory = Memory.objects.get(content__contains="Paris")
    page.goto(f"{live_server.url}/a/rockbot/memory/{memory.pk}/")
    page.fill("#old_string", "lives in Pariss")
    page.fill("#new_string", "lives in Lyon")
    refusal = page.wait_for_selector("#edit-result [data-status=no_match]")
    assert "The closest text is on line 1" in refusal.inner_text()


def test_a_phrase_selected_across_a_direction_marker_keeps_the_character(
    page, live_server, rockbot, maintainer
):
    """A direction control is shown as a marker (⟨U+202E⟩); selecting across it must copy
    the character itself, or the phrase would never match the stored text."""
    created = record_create(
        surface_key="memory",
        agent=rockbot,
        actor=maintainer,
        values={"content": "Pay the invoice\u202etxt.exe by Friday."},
    )
    log_in(page, live_server, UserFactory(is_staff=True))
    page.goto(f"{live_server.url}/a/rockbot/memory/{created.id}/")
    assert page.inner_text("#record-text .bidi") == "⟨U+202E⟩"
    page.evaluate(
        """() => {
            const marker = document.querySelector("#record-text .bidi");
            const range = document.createRange();
            range.setStart(marker.previousSibling, "Pay the ".length);
            range.setEnd(marker.nextSibling, "txt".length);
            const selection = window.getSelection();
            selection.removeAllRanges();
            selection.addRange(range);
        }"""
    )
    page.dispatch_event("#record-text", "mouseup")
    assert page.input_value("#old_string") == "invoice\u202etxt"
    page.fill("#new_string", "invoice.txt")
    page.wait_for_selector(".preview [data-apply]")  # the phrase matched the stored text
    assert "⟨U+202E⟩" in page.inner_text(".preview del")


def test_conflict_from_a_second_session_is_resolved(page, browser, live_server, rockbot):
    memory = Memory.objects.get(content__contains="Paris")
    detail = f"{live_server.url}/a/rockbot/memory/{memory.pk}/"
    log_in(page, live_server, UserFactory(is_staff=True, username="first"))
    page.goto(detail)
    page.fill("#old_string", "lives in Paris")
    page.fill("#new_string", "lives in Lyon")
    page.wait_for_selector(".preview [data-apply]")

    edit_in_another_session(browser, live_server, detail, "second", "likes tea", "likes coffee")

    # Ctrl+Enter applies the preview, or, once the live notice has retired it as stale,
    # previews again: the conflict panel either way.
    page.focus("#new_string")
    page.keyboard.press("Control+Enter")
    conflict = page.wait_for_selector("#edit-result .conflict")
    text = conflict.inner_text()
    assert "you loaded version 1, it is now at version 2" in text
    assert "user:second" in text
    assert page.inner_text(".conflict .diff >> nth=0").count("coffee") == 1
    page.click(".conflict [data-apply]")
    page.wait_for_selector(".badge.version:has-text('version 3')")
    memory.refresh_from_db()
    assert memory.content == "The user lives in Lyon and likes coffee in the morning."


def test_a_second_session_sees_the_first_ones_change_before_applying(
    page, browser, live_server, rockbot, screenshots, quick_live_poll
):
    memory = Memory.objects.get(content__contains="Paris")
    detail = f"{live_server.url}/a/rockbot/memory/{memory.pk}/"
    log_in(page, live_server, UserFactory(is_staff=True, username="second"))
    page.goto(detail)
    page.fill("#old_string", "likes tea")
    page.fill("#new_string", "likes mint tea")
    page.wait_for_selector(".preview [data-apply]")  # a change of its own, not yet applied

    edit_in_another_session(
        browser, live_server, detail, "first", "lives in Paris", "lives in Lyon"
    )

    notice = page.wait_for_selector("#live-notice[role=alert]", timeout=15_000)
    text = notice.inner_text()
    assert "This record changed while you had it open" in text
    assert "You loaded version 1; it is now at version 2" in text
    assert "user:first" in text
    assert page.inner_text("#live-notice ins") == "Lyon"
    assert page.inner_text("#live-notice del") == "Paris"
    # Announced before anything was applied: the second session's preview, made from version
    # 1, says it is stale instead of offering to apply.
    assert page.is_visible(".preview [data-stale]")
    assert not page.is_visible(".preview [data-apply]")
    memory.refresh_from_db()
    assert memory.version == 2 and "mint" not in memory.content
    screenshots(page, "detail-live-notice.png")


def test_the_dashboard_announces_a_change_made_elsewhere(
    page, live_server, rockbot, quick_live_poll
):
    log_in(page, live_server, UserFactory(is_staff=True, username="watcher"))
    page.wait_for_selector("text=Recent changes")
    memory = Memory.objects.get(content__contains="Paris")
    record_edit(
        surface_key="memory",
        agent=rockbot,
        ref=memory.pk,
        actor=Actor.for_token(agent_token(rockbot)[0]),
        old_string="Paris",
        new_string="Lyon",
    )
    banner = page.wait_for_selector("[data-new-changes]", timeout=15_000)
    assert "1 new change" in banner.inner_text()
    assert f"memory {memory.pk}" in banner.inner_text()


def test_revert_from_history(page, live_server, rockbot, maintainer, screenshots):
    memory = Memory.objects.get(content__contains="Paris")
    agent_actor = Actor.for_token(agent_token(rockbot)[0])
    record_edit(
        surface_key="memory",
        agent=rockbot,
        ref=memory.pk,
        actor=agent_actor,
        old_string="likes tea in the morning",
        new_string="likes strong coffee at night",
    )
    record_edit(
        surface_key="memory",
        agent=rockbot,
        ref=memory.pk,
        actor=maintainer,
        old_string="Paris",
        new_string="Paris (15th arrondissement)",
    )
    log_in(page, live_server, UserFactory(is_staff=True))
    page.goto(f"{live_server.url}/a/rockbot/memory/{memory.pk}/history/")
    page.wait_for_selector(".timeline .rev")
    screenshots(page, "history.png")

    page.click(".rev[data-version='1'] >> text=Restore this version (v1)")
    # The whole record as the revert would leave it, from the service's dry run.
    page.wait_for_selector("#revert-result .preview ins")
    assert "tea in the morning" in page.inner_text("#revert-result .preview ins")
    memory.refresh_from_db()
    assert memory.version == 3
    page.click("#revert-result [data-apply]")
    page.wait_for_selector("#timeline .flash[data-status=reverted]")
    memory.refresh_from_db()
    # The whole record goes back to version 1, as a new revision (version 4).
    assert memory.version == 4
    assert memory.content == "The user lives in Paris and likes tea in the morning."
    assert page.locator(".timeline .rev").count() == 4


def test_approve_and_revert_from_the_review_queue(page, live_server, rockbot):
    rockbot.review_mode = "all"
    rockbot.save()
    agent_actor = Actor.for_token(agent_token(rockbot)[0])
    edits = [
        ("Paris", "Berlin"),
        ("short answers", "long answers"),
    ]
    for old, new in edits:
        target = Memory.objects.get(content__contains=old)
        assert record_edit(
            surface_key="memory",
            agent=rockbot,
            ref=target.pk,
            actor=agent_actor,
            old_string=old,
            new_string=new,
        ).ok
    log_in(page, live_server, UserFactory(is_staff=True))
    page.goto(f"{live_server.url}/a/rockbot/review/")
    page.wait_for_selector(".review-list .rev")
    assert page.locator(".review-list .rev").count() == 2
    first = page.locator(".review-list .rev").first
    first.locator("button[value=approve]").click()
    page.wait_for_selector("#queue [data-status=review]:has-text('1 done')")
    assert page.locator(".review-list .rev").count() == 1
    page.check("[data-select-all=revisions]")
    page.click("#review-form button[value=revert]")
    page.wait_for_selector("text=Nothing awaits review.")
    assert Memory.objects.filter(content__contains="Berlin").exists()
    assert Memory.objects.filter(content__contains="short answers").exists()


PAYLOADS = [
    "<script>window.__pwned = 'script'; fetch('/xss-script')</script>",
    "<img src=x onerror=\"window.__pwned = 'img'; fetch('/xss-img')\">",
    '<div hx-get="/xss-hx-get" hx-trigger="load">hx-get</div>',
    "<button hx-on:click=\"window.__pwned = 'hx-on'\" "
    "hx-on::load=\"fetch('/xss-hx-on')\">b</button>",
    "<a href=\"javascript:window.__pwned='link'\">click me</a>",
    "[markdown link](javascript:window.__pwned='md')",
    '<iframe src="http://evil.example/frame"></iframe><img src="http://evil.example/pixel.png">',
]
HOSTILE = "Hostile note: " + " ".join(PAYLOADS)


def test_stored_xss_stays_inert_everywhere(page, live_server, rockbot, maintainer):
    memory = record_create(
        surface_key="memory", agent=rockbot, actor=maintainer, values={"content": HOSTILE}
    ).record
    rockbot.review_mode = "all"
    rockbot.save()
    agent_actor = Actor.for_token(agent_token(rockbot)[0])
    record_edit(
        surface_key="memory",
        agent=rockbot,
        ref=memory.pk,
        actor=agent_actor,
        old_string="Hostile note:",
        new_string="Hostile note " + PAYLOADS[1],
    )
    skill = record_create(
        surface_key="skill",
        agent=rockbot,
        actor=maintainer,
        values={
            "name": "hostile",
            "summary": PAYLOADS[0],
            "content": "# Hostile\n\n## Raw HTML\n" + "\n\n".join(PAYLOADS) + "\n",
        },
    ).record
    rules = rules_document(agent=rockbot, actor=maintainer)
    record_replace(
        surface_key="rules",
        agent=rockbot,
        ref=rules.pk,
        actor=maintainer,
        text="# Rules\n" + "".join(f"- {p}\n" for p in PAYLOADS),
        expected_version=rules.version,
    )

    requests: list[str] = []
    dialogs: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    log_in(page, live_server, UserFactory(is_staff=True))
    base = f"{live_server.url}/a/rockbot"
    pages = [
        f"{base}/",
        f"{base}/memory/",
        f"{base}/memory/?q=Hostile",
        f"{base}/memory/{memory.pk}/",
        f"{base}/memory/{memory.pk}/history/",
        f"{base}/skill/",
        f"{base}/skill/{skill.pk}/",
        f"{base}/rules/",
        f"{base}/review/",
        f"{base}/changes/",
    ]
    for url in pages:
        page.goto(url)
        page.wait_for_load_state("networkidle")
    # A diff preview whose both sides hold the payloads, swapped in by htmx.
    page.goto(f"{base}/memory/{memory.pk}/")
    page.fill("#old_string", "click me")
    page.fill("#new_string", PAYLOADS[2] + PAYLOADS[0])
    page.wait_for_selector(".preview ins")
    page.wait_for_load_state("networkidle")
    assert "<script>window.__pwned" in page.inner_text(".preview .diff")  # shown as text

    assert page.evaluate("window.__pwned") is None
    assert dialogs == []
    origin = live_server.url
    foreign = [url for url in requests if not url.startswith(origin)]
    assert foreign == []
    assert not [url for url in requests if re.search(r"/xss-|evil\.example", url)]
    # Every request went to a page we opened, a static file or an htmx endpoint we used.
    allowed = re.compile(rf"^{re.escape(origin)}/(static/|accounts/login/|a/rockbot/|$)")
    assert [url for url in requests if not allowed.match(url)] == []
    # The markdown was rendered (headings), yet none of its HTML became elements.
    page.goto(f"{base}/skill/{skill.pk}/")
    assert page.locator(".markdown h2").inner_text() == "Raw HTML"
    assert (
        page.locator(".markdown script, .markdown img, .markdown iframe, .markdown button").count()
        == 0
    )
    assert page.locator(".markdown a[href^=javascript]").count() == 0


def test_section_and_rule_ops_preview_then_confirm(
    page, live_server, rockbot, maintainer, screenshots
):
    """A section replace and a rule rewrite show their diff first; nothing is written until
    the preview's button applies them."""
    from stores.models import RulesDocument, Skill

    skill = Skill.objects.get(agent=rockbot, name="water-plants")
    rules = rules_document(agent=rockbot, actor=maintainer)
    record_replace(
        surface_key="rules",
        agent=rockbot,
        ref=rules.pk,
        actor=maintainer,
        text="# Rules\n\n- Answer in the user's language.\n- Never share the door code.\n",
        expected_version=rules.version,
    )
    log_in(page, live_server, UserFactory(is_staff=True))

    page.goto(f"{live_server.url}/a/rockbot/skill/{skill.pk}/")
    page.select_option("#section-heading", "Steps")
    page.fill("#section-content", "- Check the soil.\n- Water the ferns on Sundays.")
    page.click("text=Preview: replace the section's body")
    page.wait_for_selector("#section-result .preview ins")
    assert "on Sundays" in page.inner_text("#section-result .preview ins")
    assert Skill.objects.get(pk=skill.pk).version == 1  # nothing written yet
    page.locator("#section-result").scroll_into_view_if_needed()
    screenshots(page, "section-preview.png")
    page.click("#section-result [data-apply]")
    page.wait_for_selector(".badge.version:has-text('version 2')")
    assert "on Sundays" in Skill.objects.get(pk=skill.pk).content

    page.goto(f"{live_server.url}/a/rockbot/rules/")
    page.click("li:has-text('Never share') summary")
    page.fill("#rule-2", "Never share the door code, not even with family.")
    page.click("#rule-result-2 >> xpath=.. >> text=Preview the new text")
    page.wait_for_selector("#rule-result-2 .preview ins")
    assert RulesDocument.objects.get(pk=rules.pk).version == 2
    screenshots(page, "rule-preview.png")
    page.click("#rule-result-2 [data-apply]")
    page.wait_for_selector(".badge.version:has-text('version 3')")
    assert "not even with family" in RulesDocument.objects.get(pk=rules.pk).content

    # Ctrl+Enter previews a new rule, then applies what the preview showed.
    page.fill("#new-rule", "Ask before ordering anything.")
    page.focus("#new-rule")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#rule-result-new .preview ins")
    assert RulesDocument.objects.get(pk=rules.pk).version == 3
    page.focus("#new-rule")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".badge.version:has-text('version 4')")
    assert "Ask before ordering" in RulesDocument.objects.get(pk=rules.pk).content
