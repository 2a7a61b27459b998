"""The record page and its history in headless Chromium: outcomes in a reviewer's words, a title
to read, undo from the success banner and from the history, a conflict that shows the current
text, the skill form's defaults, and a record created, edited, extended by a line and partly
undone. Screenshots go to docs/screenshots/ only when asked (MEMORYADMIN_UPDATE_SCREENSHOTS=1,
see test_browser.py)."""

from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from stores.engine.actors import Actor
from stores.models import Memory, MemoryFile, Revision, Skill
from stores.services import memory_set_importance, record_create, record_edit
from tests.factories import AgentFactory, UserFactory, agent_token
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

SEED = Actor.maintainer("seed")
NOTES = "Likes tea.\nLives in Lyon.\nWorks nights.\n"
# What a person must not read on the page outside the folded agent message.
AGENT_WORDING = re.compile(r"old_string|new_string|replace_all|\\x[0-9a-f]{2}")


@pytest.fixture
def agent():
    return AgentFactory(name="rockbot", display_name="RockBot")


def memory(agent, content: str, **extra) -> Memory:
    result = record_create(
        surface_key="memory", agent=agent, actor=SEED, values={"content": content, **extra}
    )
    return Memory.objects.get(pk=result.id)


def edit(record: Memory, old: str, new: str, actor: Actor = SEED) -> int:
    result = record_edit(
        surface_key="memory",
        agent=record.agent,
        ref=record.pk,
        actor=actor,
        old_string=old,
        new_string=new,
    )
    assert result.ok, result
    return result.revision


def signed_in(page, live_server):
    log_in(page, live_server, UserFactory(is_staff=True, username="reviewer"))
    return page


def shown_outcome(page, selector: str) -> str:
    """What the person reads of an outcome, without the folded message for agents."""
    return page.evaluate(
        """(selector) => {
            const copy = document.querySelector(selector).cloneNode(true);
            copy.querySelectorAll(".agent-message").forEach((part) => part.remove());
            return copy.innerText;
        }""",
        selector,
    )


# --- outcomes in a reviewer's words -----------------------------------------------


def test_a_near_miss_reads_for_a_person_and_its_text_can_be_used(
    page, live_server, agent, screenshots
):
    record = memory(agent, "Project Falcon\u00a0ships on the 3rd of March.")
    signed_in(page, live_server).goto(f"{live_server.url}/a/rockbot/memory/{record.pk}/")
    page.fill("#old_string", "Project Falcon ships")
    page.fill("#new_string", "Project Falcon launches")

    outcome = page.wait_for_selector("#edit-result .outcome[data-status=no_match]")
    shown = shown_outcome(page, "#edit-result .outcome")
    assert "not in the record exactly as typed" in shown
    assert "non-breaking space" in shown
    assert not AGENT_WORDING.search(shown), shown
    # The NBSP is drawn as a marked sign, and keeps the character for the phrase editor.
    marker = outcome.query_selector(".near-text .invisible")
    assert marker.inner_text() == "⍽"
    assert "NO-BREAK SPACE" in marker.get_attribute("title")
    # The agent's own message is still there, folded away.
    assert "old_string" in page.text_content("#edit-result .agent-message p")
    screenshots(page, "near-miss.png")

    page.click("#edit-result .near-miss >> text=Use this text")
    assert page.input_value("#old_string") == "Project Falcon\u00a0ships on the 3rd of March."
    page.wait_for_selector("#edit-result .preview [data-apply]")
    page.click("#edit-result .preview [data-apply]")
    expect(page.locator("#record-version")).to_have_text("version 2")
    record.refresh_from_db()
    assert record.content == "Project Falcon launches"


