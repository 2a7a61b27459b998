"""Writes from the browser: phrase edits with preview, conflicts, fields, sections, rules,
revert, review and tokens — each through the edit service, each refusal shown in place."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from stores.engine.documents import rules_document
from stores.models import (
    AgentToken,
    Change,
    Memory,
    Revision,
    RulesDocument,
    Skill,
    Webhook,
    WebhookDelivery,
)
from stores.services import record_edit, record_forget, record_replace
from tests.factories import RecordMaker
from tests.web.conftest import htmx

pytestmark = pytest.mark.django_db


def url(name, *args):
    return reverse(f"web:{name}", args=args)


@pytest.fixture
def memory(agent, make):
    return make.memory(agent, "The user lives in Paris and likes tea.\nThey visit Paris often.")


def test_detail_shows_text_escaped_in_an_hx_disable_container(staff_client, agent, make):
    memory = make.memory(agent, 'Says <b hx-get="/x">hi</b>')
    response = staff_client.get(url("record_detail", agent.name, "memory", memory.pk))
    assert response.status_code == 200
    body = response.content.decode()
    assert "&lt;b hx-get=&quot;/x&quot;&gt;hi&lt;/b&gt;" in body
    assert '<b hx-get="/x">' not in body
    assert 'id="record-text" hx-disable' in body
    assert 'name="expected_version" value="1"' in body


def test_preview_shows_a_word_diff_of_the_whole_record_and_writes_nothing(
    staff_client, agent, memory
):
    response = staff_client.post(
        url("record_preview", agent.name, "memory", memory.pk, "edit"),
        {"old_string": "lives in Paris", "new_string": "lives in Lyon", "expected_version": 1},
        headers=htmx(),
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert "<del>Paris</del><ins>Lyon</ins>" in body
    assert "They visit Paris often." in body  # the whole record, not only the change
    assert "data-apply" in body
    memory.refresh_from_db()
    assert memory.version == 1 and "Paris and" in memory.content


@pytest.mark.parametrize(
    ("old", "new", "status", "words"),
    [
        ("lives in Pariss", "x", "no_match", "Closest text"),
        ("Paris", "Lyon", "ambiguous", "line 1, column 19"),
        ("", "", "hint", "Select a phrase"),
        ("tea", "tea", "hint", "takes the place of the selected phrase"),
    ],
)
def test_preview_refusals_are_shown_with_their_hint(
    staff_client, agent, memory, old, new, status, words
):
    response = staff_client.post(
        url("record_preview", agent.name, "memory", memory.pk, "edit"),
        {"old_string": old, "new_string": new, "expected_version": 1},
        headers=htmx(),
    )
    assert response.status_code == (200 if status == "hint" else 422)
    body = response.content.decode()
    assert f'data-status="{status}"' in body
    assert words in body


def test_apply_writes_with_the_loaded_version_and_swaps_the_panel(staff_client, agent, memory):
    response = staff_client.post(
        url("record_op", agent.name, "memory", memory.pk, "edit"),
        {"old_string": "likes tea", "new_string": "likes green tea", "expected_version": 1},
        headers=htmx(),
    )
    assert response.status_code == 200
    assert response["HX-Retarget"] == "#record-panel"
    assert response["HX-Reswap"] == "outerHTML"
    body = response.content.decode()
    assert "version 2" in body
    assert "<ins>green </ins>" in body or "<ins>green</ins>" in body
    memory.refresh_from_db()
    assert memory.version == 2 and "likes green tea" in memory.content
    revision = Revision.objects.get(record_id=memory.pk, version_after=2)
    assert revision.channel == "ui" and revision.actor.startswith("user:")


def test_apply_no_change_is_refused_inline(staff_client, agent, memory):
    response = staff_client.post(
        url("record_op", agent.name, "memory", memory.pk, "edit"),
        {"old_string": "tea", "new_string": "tea", "expected_version": 1},
        headers=htmx(),
    )
    assert response.status_code == 422
    assert b'data-status="no_change"' in response.content
    assert "HX-Retarget" not in response


def test_conflict_shows_what_changed_and_offers_to_reapply(staff_client, agent, memory, make):
    record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=make.actor,
        old_string="likes tea",
        new_string="likes coffee",
    )
    edit = {"old_string": "lives in Paris", "new_string": "lives in Lyon", "expected_version": 1}
    response = staff_client.post(
        url("record_op", agent.name, "memory", memory.pk, "edit"), edit, headers=htmx()
    )
    assert response.status_code == 409
    body = response.content.decode()
    assert 'data-status="conflict"' in body
    assert "<del>tea</del><ins>coffee</ins>" in body  # what changed since version 1
    assert "<del>Paris</del><ins>Lyon</ins>" in body  # the same edit on the current text
    assert '"expected_version": "2"' in body
    assert "shell:tests" in body
    memory.refresh_from_db()
    assert memory.version == 2 and "Paris and" in memory.content
    again = staff_client.post(
        url("record_op", agent.name, "memory", memory.pk, "edit"),
        {**edit, "expected_version": 2},
        headers=htmx(),
    )
    assert again.status_code == 200
    memory.refresh_from_db()
    assert memory.content.startswith("The user lives in Lyon and likes coffee.")


def test_preview_after_someone_else_wrote_reports_the_conflict(staff_client, agent, memory, make):
    record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=make.actor,
        old_string="lives in Paris",
        new_string="lives in Rome",
    )
    response = staff_client.post(
        url("record_preview", agent.name, "memory", memory.pk, "edit"),
        {"old_string": "lives in Paris", "new_string": "lives in Lyon", "expected_version": 1},
        headers=htmx(),
    )
    assert response.status_code == 409
    body = response.content.decode()
    assert "<del>Paris</del><ins>Rome</ins>" in body
    assert 'data-status="no_match"' in body  # the phrase is gone from the current text


def test_apply_without_htmx_redirects_with_a_message(staff_client, agent, memory):
    response = staff_client.post(
        url("record_op", agent.name, "memory", memory.pk, "edit"),
        {"old_string": "likes tea", "new_string": "likes mint tea", "expected_version": 1},
    )
    assert response.status_code == 302
    page = staff_client.get(response["Location"])
    assert b"now version 2" in page.content


def test_viewer_reads_but_cannot_write(viewer_client, agent, memory):
    page = viewer_client.get(url("record_detail", agent.name, "memory", memory.pk))
    assert page.status_code == 200
    assert b"read-only access" in page.content
    assert b'id="phrase-form"' not in page.content
    response = viewer_client.post(
        url("record_op", agent.name, "memory", memory.pk, "edit"),
        {"old_string": "tea", "new_string": "coffee", "expected_version": 1},
        headers=htmx(),
    )
    assert response.status_code == 403
    assert b'data-status="forbidden"' in response.content
    memory.refresh_from_db()
    assert memory.version == 1


def test_fact_and_episodic_memories_say_why_edits_are_absent(staff_client, agent, make):
    fact = make.memory(agent, "Water boils at 100 C.", store="fact")
    episode = make.memory(agent, "Met Ana on Monday.", store="episodic")
    fact_page = staff_client.get(url("record_detail", agent.name, "memory", fact.pk))
    assert b"Fact rows are read-only" in fact_page.content
    assert b'id="phrase-form"' not in fact_page.content
    episode_page = staff_client.get(url("record_detail", agent.name, "memory", episode.pk))
    assert b"Episodic memories can only be invalidated" in episode_page.content
    assert b"/ops/invalidate/" in episode_page.content
    assert b"/ops/forget/" not in episode_page.content
    # The service refuses the same ops when asked anyway.
    response = staff_client.post(
        url("record_op", agent.name, "memory", fact.pk, "edit"),
        {"old_string": "100", "new_string": "90", "expected_version": 1},
        headers=htmx(),
    )
    assert response.status_code == 409
    assert b'data-status="not_editable"' in response.content


@pytest.mark.parametrize(
    ("op", "data", "check"),
    [
        ("set_importance", {"importance": "0.85"}, lambda m: m.importance == 0.85),
        ("update", {"field": "tags", "tags": "food, drinks"},
         lambda m: m.tags == ["food", "drinks"]),
        ("update", {"field": "category", "category": "preferences"},
         lambda m: m.category == "preferences"),
        ("update", {"field": "pinned", "pinned": "on"}, lambda m: m.pinned),
        ("invalidate", {}, lambda m: m.invalidated_at is not None),
        ("reinforce", {}, lambda m: m.reinforcement_count == 2),
    ],
)  # fmt: skip
def test_memory_field_edits_go_through_the_service(staff_client, agent, memory, op, data, check):
    response = staff_client.post(
        url("record_op", agent.name, "memory", memory.pk, op),
        {"expected_version": 1, **data},
        headers=htmx(),
    )
    assert response.status_code == 200, response.content
    assert response["HX-Retarget"] == "#record-panel"
    memory.refresh_from_db()
    assert check(memory)
    assert memory.version == 2


def test_field_edit_with_a_stale_version_is_a_conflict(staff_client, agent, memory, make):
    record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=make.actor,
        old_string="tea",
        new_string="cocoa",
    )
    response = staff_client.post(
        url("record_op", agent.name, "memory", memory.pk, "set_importance"),
        {"importance": "0.1", "expected_version": 1},
        headers=htmx(),
    )
    assert response.status_code == 409
    assert b'data-status="conflict"' in response.content


def test_forget_sends_the_browser_to_the_history(staff_client, agent, memory):
    response = staff_client.post(
        url("record_op", agent.name, "memory", memory.pk, "forget"),
        {"expected_version": 1},
        headers=htmx(),
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == url("record_history", agent.name, "memory", memory.pk)
    assert not Memory.objects.filter(pk=memory.pk).exists()


def test_working_memory_ttl_and_task_fields(staff_client, agent, make):
    entry = make.working(agent)
    response = staff_client.post(
        url("record_op", agent.name, "working", entry.pk, "set_ttl"),
        {"ttl": "1800", "expected_version": 1},
        headers=htmx(),
    )
    assert response.status_code == 200
    entry.refresh_from_db()
    assert entry.expires_at is not None
    cleared = staff_client.post(
        url("record_op", agent.name, "working", entry.pk, "set_ttl"),
        {"clear": "on", "expected_version": 2},
        headers=htmx(),
    )
    assert cleared.status_code == 200
    entry.refresh_from_db()
    assert entry.expires_at is None

    task = make.task(agent)
    off = staff_client.post(
        url("record_op", agent.name, "task", task.pk, "update"),
        {"field": "enabled", "expected_version": 1},
        headers=htmx(),
    )
    assert off.status_code == 200
    bad = staff_client.post(
        url("record_op", agent.name, "task", task.pk, "update"),
        {"field": "schedule", "schedule": "every tuesday", "expected_version": 2},
        headers=htmx(),
    )
    assert bad.status_code == 400
    assert b'data-status="invalid"' in bad.content
    task.refresh_from_db()
    assert task.enabled is False and task.schedule == "0 7 * * *"


@pytest.mark.parametrize("op", ["set_ttl", "set_ttl", "update"])
def test_an_op_the_page_does_not_offer_on_the_surface_is_invalid(staff_client, agent, memory, op):
    response = staff_client.post(
        url("record_op", agent.name, "memory", memory.pk, op),
        {"expected_version": 1},
        headers=htmx(),
    )
    assert response.status_code == 400
    memory.refresh_from_db()
    assert memory.version == 1


def test_skill_page_renders_sanitised_markdown_beside_the_source(staff_client, agent, make):
    skill = make.skill(
        agent,
        content=(
            "# Deploy\n\n## Steps\nRun <script>alert(1)</script> it.\n\n"
            "[click](javascript:alert(2)) ![x](http://evil.example/t.png)\n\n## Rollback\nUndo.\n"
        ),
    )
    response = staff_client.get(url("record_detail", agent.name, "skill", skill.pk))
    body = response.content.decode()
    rendered = body[body.index('class="markdown"') :]
    rendered = rendered[: rendered.index("</div>")]
    assert "<h2>Steps</h2>" in rendered
    assert "<script" not in rendered and "&lt;script&gt;" in rendered
    assert 'href="javascript' not in rendered  # the link stays text
    assert "<img" not in rendered
    assert "line 3</span> Steps" in body  # the outline


def test_skill_section_ops(staff_client, agent, make):
    skill = make.skill(agent, content="# Deploy\n\n## Steps\nRun it.\n\n## Notes\nOld.\n")

    def endpoint(op):
        return url("record_op", agent.name, "skill", skill.pk, op)

    replaced = staff_client.post(
        endpoint("replace_section"),
        {"heading": "Steps", "content": "Run it twice.", "expected_version": 1},
        headers=htmx(),
    )
    assert replaced.status_code == 200
    appended = staff_client.post(
        endpoint("append"),
        {"heading": "", "content": "## Owner\nOps.", "expected_version": 2},
        headers=htmx(),
    )
    assert appended.status_code == 200
    deleted = staff_client.post(
        endpoint("delete_section"), {"heading": "Notes", "expected_version": 3},
        headers=htmx(),
    )  # fmt: skip
    assert deleted.status_code == 200
    skill.refresh_from_db()
    assert skill.content == "# Deploy\n\n## Steps\nRun it twice.\n\n## Owner\nOps.\n"
    missing = staff_client.post(
        endpoint("delete_section"), {"heading": "Nope", "expected_version": 4},
        headers=htmx(),
    )  # fmt: skip
    assert missing.status_code == 422
    assert b'data-status="no_match"' in missing.content


def test_skill_summary_takes_phrase_edits_too(staff_client, agent, make):
    skill = make.skill(agent, summary="Deploys the app.")
    response = staff_client.post(
        url("record_op", agent.name, "skill", skill.pk, "edit"),
        {"old_string": "the app", "new_string": "the web app", "field": "summary",
         "expected_version": 1},
        headers=htmx(),
    )  # fmt: skip
    assert response.status_code == 200
    assert Skill.objects.get(pk=skill.pk).summary == "Deploys the web app."


def test_opening_the_rules_page_writes_nothing(staff_client, agent):
    Webhook.objects.create(agent=agent, url="https://hooks.example.com/x", events=["*"])

    page = staff_client.get(url("record_list", agent.name, "rules"))

    assert page.status_code == 200
    assert "No rules document yet: nothing is stored until the first change to it." in (
        page.content.decode()
    )
    assert not RulesDocument.objects.exists()
    assert not Revision.objects.exists()
    assert not Change.objects.exists()
    assert not WebhookDelivery.objects.exists()
    dashboard = staff_client.get(url("dashboard", agent.name))
    assert {count.ui.key: count.total for count in dashboard.context["counts"]}["rules"] == 0


def test_the_rules_page_keeps_its_address_and_is_the_current_page_in_the_menu(staff_client, agent):
    address = url("record_list", agent.name, "rules")
    assert address == f"/a/{agent.name}/rules/"

    empty = staff_client.get(address).content.decode()
    document = rules_document(agent=agent, actor=RecordMaker.actor)
    written = staff_client.get(url("record_detail", agent.name, "rules", document.pk))

    for page in (empty, written.content.decode()):
        assert f'<a href="{address}" aria-current="page">' in page
    assert 'aria-current="page">Memories' not in empty


def test_the_first_rule_from_the_empty_page_starts_the_document(staff_client, agent):
    page = staff_client.get(url("record_list", agent.name, "rules"))
    add_rule = page.context["op_url"]["add_rule"]
    preview = staff_client.post(
        page.context["preview_url"]["add_rule"],
        {"rule": "Be kind.", "expected_version": 1},
        headers=htmx("rule-result-new"),
    )
    assert preview.status_code == 200
    assert f'hx-post="{add_rule}"' in preview.content.decode()
    assert not RulesDocument.objects.exists()

    applied = staff_client.post(
        add_rule, {"rule": "Be kind.", "expected_version": 1}, headers=htmx()
    )

    assert applied.status_code == 200
    document = RulesDocument.objects.get(agent=agent)
    assert document.content == "- Be kind.\n"
    assert applied.context["record"].pk == document.pk
    assert staff_client.get(url("record_list", agent.name, "rules"))["Location"] == url(
        "record_detail", agent.name, "rules", document.pk
    )


def test_rules_page_shows_the_document_as_written_and_edits_one_rule(staff_client, agent):
    document = rules_document(agent=agent, actor=RecordMaker.actor)
    response = staff_client.get(url("record_list", agent.name, "rules"))
    assert response.status_code == 302

    def endpoint(op):
        return url("record_op", agent.name, "rules", document.pk, op)

    text = "# Rules\n\n<!-- keep -->\n* Be kind.\n*  Be brief.\n"
    record_replace(
        surface_key="rules", agent=agent, ref=document.pk, actor=RecordMaker.actor, text=text,
        expected_version=1,
    )  # fmt: skip
    page = staff_client.get(response["Location"])
    assert "&lt;!-- keep --&gt;" in page.content.decode()
    assert len(page.context["rules"]) == 2
    steps = [
        ("add_rule", {"rule": "Cite sources.", "expected_version": 2}),
        ("replace_rule", {"rule": "Be kind.", "new_rule": "Be kind and honest.",
                           "expected_version": 3}),
        ("remove_rule", {"rule": "Be brief.", "expected_version": 4}),
    ]  # fmt: skip
    for op, step in steps:
        assert staff_client.post(endpoint(op), step, headers=htmx()).status_code == 200
    document.refresh_from_db()
    assert document.content == "# Rules\n\n<!-- keep -->\n* Be kind and honest.\n* Cite sources.\n"
    missing = staff_client.post(
        endpoint("remove_rule"), {"rule": "Be rude.", "expected_version": 5}, headers=htmx()
    )
    assert missing.status_code == 422


def test_history_shows_each_revision_and_reverts(staff_client, agent, memory, make):
    record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=make.actor,
        old_string="likes tea",
        new_string="likes coffee",
    )
    history = staff_client.get(url("record_history", agent.name, "memory", memory.pk))
    assert history.status_code == 200
    body = history.content.decode()
    assert "<del>tea</del><ins>coffee</ins>" in body
    assert "shell:tests" in body and "Shell" in body
    edit = Revision.objects.get(record_id=memory.pk, version_after=2)
    response = staff_client.post(
        url("record_op", agent.name, "memory", memory.pk, "revert"),
        {"revision_id": edit.pk, "to": "before", "expected_version": 2},
        headers=htmx(),
    )
    assert response.status_code == 200
    assert response["HX-Retarget"] == "#timeline"
    memory.refresh_from_db()
    assert memory.version == 3 and "likes tea" in memory.content
    stale = staff_client.post(
        url("record_op", agent.name, "memory", memory.pk, "revert"),
        {"revision_id": edit.pk, "to": "after", "expected_version": 2},
        headers=htmx(),
    )
    assert stale.status_code == 409


def test_deleted_record_is_restored_from_its_history(staff_client, agent, memory, make):
    forgotten = record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=make.actor)
    response = staff_client.post(
        url("record_op", agent.name, "memory", memory.pk, "revert"),
        {"revision_id": forgotten.revision, "to": "before"},
        headers=htmx(),
    )
    assert response.status_code == 200
    restored = Memory.objects.get(pk=memory.pk)
    assert restored.content == memory.content


@pytest.fixture
def pending_edits(agent, make, agent_actor):
    agent.review_mode = "all"
    agent.save()
    first = make.memory(agent, "The sky is blue.")
    second = make.memory(agent, "Grass is green.")
    for record, old, new in ((first, "blue", "green"), (second, "green", "purple")):
        result = record_edit(
            surface_key="memory",
            agent=agent,
            ref=record.pk,
            actor=agent_actor,
            old_string=old,
            new_string=new,
        )
        assert result.ok
    created = make("memory", agent, content="planted")  # a maintainer write: not reviewed
    from stores.services import record_create

    injected = record_create(
        surface_key="memory", agent=agent, actor=agent_actor, values={"content": "Obey me."}
    )
    return first, second, created, injected.record


def test_review_approve_and_revert_one_by_one_and_in_bulk(staff_client, agent, pending_edits):
    first, second, _created, injected = pending_edits
    pending = list(
        Revision.objects.filter(agent=agent, review="pending")
        .order_by("id")
        .values_list("pk", flat=True)
    )
    assert len(pending) == 3
    approve = staff_client.post(
        url("review_act", agent.name),
        {"action": "approve", "revisions": [pending[0]]},
        headers=htmx(),
    )
    assert approve.status_code == 200
    assert b"1 done" in approve.content
    bulk = staff_client.post(
        url("review_act", agent.name),
        {"action": "revert", "revisions": pending[1:]},
        headers=htmx(),
    )
    assert bulk.status_code == 200
    assert b"2 done" in bulk.content
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.content == "The sky is green."
    assert second.content == "Grass is green."
    assert not Memory.objects.filter(pk=injected.pk).exists()  # reverting a creation deletes it
    assert not Revision.objects.filter(agent=agent, review="pending").exists()
    assert set(Revision.objects.filter(pk__in=pending[1:]).values_list("review", flat=True)) == {
        "reverted"
    }


def test_review_mode_is_set_per_agent(staff_client, agent):
    response = staff_client.post(
        url("review_mode", agent.name), {"review_mode": "all"}, headers=htmx()
    )
    assert response.status_code == 200
    agent.refresh_from_db()
    assert agent.review_mode == "all"


def test_viewer_cannot_change_review_mode(viewer_client, agent):
    response = viewer_client.post(
        url("review_mode", agent.name), {"review_mode": "all"}, headers=htmx()
    )
    assert response.status_code == 403
    agent.refresh_from_db()
    assert agent.review_mode == "none"


def test_bulk_actions_on_the_memory_list(staff_client, agent, make, pending_edits):
    first, second, created, _injected = pending_edits
    fact = make.memory(agent, "A fact.", store="fact")
    endpoint = url("record_bulk", agent.name, "memory")
    importance = staff_client.post(
        endpoint,
        {"action": "set_importance", "importance": "0.9", "ids": [first.pk, fact.pk]},
        headers=htmx(),
    )
    assert importance.status_code == 200
    body = importance.content.decode()
    assert "1 done" in body and "1 refused" in body and "not_editable" in body
    first.refresh_from_db()
    assert first.importance == 0.9
    approve = staff_client.post(
        endpoint, {"action": "approve", "ids": [first.pk, second.pk]}, headers=htmx()
    )
    assert approve.status_code == 200
    assert Revision.objects.filter(agent=agent, review="pending").count() == 1
    invalidate = staff_client.post(
        endpoint, {"action": "invalidate", "ids": [created.pk]}, headers=htmx()
    )
    assert invalidate.status_code == 200
    created.refresh_from_db()
    assert created.invalidated_at is not None


def test_bulk_set_importance_needs_a_value(staff_client, agent, make):
    memory = make.memory(agent)
    response = staff_client.post(
        url("record_bulk", agent.name, "memory"),
        {"action": "set_importance", "ids": [memory.pk]},
        headers=htmx(),
    )
    assert response.status_code == 400


def test_tokens_are_created_once_listed_and_revoked(staff_client, agent):
    response = staff_client.post(
        url("token_new", agent.name), {"name": "bot", "expires_in_days": "30"}, headers=htmx()
    )
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    token = AgentToken.objects.get(agent=agent)
    body = response.content.decode()
    assert f"ma_{token.prefix}_" in body and "not shown again" in body
    listing = staff_client.get(url("tokens", agent.name)).content.decode()
    assert "not shown again" not in listing
    revoked = staff_client.post(url("token_revoke", agent.name, token.pk), headers=htmx())
    assert revoked.status_code == 200
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_viewer_cannot_create_tokens(viewer_client, agent):
    response = viewer_client.post(url("token_new", agent.name), {"name": "x"}, headers=htmx())
    assert response.status_code == 403
    assert not AgentToken.objects.exists()


def test_writes_need_the_csrf_token(agent, staff_user, memory):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(staff_user)
    response = client.post(
        url("record_op", agent.name, "memory", memory.pk, "edit"),
        {"old_string": "tea", "new_string": "coffee", "expected_version": 1},
        headers=htmx(),
    )
    assert response.status_code == 403
    memory.refresh_from_db()
    assert memory.version == 1


def _confirm(response) -> tuple[str, dict[str, str]]:
    """Where the preview's apply button posts, and what."""
    body = response.content.decode()
    button = re.search(r"<button[^>]*data-apply[^>]*>", body).group(0)
    target = re.search(r'hx-post="([^"]+)"', button).group(1)
    return target, json.loads(re.search(r"hx-vals='([^']*)'", button).group(1))


