"""Live pages: a record's page notices a change made elsewhere, lists and the dashboard
notice new changes, each with a poll that costs one indexed query while nothing changed."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from stores.engine.actors import Actor
from stores.services import record_edit, record_forget
from tests.web.conftest import htmx

# The feed's positions exist once a write commits.
pytestmark = pytest.mark.django_db(transaction=True)

SOMEONE = Actor.maintainer("someone-else")


def url(name, *args):
    return reverse(f"web:{name}", args=args)


def edit(memory, old: str, new: str) -> None:
    result = record_edit(
        surface_key="memory",
        agent=memory.agent,
        ref=memory.pk,
        actor=SOMEONE,
        old_string=old,
        new_string=new,
    )
    assert result.ok, result.message


def poll(client, memory, **query):
    path = url("record_live", memory.agent.name, "memory", memory.pk)
    return client.get(path, query, headers=htmx("live-notice"))


def test_the_record_page_polls_from_the_version_it_shows(staff_client, agent, make):
    memory = make.memory(agent)
    page = staff_client.get(url("record_detail", agent.name, "memory", memory.pk)).content.decode()
    poller = re.search(r'<div id="live-notice" hx-get="([^"]+)" hx-trigger="every 5s"', page)
    assert poller is not None
    assert poller.group(1) == f"{url('record_live', agent.name, 'memory', memory.pk)}?version=1"


def test_nothing_new_answers_204_after_one_indexed_query(staff_client, agent, make):
    memory = make.memory(agent)
    with CaptureQueriesContext(connection) as queries:
        answer = poll(staff_client, memory, version=1)
    assert answer.status_code == 204 and answer.content == b""
    revision_reads = [q["sql"] for q in queries if "stores_revision" in q["sql"]]
    assert len(revision_reads) == 1
    assert "after_text" not in revision_reads[0] and "LIMIT 1" in revision_reads[0]


def test_a_change_elsewhere_is_announced_with_who_when_and_the_diff(staff_client, agent, make):
    memory = make.memory(agent, "The user likes tea in the morning.")
    edit(memory, "tea", "green tea")
    edit(memory, "morning", "evening")

    answer = poll(staff_client, memory, version=1)

    assert answer.status_code == 200
    notice = answer.content.decode()
    assert "This record changed while you had it open" in notice
    assert "You loaded version 1; it is now at version 3" in notice
    assert notice.count("shell:someone-else") == 2
    assert "<ins>green </ins>" in notice and "<del>morning</del>" in notice
    assert "<ins>evening</ins>" in notice
    assert 'data-live-version="3"' in notice
    assert "seen=3" in notice  # it goes on polling, from what it shows now
    assert poll(staff_client, memory, version=1, seen=3).status_code == 204


def test_a_deletion_elsewhere_is_announced_with_the_deleted_text(staff_client, agent, make):
    memory = make.memory(agent, "Soon gone.")
    record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=SOMEONE)

    notice = poll(staff_client, memory, version=1).content.decode()

    assert "This record was deleted while you had it open" in notice
    assert "<del>Soon gone.</del>" in notice
    assert url("record_history", agent.name, "memory", memory.pk) in notice


def test_a_viewer_is_told_too_and_another_agents_record_is_not_found(
    viewer_client, agent, other_agent, make
):
    memory = make.memory(agent)
    edit(memory, "tea", "mate")
    assert poll(viewer_client, memory, version=1).status_code == 200
    theirs = make.memory(other_agent)
    path = url("record_live", agent.name, "memory", theirs.pk)
    assert viewer_client.get(path, {"version": 0}).status_code == 204  # nothing of theirs
    assert viewer_client.get(url("changes_live", other_agent.name), {"after": 0}).status_code == 404


def test_a_poll_without_a_version_is_refused(staff_client, agent, make):
    memory = make.memory(agent)
    assert poll(staff_client, memory).status_code == 400
    assert poll(staff_client, memory, version="x").status_code == 400


def live_banner(page: str) -> re.Match:
    banner = re.search(r'<div id="live-changes"[^>]*hx-get="([^"]+)"', page)
    assert banner is not None
    return banner


def test_the_dashboard_and_lists_announce_new_changes(staff_client, agent, make):
    memory = make.memory(agent)
    dashboard = staff_client.get(url("dashboard", agent.name)).content.decode()
    listing = staff_client.get(url("record_list", agent.name, "memory")).content.decode()
    dashboard_poll = live_banner(dashboard).group(1).replace("&amp;", "&")
    list_poll = live_banner(listing).group(1).replace("&amp;", "&")
    assert "surface=memory" in list_poll and "surface" not in dashboard_poll
    assert staff_client.get(dashboard_poll).status_code == 204

    edit(memory, "tea", "mate")
    skill = make.skill(agent)

    announced = staff_client.get(dashboard_poll).content.decode()
    assert 'data-new-changes="2"' in announced
    assert f"skill {skill.pk}" in announced and f"memory {memory.pk}" in announced
    assert "shell:someone-else" in announced
    memories_only = staff_client.get(list_poll).content.decode()
    assert 'data-new-changes="1"' in memories_only and f"skill {skill.pk}" not in memories_only
    seen = re.search(r"seen=(\d+)", announced).group(1)
    assert staff_client.get(f"{dashboard_poll}&seen={seen}").status_code == 204


def test_open_pages_ask_as_often_as_the_setting_says(staff_client, agent, make, settings):
    memory = make.memory(agent, "The user likes tea.")
    pages = [
        url("record_detail", agent.name, "memory", memory.pk),
        url("record_list", agent.name, "memory"),
        url("dashboard", agent.name),
    ]
    for page in pages:
        assert 'hx-trigger="every 5s"' in staff_client.get(page).content.decode()

    changes = {**settings.MEMORYADMIN["CHANGES"], "PAGE_POLL_SECONDS": 2}
    settings.MEMORYADMIN = {**settings.MEMORYADMIN, "CHANGES": changes}

    for page in pages:
        body = staff_client.get(page).content.decode()
        assert 'hx-trigger="every 2s"' in body and "every 5s" not in body