def test_an_ambiguous_phrase_lists_each_place_in_words(page, live_server, agent):
    record = memory(agent, "Tea at eight, tea at noon.")
    signed_in(page, live_server).goto(f"{live_server.url}/a/rockbot/memory/{record.pk}/")
    page.fill("#old_string", "at")
    page.fill("#new_string", "by")
    page.wait_for_selector("#edit-result .outcome[data-status=ambiguous]")
    shown = shown_outcome(page, "#edit-result .outcome")
    assert "appears more than once" in shown
    assert "line 1, column 5" in shown and "line 1, column 19" in shown
    assert not AGENT_WORDING.search(shown), shown


# --- the record page's title, undo in the banner, a conflict's header ----------


def test_the_title_reads_the_first_words_and_a_change_is_undone_from_its_banner(
    page, live_server, agent, screenshots
):
    record = memory(agent, "Ana prefers short answers in French, and long ones in Spanish.")
    signed_in(page, live_server).goto(f"{live_server.url}/a/rockbot/memory/{record.pk}/")
    expect(page.locator(".record-head h1")).to_have_text(
        "Ana prefers short answers in French, and long…"
    )
    assert page.title().startswith("Ana prefers short answers")

    page.fill("#old_string", "French")
    page.fill("#new_string", "Portuguese")
    page.click("#edit-result .preview [data-apply]")
    banner = page.locator(".flash[data-status=updated]")
    expect(banner).to_contain_text("Saved. Now version 2.")
    screenshots(page, "banner-undo.png")

    banner.locator("text=Undo this change").click()
    expect(page.locator("#record-version")).to_have_text("version 3")
    record.refresh_from_db()
    assert record.content == "Ana prefers short answers in French, and long ones in Spanish."
    undone = Revision.objects.get(record_id=record.pk, surface="memory", version_after=3)
    assert undone.op == "undo"
    assert (
        undone.reverted_revision
        == Revision.objects.get(record_id=record.pk, surface="memory", version_after=2).pk
    )


def test_during_a_conflict_the_header_shows_the_current_version_and_text(
    page, live_server, agent, screenshots
):
    record = memory(agent, "The user lives in Paris and likes tea in the morning.")
    signed_in(page, live_server).goto(f"{live_server.url}/a/rockbot/memory/{record.pk}/")
    page.fill("#old_string", "lives in Paris")
    page.fill("#new_string", "lives in Lyon")
    page.wait_for_selector(".preview [data-apply]")
    edit(record, "likes tea", "likes coffee")  # another session, meanwhile

    page.click(".preview [data-apply]")
    page.wait_for_selector("#edit-result .conflict")
    expect(page.locator("#record-version")).to_have_text("version 2")
    expect(page.locator("#record-text")).to_contain_text("likes coffee")
    expect(page.locator("#record-title")).to_have_text("The user lives in Paris and likes coffee…")
    assert "likes tea" not in page.inner_text("#record-text")
    screenshots(page, "conflict-header.png")
    page.click(".conflict [data-apply]")
    expect(page.locator("#record-version")).to_have_text("version 3")
    record.refresh_from_db()
    assert record.content == "The user lives in Lyon and likes coffee in the morning."


# --- history: undo one change, formatted fields, what a revert reverted ---------