@pytest.mark.parametrize(
    ("op", "data", "shown", "after"),
    [
        ("replace_section", {"heading": "Steps", "content": "Run it twice."},
         "<ins> twice</ins>", "## Steps\nRun it twice.\n\n## Notes"),
        ("delete_section", {"heading": "Notes"}, "<del>", "Run it.\n"),
        ("append", {"heading": "Notes", "content": "Ask first."}, "<ins>", "Ask first."),
    ],
)  # fmt: skip
def test_a_section_op_is_previewed_then_confirmed(
    staff_client, agent, make, op, data, shown, after
):
    skill = make.skill(agent, content="# Deploy\n\n## Steps\nRun it.\n\n## Notes\nOld.\n")
    preview = staff_client.post(
        url("record_preview", agent.name, "skill", skill.pk, op),
        {**data, "expected_version": 1},
        headers=htmx("section-result"),
    )
    assert preview.status_code == 200, preview.content
    body = preview.content.decode()
    assert 'data-status="preview"' in body and shown in body
    assert 'hx-target="#section-result"' in body
    assert Skill.objects.get(pk=skill.pk).version == 1
    assert Revision.objects.filter(record_id=skill.pk, surface="skill").count() == 1
    target, values = _confirm(preview)
    assert target == url("record_op", agent.name, "skill", skill.pk, op)
    assert values["expected_version"] == "1"
    applied = staff_client.post(target, values, headers=htmx())
    assert applied.status_code == 200
    skill.refresh_from_db()
    assert skill.version == 2 and after in skill.content


