"""What a reviewer reads on the pages: plain store names, rows that say what
changed, lists that count and sort in words, a create page for every surface, tokens ready
to paste."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.urls import reverse

from memoryadmin.web.surfaces import SURFACE_UI
from stores.models import Memory, Revision, ScheduledTask
from stores.services import memory_set_importance, record_edit
from stores.surfaces import SURFACES
from stores.tools import get_tool
from tests.factories import SubjectFactory
from tests.web.conftest import htmx

pytestmark = pytest.mark.django_db


def url(name, *args):
    return reverse(f"web:{name}", args=args)


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


# --- the store of long-term memories --------------------------------------------


def test_the_default_store_reads_as_editable_not_as_working_memory(staff_client, agent, make):
    make.memory(agent, "The user lives in Paris.")

    listing = text_of(staff_client.get(url("record_list", agent.name, "memory")).content.decode())
    dashboard = text_of(staff_client.get(url("dashboard", agent.name)).content.decode())

    assert re.search(r"The user lives in Paris\. editable ", listing), listing
    assert "editable long-term · working" in dashboard
    assert "Working (editable)" not in dashboard


def test_the_recall_tool_says_what_the_store_values_mean():
    store = get_tool("recall_memories").parameters["properties"]["store"]

    assert store["enum"] == ["working", "episodic", "fact"]
    assert "not working memory" in store["description"]


# --- lists: words, counts, marked matches ---------------------------------------


def test_sorts_read_in_words_and_counts_agree_with_their_noun(staff_client, agent, make):
    make.memory(agent, "The user lives in Paris.")
    make.working(agent, key="topic", value="travel")
    make.working(agent, key="mood", value="calm")

    memories = staff_client.get(url("record_list", agent.name, "memory")).content.decode()
    working = staff_client.get(url("record_list", agent.name, "working")).content.decode()

    options = re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', memories)
    sorts = dict(option for option in options if option[0] in ("-updated", "importance"))
    assert sorts == {"-updated": "Recently updated", "importance": "Least important"}
    assert '<span class="count">1 memory</span>' in memories
    assert '<span class="count">2 entries</span>' in working


def test_every_sort_of_every_list_has_words():
    for ui in SURFACE_UI.values():
        assert all(label and label != key for key, label in ui.sort_choices)


def test_search_matches_are_marked_and_the_text_stays_escaped(staff_client, agent, make):
    make.memory(agent, "Ana <b>loves</b> Paris & the Seine.")

    page = staff_client.get(url("record_list", agent.name, "memory") + "?q=paris+seine")

    body = page.content.decode()
    assert "Ana &lt;b&gt;loves&lt;/b&gt; <mark>Paris</mark> &amp; the <mark>Seine</mark>." in body


# --- creating a record from the UI ------------------------------------------------

NEW = {
    "memory": {"content": "The user keeps bees.", "store": "working", "category": "hobbies"},
    "working": {"namespace": "session", "key": "topic", "value": "bees", "ttl": "3600"},
    "skill": {"name": "beekeeping", "summary": "Hives.", "content": "# Bees\n\n## Hives\n"},
    "task": {"name": "check-hives", "schedule": "0 7 * * 1", "directive": "Check the hives."},
    "file": {"path": "/memories/projects/bees.md", "content": "# Bees\n\n- two hives\n"},
}


def test_a_memory_file_outside_memories_is_refused_on_the_create_page(staff_client, agent):
    refused = staff_client.post(
        url("record_new", agent.name, "file"), {"path": "/memories/../x.md", "content": "x"}
    )
    assert refused.status_code == 400
    assert "would escape /memories directory" in refused.content.decode()
    assert not SURFACES["file"].model.objects.exists()


@pytest.mark.parametrize("surface", list(NEW))
def test_each_list_links_a_create_page_that_writes_through_the_service(
    staff_client, staff_user, agent, surface
):
    listing = staff_client.get(url("record_list", agent.name, surface)).content.decode()
    assert url("record_new", agent.name, surface) in listing
    form = staff_client.get(url("record_new", agent.name, surface))
    assert form.status_code == 200
    for name in NEW[surface]:
        assert f'name="{name}"' in form.content.decode()

    created = staff_client.post(url("record_new", agent.name, surface), NEW[surface])

    spec = SURFACES[surface]
    record = spec.model.objects.get(agent=agent)
    assert created.status_code == 302
    assert created["Location"] == url("record_detail", agent.name, surface, record.pk)
    assert record.version == 1
    revision = Revision.objects.get(surface=surface, record_id=record.pk)
    assert (revision.op, revision.actor, revision.channel) == (
        "create",
        f"user:{staff_user.username}",
        "ui",
    )
    page = staff_client.get(created["Location"]).content.decode()
    assert "(version 1)" in page  # the message says what was made


def test_a_new_memory_takes_its_bank_tags_and_metadata(staff_client, agent):
    ana = SubjectFactory(agent=agent, display_name="Ana", external_id="ana")

    staff_client.post(
        url("record_new", agent.name, "memory"),
        {
            "content": "Ana keeps bees.",
            "store": "working",
            "subject": ana.pk,
            "tags": "bees, hobbies",
            "importance": "0.8",
            "metadata": '{"source": "chat"}',
        },
    )

    memory = Memory.objects.get(agent=agent)
    assert (memory.subject, memory.store, memory.tags) == (ana, "working", ["bees", "hobbies"])
    assert (memory.importance, memory.metadata, memory.category) == (
        0.8,
        {"source": "chat"},
        "general",
    )


def test_a_refused_create_shows_the_services_word_and_keeps_what_was_typed(staff_client, agent):
    page = staff_client.post(
        url("record_new", agent.name, "task"),
        {"name": "brief", "schedule": "every morning", "directive": "Summarise the news."},
    )

    assert page.status_code == 400
    body = page.content.decode()
    assert 'data-status="invalid"' in body
    assert "cron expression" in body
    assert "Summarise the news." in body
    assert not ScheduledTask.objects.filter(agent=agent).exists()


def test_a_form_that_does_not_parse_is_refused_before_the_service(staff_client, agent):
    page = staff_client.post(
        url("record_new", agent.name, "memory"), {"content": "x", "metadata": "[1, 2]"}
    )

    assert page.status_code == 400
    assert "must be a JSON object" in page.content.decode()
    assert not Memory.objects.filter(agent=agent).exists()


def test_a_viewer_sees_no_create_link_and_cannot_create(viewer_client, agent):
    listing = viewer_client.get(url("record_list", agent.name, "memory")).content.decode()
    assert url("record_new", agent.name, "memory") not in listing

    refused = viewer_client.post(url("record_new", agent.name, "memory"), {"content": "x"})

    assert refused.status_code == 403
    assert not Memory.objects.filter(agent=agent).exists()


def test_new_rules_leads_to_the_rules_page(staff_client, agent):
    answer = staff_client.get(url("record_new", agent.name, "rules"))

    assert answer["Location"] == url("record_list", agent.name, "rules")


# --- change rows: what changed, and when ----------------------------------------


def test_change_rows_show_the_text_and_when_in_words(staff_client, agent, make, agent_actor):
    memory = make.memory(agent, "The user lives in Paris and likes tea.")
    record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=agent_actor,
        old_string="Paris",
        new_string="Lyon",
    )

    for page in (url("dashboard", agent.name), url("changes", agent.name)):
        body = staff_client.get(page).content.decode()
        assert "The user lives in Lyon and likes tea." in text_of(body), page
        assert "0 minutes ago" not in body and "just now" in body
        assert re.search(
            r'<time datetime="[^"]+" title="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC">', body
        )
        edit = Revision.objects.get(record_id=memory.pk, op="edit")
        assert url("change_detail", agent.name, edit.pk) in body


def test_a_change_opened_in_place_shows_its_diff_and_fields(staff_client, agent, make, agent_actor):
    memory = make.memory(agent, "The user lives in Paris.")
    edit = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=agent_actor,
        old_string="Paris",
        new_string="Lyon",
    )
    importance = memory_set_importance(
        agent=agent, ref=memory.pk, actor=agent_actor, importance=0.9
    )

    diff = staff_client.get(url("change_detail", agent.name, edit.revision), headers=htmx())
    fields = staff_client.get(url("change_detail", agent.name, importance.revision))

    assert "<html" not in diff.content.decode()
    assert "<del>Paris</del>" in diff.content.decode()
    assert "<ins>Lyon</ins>" in diff.content.decode()
    shown = fields.content.decode()
    assert "<td>importance</td>" in shown
    assert re.search(r"<del>0\.50?</del>.*<ins>0\.90?</ins>", shown, re.S)


def test_another_agents_change_is_not_found(staff_client, agent, other_agent, make):
    theirs = make.memory(other_agent, "Someone else's memory.")
    revision = Revision.objects.get(record_id=theirs.pk, surface="memory")

    assert staff_client.get(url("change_detail", agent.name, revision.pk)).status_code == 404


# --- tokens: ready to paste -----------------------------------------------------


def snippets(page: str) -> dict[str, str]:
    return {
        key: html.unescape(text)
        for key, text in re.findall(
            r'<pre id="snippet-([\w-]+)" class="snippet-text" hx-disable>(.*?)</pre>', page, re.S
        )
    }


def test_a_new_token_comes_with_snippets_for_every_door(staff_client, agent):
    page = staff_client.post(url("token_new", agent.name), {"name": "laptop"}).content.decode()

    raw = re.search(
        r'id="new-token" class="secret-value" type="text" readonly value="([^"]+)"', page
    )[1]
    assert 'data-copy="new-token"' in page
    shown = snippets(page)
    assert set(shown) == {"rest", "tools", "mcp-http", "mcp-stdio"}
    assert (
        f"curl -s -H 'Authorization: Bearer {raw}' 'http://testserver/api/v1/memories/?q=paris'"
        == shown["rest"]
    )
    assert "http://testserver/api/v1/tools/recall_memories/" in shown["tools"]
    http = json.loads(shown["mcp-http"])["mcpServers"]["memoryadmin"]
    assert http == {
        "type": "http",
        "url": "http://testserver/mcp/",
        "headers": {"Authorization": f"Bearer {raw}"},
    }
    stdio = json.loads(shown["mcp-stdio"])["mcpServers"]["memoryadmin"]
    assert stdio["args"][1:] == ["mcp_stdio"] and stdio["args"][0].endswith("manage.py")
    assert stdio["env"]["MEMORYADMIN_TOKEN"] == raw
    for key in shown:
        assert f'data-copy="snippet-{key}"' in page


def test_the_rest_snippets_token_opens_the_api_and_the_tools(client, staff_client, agent):
    page = staff_client.post(url("token_new", agent.name), {"name": "laptop"}).content.decode()
    token = json.loads(snippets(page)["mcp-http"])["mcpServers"]["memoryadmin"]["headers"]

    assert client.get("/api/v1/memories/?q=paris", headers=token).status_code == 200
    assert client.get("/api/v1/tools/", headers=token).status_code == 200


def test_the_tokens_page_says_tokens_serve_mcp_and_holds_no_secret(staff_client, agent):
    page = staff_client.get(url("tokens", agent.name)).content.decode()

    assert "MCP" in text_of(page)
    assert all("PASTE_THE_TOKEN_HERE" in text for text in snippets(page).values())


def test_a_memorys_page_names_its_store_plainly(staff_client, agent, make):
    memory = make.memory(agent, "The user lives in Paris.")

    page = staff_client.get(url("record_detail", agent.name, "memory", memory.pk)).content.decode()

    assert re.search(r'<span class="badge store-working" title="[^"]*">editable</span>', page)