def test_history_undoes_one_change_keeps_later_ones_and_names_a_clash(
    page, live_server, agent, screenshots
):
    record = memory(agent, NOTES, importance=0.5)
    agent_actor = Actor.for_token(agent_token(agent)[0])
    tea = edit(record, "tea", "mate", actor=agent_actor)
    edit(record, "nights", "days")
    memory_set_importance(agent=agent, ref=record.pk, actor=SEED, importance=0.8)
    signed_in(page, live_server).goto(f"{live_server.url}/a/rockbot/memory/{record.pk}/history/")

    fields = page.inner_text(".rev[data-version='4'] table.fields")
    assert "0.50" in fields and "0.80" in fields
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:", page.inner_text(".timeline")), fields

    tea_change = page.locator(f"#rev-{tea}")
    expect(tea_change.locator("text=Restore this version (v2)")).to_be_visible()
    tea_change.locator("text=Undo this change").click()
    page.wait_for_selector("#revert-result .preview ins")
    assert "tea" in page.inner_text("#revert-result .preview ins")
    page.click("#revert-result [data-apply]")
    page.wait_for_selector("#timeline .flash[data-status=updated]")
    record.refresh_from_db()
    assert record.content == "Likes tea.\nLives in Lyon.\nWorks days.\n"  # "days" stays
    expect(page.locator("#history-version")).to_have_text("now version 5")
    expect(page.locator("#history-title")).to_have_text(
        "History of Likes tea. Lives in Lyon. Works days."
    )
    head = page.locator(".rev[data-version='5'] .rev-head")
    expect(head).to_contain_text("took back v1 → v2")
    assert head.locator("a.reverted-revision").get_attribute("href") == f"#rev-{tea}"

    # Two later edits of the same line: the older one cannot be undone alone.
    lyon = edit(record, "Lyon", "Paris")
    paris = edit(record, "Paris", "Rome")
    page.reload()
    page.locator(f"#rev-{lyon}").locator("text=Undo this change").click()
    clash = page.wait_for_selector("#revert-result .outcome[data-status=conflict]")
    assert f"v6 → v7 (revision {paris})" in clash.inner_text()
    assert "same lines" in clash.inner_text()
    screenshots(page, "history-undo-conflict.png")
    record.refresh_from_db()
    assert record.version == 7

    # A restore names the revision it went back to.
    page.locator(f"#rev-{tea}").locator("text=Restore this version (v2)").click()
    page.click("#revert-result [data-apply]")
    page.wait_for_selector("#timeline .flash[data-status=reverted]")
    expect(page.locator(".rev[data-version='8'] .rev-head")).to_contain_text("went back to v2")
    screenshots(page, "history-restore.png")


# --- the skill form's defaults; a deleted section leaves no blank lines ---------


def test_the_section_form_opens_on_a_real_section_and_a_delete_leaves_no_gap(
    page, live_server, agent, screenshots
):
    created = record_create(
        surface_key="skill",
        agent=agent,
        actor=SEED,
        values={
            "name": "water-plants",
            "summary": "How to water the plants.",
            "content": (
                "# Water plants\n\n## Steps\n\n- Check the soil.\n\n## Notes\n\nTemporary.\n"
            ),
        },
    )
    signed_in(page, live_server).goto(f"{live_server.url}/a/rockbot/skill/{created.id}/")
    assert page.input_value("#section-heading") == "Water plants"
    options = page.locator("#section-heading option").all_inner_texts()
    assert options == ["Water plants", "Steps", "Notes"]
    expect(page.locator("form.append-form")).to_contain_text("Add to the end of the document")
    screenshots(page, "skill-sections.png")

    page.select_option("#section-heading", "Notes")
    page.click("text=Preview: delete the section")
    page.wait_for_selector("#section-result .preview del")
    page.click("#section-result [data-apply]")
    expect(page.locator("#record-version")).to_have_text("version 2")
    skill = Skill.objects.get(pk=created.id)
    assert skill.content == "# Water plants\n\n## Steps\n\n- Check the soil.\n"


# --- create, edit a phrase with a preview, insert a line, undo one change ------