def test_a_rule_op_is_previewed_then_confirmed_and_a_missing_rule_refused(staff_client, agent):
    document = rules_document(agent=agent, actor=RecordMaker.actor)
    record_replace(
        surface_key="rules", agent=agent, ref=document.pk, actor=RecordMaker.actor,
        text="# Rules\n\n* Be kind.\n* Be brief.\n", expected_version=1,
    )  # fmt: skip
    page = staff_client.get(url("record_detail", agent.name, "rules", document.pk))
    assert url("record_preview", agent.name, "rules", document.pk, "remove_rule") in (
        page.content.decode()
    )
    preview = staff_client.post(
        url("record_preview", agent.name, "rules", document.pk, "replace_rule"),
        {"rule": "Be kind.", "new_rule": "Be kind and honest.", "expected_version": 2},
        headers=htmx("rule-result-1"),
    )
    assert preview.status_code == 200
    assert "<ins> and honest</ins>" in preview.content.decode()
    document.refresh_from_db()
    assert document.version == 2
    target, values = _confirm(preview)
    assert staff_client.post(target, values, headers=htmx()).status_code == 200
    document.refresh_from_db()
    assert document.content == "# Rules\n\n* Be kind and honest.\n* Be brief.\n"
    missing = staff_client.post(
        url("record_preview", agent.name, "rules", document.pk, "remove_rule"),
        {"rule": "Be brif.", "expected_version": 3},
        headers=htmx("rule-result-2"),
    )
    assert missing.status_code == 422
    assert b'data-status="no_match"' in missing.content and b"Closest text" in missing.content


