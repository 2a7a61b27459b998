"""The record page and its history, as a person reads them (with its
insert and prepend forms): sentences of the page's own, invisible characters
drawn, an undo in the success banner and in the history, a conflict that shows the current
record, formatted field values, and forms whose defaults make sense."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from memoryadmin.web.rendering import field_value
from memoryadmin.web.wording import SENTENCES, sentence
from stores.editing import Status
from stores.engine.actors import Actor
from stores.models import Memory, Revision, Skill
from stores.services import memory_set_importance, record_edit
from tests.web.conftest import htmx

pytestmark = pytest.mark.django_db

ME = Actor.maintainer("tests")
NOTES = "Likes tea.\nLives in Lyon.\nWorks nights.\n"
AGENT_WORDING = re.compile(r"old_string|new_string|replace_all|\\x[0-9a-f]{2}")


def url(name, *args):
    return reverse(f"web:{name}", args=args)


def edit(record, old: str, new: str) -> int:
    result = record_edit(
        surface_key="memory",
        agent=record.agent,
        ref=record.pk,
        actor=ME,
        old_string=old,
        new_string=new,
    )
    assert result.ok, result
    return result.revision


def without_agent_message(body: str) -> str:
    return re.sub(r'<details class="agent-message">.*?</details>', "", body, flags=re.S)


# --- outcomes in a reviewer's words ---


def test_every_status_has_a_sentence_for_a_person():
    assert set(SENTENCES) == set(Status)
    for status in Status:
        assert sentence(status).endswith(".")
        assert not AGENT_WORDING.search(sentence(status))


def test_a_near_miss_is_told_in_the_pages_words_with_the_nbsp_drawn(staff_client, agent, make):
    memory = make.memory(agent, "Project Falcon\u00a0ships on the 3rd of March.")
    response = staff_client.post(
        url("record_preview", agent.name, "memory", memory.pk, "edit"),
        {"old_string": "Project Falcon ships", "new_string": "x", "expected_version": 1},
        headers=htmx(),
    )
    assert response.status_code == 422
    body = response.content.decode()
    shown = without_agent_message(body)
    assert sentence(Status.NO_MATCH) in shown
    assert not AGENT_WORDING.search(shown), shown
    assert 'title="U+00A0 NO-BREAK SPACE" data-char="&#xa0;">⍽</span>' in shown
    # The button hands the stored text itself to the phrase editor.
    assert 'data-use-text="Project Falcon\u00a0ships on the 3rd of March."' in shown
    # The agent's message is kept, folded away.
    assert "old_string" in body.split('class="agent-message"')[1]


def test_an_ambiguous_phrase_lists_each_place(staff_client, agent, make):
    memory = make.memory(agent, "Tea at eight, tea at noon.")
    response = staff_client.post(
        url("record_preview", agent.name, "memory", memory.pk, "edit"),
        {"old_string": "at", "new_string": "by", "expected_version": 1},
        headers=htmx(),
    )
    shown = without_agent_message(response.content.decode())
    assert "line 1, column 5" in shown and "line 1, column 19" in shown
    assert not AGENT_WORDING.search(shown)


# --- the record page's title, undo in the banner, a conflict's header ---


def test_a_memory_is_titled_by_its_first_words(staff_client, agent, make):
    memory = make.memory(agent, "Biscuit is the user's golden retriever, adopted in 2021 in Lyon.")
    body = staff_client.get(url("record_detail", agent.name, "memory", memory.pk)).content.decode()
    assert (
        '<h1 id="record-title" hx-disable>Biscuit is the user&#x27;s golden retriever, adopted in…'
        in body
    )
    assert "<title>Biscuit is the user" in body


def test_the_record_page_shows_no_template_comment(staff_client, agent, make):
    # Django's {# #} ends at the line's end: one spread over two lines is printed as text.
    memory = make.memory(agent, "Likes tea.")
    body = staff_client.get(url("record_detail", agent.name, "memory", memory.pk)).content.decode()
    assert "{#" not in body and "#}" not in body


def test_a_success_banner_offers_to_undo_the_revision_just_made(staff_client, agent, make):
    memory = make.memory(agent, NOTES)
    response = staff_client.post(
        url("record_op", agent.name, "memory", memory.pk, "edit"),
        {"old_string": "tea", "new_string": "mate", "expected_version": 1},
        headers=htmx(),
    )
    body = response.content.decode()
    revision = Revision.objects.get(record_id=memory.pk, surface="memory", version_after=2)
    undo_url = url("record_op", agent.name, "memory", memory.pk, "undo")
    assert f'hx-post="{undo_url}"' in body
    assert f'name="revision_id" value="{revision.pk}"' in body

    undone = staff_client.post(
        undo_url, {"revision_id": revision.pk, "expected_version": 2}, headers=htmx()
    )
    assert undone.headers["HX-Retarget"] == "#record-panel"
    memory.refresh_from_db()
    assert (memory.content, memory.version) == (NOTES, 3)


def test_a_conflict_swaps_in_the_current_version_title_and_text(staff_client, agent, make):
    memory = make.memory(agent, "The user lives in Paris and likes tea.")
    edit(memory, "likes tea", "likes coffee")
    response = staff_client.post(
        url("record_op", agent.name, "memory", memory.pk, "edit"),
        {"old_string": "Paris", "new_string": "Lyon", "expected_version": 1},
        headers=htmx("edit-result"),
    )
    assert response.status_code == 409
    body = response.content.decode()
    assert 'id="record-version" data-version="2" hx-swap-oob="true">version 2<' in body
    text = re.search(r'<pre[^>]*id="record-text"[^>]*hx-swap-oob="true">(.*?)</pre>', body, re.S)
    assert text.group(1) == "The user lives in Paris and likes coffee."
    assert 'id="record-title" hx-disable hx-swap-oob="true">The user lives in Paris and' in body


# --- history: undo one change, formatted fields, what a revert reverted ---


def test_history_offers_undo_beside_restore_and_formats_field_values(staff_client, agent, make):
    memory = make.memory(agent, NOTES, importance=0.5)
    tea = edit(memory, "tea", "mate")
    memory_set_importance(agent=agent, ref=memory.pk, actor=ME, importance=0.8)
    body = staff_client.get(url("record_history", agent.name, "memory", memory.pk)).content.decode()
    entry = body.split(f'id="rev-{tea}"')[1].split("</li>")[0]
    assert "Restore this version (v2)" in entry and "Undo this change" in entry
    assert url("record_preview", agent.name, "memory", memory.pk, "undo") in entry
    fields = body.split("table compact fields")[1].split("</table>")[0]
    assert "<del>0.50</del>" in fields and "<ins>0.80</ins>" in fields
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:", fields), fields


def test_an_undo_from_the_history_answers_with_the_timeline_naming_what_it_took_back(
    staff_client, agent, make
):
    memory = make.memory(agent, NOTES)
    tea = edit(memory, "tea", "mate")
    edit(memory, "nights", "days")
    response = staff_client.post(
        url("record_op", agent.name, "memory", memory.pk, "undo"),
        {"revision_id": tea, "expected_version": 3, "shown_in": "history"},
        headers=htmx("revert-result"),
    )
    assert response.headers["HX-Retarget"] == "#timeline"
    body = response.content.decode()
    assert "took back v1 → v2" in body
    # The page's header follows the write.
    assert 'id="history-version" hx-swap-oob="true">now version 4<' in body
    assert 'id="history-title" hx-disable hx-swap-oob="true">History of Likes tea.' in body
    memory.refresh_from_db()
    assert memory.content == "Likes tea.\nLives in Lyon.\nWorks days.\n"


def test_an_undo_that_later_edits_overlap_names_them_and_is_no_stale_form(
    staff_client, agent, make
):
    memory = make.memory(agent, NOTES)
    lyon = edit(memory, "Lyon", "Paris")
    paris = edit(memory, "Paris", "Rome")
    response = staff_client.post(
        url("record_preview", agent.name, "memory", memory.pk, "undo"),
        {"revision_id": lyon, "expected_version": 3, "shown_in": "history"},
        headers=htmx("revert-result"),
    )
    assert response.status_code == 409
    body = without_agent_message(response.content.decode())
    assert f'href="#rev-{paris}" class="clash-revision">v2 → v3 (revision {paris})</a>' in body
    assert "line 2 of today" in body
    assert "you loaded version" not in body


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0.8, "0.80"),
        (0.3333333, "0.33"),
        ("2026-12-01T11:20:33.123456+00:00", "2026-12-01 11:20 UTC"),
        ("2026-12-01", "2026-12-01"),
        ("2026-12-01 is a date", "2026-12-01 is a date"),
        (None, "—"),
        ([], "—"),
        (["bees", "garden"], "bees, garden"),
        (True, "yes"),
        (3, "3"),
    ],
)
def test_a_field_value_reads_as_a_person_reads_it(value, shown, settings):
    settings.TIME_ZONE = "UTC"
    assert field_value(value) == shown


# --- the section form and the skill form's defaults ---


def test_the_section_form_names_a_section_and_appending_at_the_end_is_its_own_form(
    staff_client, agent, make
):
    skill = make.skill(agent, content="# Water plants\n\n## Steps\n- Check the soil.\n")
    body = staff_client.get(url("record_detail", agent.name, "skill", skill.pk)).content.decode()
    select = body.split('id="section-heading"')[1].split("</select>")[0]
    assert "end of the document" not in select
    assert '<option value="Water plants" selected>' in select
    append = body.split('class="append-form"')[1].split("</form>")[0]
    assert url("record_preview", agent.name, "skill", skill.pk, "append") in append
    assert 'name="heading"' not in append


def test_deleting_the_last_section_from_the_page_leaves_no_blank_lines(staff_client, agent, make):
    skill = make.skill(agent, content="# Deploy\n\nIntro.\n\n## Notes\n\nTemporary.\n")
    staff_client.post(
        url("record_op", agent.name, "skill", skill.pk, "delete_section"),
        {"heading": "Notes", "content": "", "expected_version": 1},
        headers=htmx(),
    )
    assert Skill.objects.get(pk=skill.pk).content == "# Deploy\n\nIntro.\n"


# --- insert and prepend forms; text typed in a form keeps its lines ----------


def test_the_insert_and_prepend_forms_preview_through_the_generic_op_view(
    staff_client, agent, make
):
    memory = make.memory(agent, NOTES)
    body = staff_client.get(url("record_detail", agent.name, "memory", memory.pk)).content.decode()
    for op in ("insert", "prepend"):
        assert f'hx-post="{url("record_preview", agent.name, "memory", memory.pk, op)}"' in body
    assert 'name="insert_line" min="0" value="3"' in body
    response = staff_client.post(
        url("record_preview", agent.name, "memory", memory.pk, "insert"),
        {"insert_line": 1, "content": "Has a dog.", "expected_version": 1},
        headers=htmx("insert-result"),
    )
    assert response.status_code == 200
    assert "<ins>Has a dog.\n</ins>" in response.content.decode()
    assert Memory.objects.get(pk=memory.pk).version == 1


def test_text_posted_by_a_plain_form_keeps_the_line_breaks_the_person_typed(
    staff_client, agent, make
):
    # A browser posts a textarea's line breaks as CRLF; the person typed LF.
    staff_client.post(url("record_new", agent.name, "memory"), {"content": "One.\r\nTwo."})
    created = Memory.objects.get(agent=agent, content__startswith="One.")
    assert created.content == "One.\nTwo."
    staff_client.post(
        url("record_op", agent.name, "memory", created.pk, "insert"),
        {"insert_line": 2, "content": "Three.\r\nFour.", "expected_version": 1},
    )
    created.refresh_from_db()
    assert created.content == "One.\nTwo.\nThree.\nFour.\n"
