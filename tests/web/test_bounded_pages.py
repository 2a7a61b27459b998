"""Pages that show diffs cost little whatever the texts: two full replaces
with 74 KB of random words made every later load of the history take minutes."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memoryadmin.web.rendering import PAGE_DIFF_CELLS, PAGE_DIFF_CHARS
from memoryadmin.web.views.history import HISTORY_PAGE_SIZE
from stores.editing import text_sha256
from stores.editing.work import metered
from stores.services import record_replace
from tests.work import python_lines, random_words

pytestmark = pytest.mark.django_db

# A page render runs some tens of thousands of Python lines; difflib on these texts, millions.
PAGE_LINES = 500_000


def _replace(agent, memory, actor, text, surface_key="memory"):
    memory.refresh_from_db()
    result = record_replace(
        surface_key=surface_key,
        agent=agent,
        ref=memory.pk,
        actor=actor,
        text=text,
        expected_version=memory.version,
        # A whole-text replace of a long text proves the full read it was made from.
        expected_sha256=text_sha256(memory.content),
    )
    assert result.status == "updated", result.details


@pytest.fixture
def replaced_twice(agent, make, agent_actor):
    memory = make.memory(agent, "A short memory.")
    for seed in (1, 2):
        _replace(agent, memory, agent_actor, random_words(74_000, seed=seed, per_line=12))
    return memory


def settled(client, page: str) -> None:
    """Render `page` once unmeasured: a process's first render of it also compiles its
    templates and imports what it uses, work that does not grow with the texts and that a
    test run alone would otherwise count."""
    assert client.get(page).status_code == 200


def test_history_after_two_random_74_kb_replaces_renders_with_bounded_work(
    staff_client, agent, replaced_twice
):
    page = reverse("web:record_history", args=[agent.name, "memory", replaced_twice.pk])
    settled(staff_client, page)
    with python_lines(PAGE_LINES), metered() as work:
        response = staff_client.get(page)
    assert response.status_code == 200
    assert len(response.context["entries"]) == 3
    assert work["diff.cells"] <= PAGE_DIFF_CELLS
    assert work["diff.chars"] <= PAGE_DIFF_CHARS


def test_review_queue_of_random_74_kb_replaces_renders_with_bounded_work(
    staff_client, agent, make, agent_actor
):
    agent.review_mode = "all"
    agent.save()
    memory = make.memory(agent, "A short memory.")
    for seed in (1, 2):
        _replace(agent, memory, agent_actor, random_words(74_000, seed=seed))
    page = reverse("web:review", args=[agent.name])
    settled(staff_client, page)
    with python_lines(PAGE_LINES), metered() as work:
        response = staff_client.get(page)
    assert response.status_code == 200
    assert len(response.context["entries"]) == 2
    assert work["diff.cells"] <= PAGE_DIFF_CELLS
    assert work["diff.chars"] <= PAGE_DIFF_CHARS


def test_a_diff_too_large_to_compare_shows_both_texts_whole_and_escaped(
    staff_client, agent, make, agent_actor
):
    # 8,000 lines drawn from 150: too many shared lines to compare within one diff's budget.
    pool = [f"<b>{n:03d}</b>" for n in range(150)]
    memory = make.memory(agent, "\n".join(pool[(n * 7) % 150] for n in range(8_000)))
    _replace(agent, memory, agent_actor, "\n".join(pool[(n * 11) % 150] for n in range(8_000)))
    page = reverse("web:record_history", args=[agent.name, "memory", memory.pk])
    response = staff_client.get(page)
    body = response.content.decode()
    assert response.context["entries"][0]["diff"].too_large
    assert "Diff too large to show; whole texts below." in body
    assert 'data-diff="too-large"' in body
    assert "&lt;b&gt;007&lt;/b&gt;\n&lt;b&gt;014&lt;/b&gt;" in body  # the text before
    assert "&lt;b&gt;011&lt;/b&gt;\n&lt;b&gt;022&lt;/b&gt;" in body  # the text after
    assert "<b>007</b>" not in body


def _skill_rewritten(agent, make, agent_actor, times: int, size: int):
    skill = make.skill(agent, content="A short skill.")
    for seed in range(times):
        _replace(agent, skill, agent_actor, random_words(size, seed=seed, per_line=12), "skill")
    return skill


def test_the_history_of_many_long_rewrites_is_paged_and_each_page_stays_small(
    staff_client, agent, make, agent_actor
):
    """Regression: 200 rewrites of ~486k characters were one 185 MiB page (four at once took
    the server from 0.73 to 3.66 GB)."""
    skill = _skill_rewritten(agent, make, agent_actor, times=HISTORY_PAGE_SIZE + 5, size=240_000)
    url = reverse("web:record_history", args=[agent.name, "skill", skill.pk])

    first = staff_client.get(url)
    second = staff_client.get(url, {"page": 2})

    for page in (first, second):
        assert page.status_code == 200
        assert len(page.content) < 3 * 1024 * 1024
    assert len(first.context["entries"]) == HISTORY_PAGE_SIZE
    assert len(second.context["entries"]) == 6  # 25 replaces and the create
    versions = [entry["revision"].version_after for entry in first.context["entries"]]
    assert versions == list(range(26, 26 - HISTORY_PAGE_SIZE, -1))
    assert 'href="?page=2"' in first.content.decode()
    # The diffs past the page's budget load on demand, each from the change's own page.
    deferred = [entry for entry in first.context["entries"] if entry["deferred"]]
    assert deferred
    detail = reverse("web:change_detail", args=[agent.name, deferred[0]["revision"].pk])
    assert f'hx-get="{detail}"' in first.content.decode()
    assert staff_client.get(detail).status_code == 200