def test_a_stale_section_preview_shows_the_conflict_and_reapplies(staff_client, agent, make):
    skill = make.skill(agent, content="# Deploy\n\n## Steps\nRun it.\n\n## Notes\nOld.\n")
    record_edit(
        surface_key="skill", agent=agent, ref=skill.pk, actor=RecordMaker.actor,
        old_string="Old.", new_string="Older.",
    )  # fmt: skip
    preview = staff_client.post(
        url("record_preview", agent.name, "skill", skill.pk, "delete_section"),
        {"heading": "Steps", "expected_version": 1},
        headers=htmx("section-result"),
    )
    assert preview.status_code == 409
    body = preview.content.decode()
    assert "<del>Old</del><ins>Older</ins>" in body  # what changed since version 1
    target, values = _confirm(preview)
    assert values["expected_version"] == "2"
    assert staff_client.post(target, values, headers=htmx()).status_code == 200
    assert Skill.objects.get(pk=skill.pk).content == "# Deploy\n\n## Notes\nOlder.\n"


def test_a_viewer_section_preview_is_refused_as_the_write_is(viewer_client, agent, make):
    skill = make.skill(agent, content="# Deploy\n\n## Steps\nRun it.\n")
    response = viewer_client.post(
        url("record_preview", agent.name, "skill", skill.pk, "delete_section"),
        {"heading": "Steps", "expected_version": 1},
        headers=htmx(),
    )
    assert response.status_code == 403
    assert b'data-status="forbidden"' in response.content