def test_create_edit_insert_a_line_and_undo_one_change(page, live_server, agent, screenshots):
    signed_in(page, live_server).goto(f"{live_server.url}/a/rockbot/file/new/")
    page.fill("#id_path", "/memories/projects/heron.md")
    page.fill("#id_content", "Heron ships in May.\nOwner: Ana.")
    page.click("form.create-form button[type=submit]")
    page.wait_for_selector("#record-text")
    record = MemoryFile.objects.get(path="/memories/projects/heron.md")
    assert page.url.endswith(f"/a/rockbot/file/{record.pk}/")

    page.fill("#old_string", "May")
    page.fill("#new_string", "June")
    page.wait_for_selector("#edit-result .preview ins")
    assert page.inner_text("#edit-result .preview ins") == "June"
    page.click("#edit-result .preview [data-apply]")
    expect(page.locator("#record-version")).to_have_text("version 2")

    page.click("#line-tools summary")
    assert page.input_value("#insert-line") == "2"
    page.fill("#insert-line", "1")
    page.fill("#insert-content", "Budget: 40k.")
    page.click("#insert-form button[type=submit]")
    page.wait_for_selector("#insert-result .preview ins")
    assert "Budget: 40k." in page.inner_text("#insert-result .preview ins")
    record.refresh_from_db()
    assert record.version == 2  # nothing written before the preview is applied
    screenshots(page, "insert-line-preview.png")
    page.click("#insert-result [data-apply]")
    expect(page.locator("#record-version")).to_have_text("version 3")
    record.refresh_from_db()
    assert record.content == "Heron ships in June.\nBudget: 40k.\nOwner: Ana.\n"

    # Undo the phrase edit alone: the inserted line stays.
    edited = Revision.objects.get(record_id=record.pk, surface="file", version_after=2)
    page.click("text=History")
    page.locator(f"#rev-{edited.pk}").locator("text=Undo this change").click()
    page.click("#revert-result [data-apply]")
    page.wait_for_selector("#timeline .flash[data-status=updated]")
    record.refresh_from_db()
    assert record.content == "Heron ships in May.\nBudget: 40k.\nOwner: Ana.\n"
    assert record.version == 4


def test_prepend_previews_then_puts_the_text_first(page, live_server, agent):
    record = memory(agent, NOTES)
    signed_in(page, live_server).goto(f"{live_server.url}/a/rockbot/memory/{record.pk}/")
    page.click("#line-tools summary")
    page.fill("#prepend-content", "Name: Ana.")
    page.click("#prepend-form button[type=submit]")
    page.wait_for_selector("#prepend-result .preview ins")
    page.click("#prepend-result [data-apply]")
    expect(page.locator("#record-version")).to_have_text("version 2")
    record.refresh_from_db()
    assert record.content == "Name: Ana.\n" + NOTES


# --- rewrite the whole text, as a person ---------------------------------------------


def test_a_person_rewrites_the_whole_text_from_the_current_one(
    page, live_server, agent, screenshots
):
    """Regression: the form was the API's (a single line, empty, "expected_version or
    If-Match", ids shared with other forms), so a person could only retype a text blind."""
    long_notes = "".join(f"Line {n}: the user keeps notes on every trip.\n" for n in range(20))
    record = memory(agent, long_notes)
    signed_in(page, live_server)
    page.goto(f"{live_server.url}/a/rockbot/memory/{record.pk}/")

    page.get_by_text("Rewrite the whole text").click()
    text = page.get_by_label("The whole text", exact=True)
    expect(text).to_have_value(long_notes)
    ids = page.eval_on_selector_all("[id]", "nodes => nodes.map((node) => node.id)")
    assert len(ids) == len(set(ids)), sorted(name for name in ids if ids.count(name) > 1)
    assert "If-Match" not in page.inner_text("#op-replace-content")
    assert page.locator("#op-replace-content input[name=expected_version]").get_attribute(
        "value"
    ) == str(record.version)

    text.fill(long_notes.replace("Line 7: the user keeps notes", "Line 7: the user keeps maps"))
    page.get_by_role("button", name="Preview the new text").click()
    page.wait_for_selector("#replace-content-result .preview ins")
    assert page.inner_text("#replace-content-result .preview ins") == "maps"
    screenshots(page, "replace-whole-text-preview.png", readme=False)
    page.click("#replace-content-result .preview [data-apply]")

    expect(page.locator(".record-text").first).to_contain_text("Line 7: the user keeps maps")
    record.refresh_from_db()
    assert record.version == 2
    assert record.content.endswith("Line 19: the user keeps notes on every trip.\n")
    assert "Line 7: the user keeps maps" in record.content