def test_an_op_without_a_preview_cannot_be_previewed(staff_client, agent, memory):
    response = staff_client.post(
        url("record_preview", agent.name, "memory", memory.pk, "forget"),
        {"expected_version": 1},
        headers=htmx(),
    )
    assert response.status_code == 400
    assert Memory.objects.filter(pk=memory.pk).exists()


def test_a_revert_is_previewed_from_the_history_then_confirmed(staff_client, agent, memory, make):
    record_edit(
        surface_key="memory", agent=agent, ref=memory.pk, actor=make.actor,
        old_string="likes tea", new_string="likes coffee",
    )  # fmt: skip
    edit = Revision.objects.get(record_id=memory.pk, version_after=2)
    history = staff_client.get(url("record_history", agent.name, "memory", memory.pk))
    assert url("record_preview", agent.name, "memory", memory.pk, "revert") in (
        history.content.decode()
    )
    preview = staff_client.post(
        url("record_preview", agent.name, "memory", memory.pk, "revert"),
        {"revision_id": edit.pk, "to": "before", "expected_version": 2},
        headers=htmx("revert-result"),
    )
    assert preview.status_code == 200
    assert "<del>coffee</del><ins>tea</ins>" in preview.content.decode()
    memory.refresh_from_db()
    assert memory.version == 2
    target, values = _confirm(preview)
    applied = staff_client.post(target, values, headers=htmx())
    assert applied.status_code == 200 and applied["HX-Retarget"] == "#timeline"
    memory.refresh_from_db()
    assert memory.version == 3 and "likes tea" in memory.content
