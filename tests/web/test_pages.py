"""Every page and fragment of the browser UI, as a signed-in person sees it."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from memoryadmin.web.views.lists import PAGE_SIZE
from stores.engine.sources import Source
from stores.models import AgentAccess, Memory, Revision
from stores.services import record_edit, record_forget, record_update
from stores.surfaces import SURFACES
from tests.factories import AgentFactory, SubjectFactory, UserFactory
from tests.web.conftest import htmx

pytestmark = pytest.mark.django_db


def url(name, *args):
    return reverse(f"web:{name}", args=args)


def test_pages_need_a_login(client, agent):
    response = client.get(url("dashboard", agent.name))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_login_page_renders(client):
    response = client.get(reverse("login"))
    assert response.status_code == 200
    assert b"Log in" in response.content


def test_every_page_sends_a_restrictive_csp(staff_client, agent):
    response = staff_client.get(url("dashboard", agent.name))
    policy = response["Content-Security-Policy"]
    assert "default-src 'none'" in policy
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy


def test_root_lists_the_agents_a_person_may_see(client, agent, other_agent):
    person = UserFactory()
    AgentAccess.objects.create(user=person, agent=agent, role=AgentAccess.Role.EDITOR)
    third = AgentFactory()
    AgentAccess.objects.create(user=person, agent=third)
    client.force_login(person)
    response = client.get("/")
    assert response.status_code == 200
    names = [a.name for a in response.context["agents"]]
    assert sorted(names) == sorted([agent.name, third.name])
    assert other_agent.name not in response.content.decode()


def test_root_goes_straight_to_the_only_agent(staff_client, agent):
    response = staff_client.get("/")
    assert response.status_code == 302
    assert response["Location"] == url("dashboard", agent.name)


def test_ungranted_agent_is_not_found(client, agent, other_agent):
    person = UserFactory()
    AgentAccess.objects.create(user=person, agent=agent)
    client.force_login(person)
    assert client.get(url("dashboard", other_agent.name)).status_code == 404
    assert client.get(url("record_list", other_agent.name, "memory")).status_code == 404


def test_dashboard_counts_surfaces_stores_stale_and_recent_changes(
    staff_client, agent, make, agent_actor
):
    make.memory(agent, "A working memory.")
    make.memory(agent, "An episode.", store="episodic")
    make.memory(agent, "A fact.", store="fact")
    make.skill(agent)
    make.task(agent)
    agent.review_mode = "all"
    agent.save()
    memory = make.memory(agent, "The user lives in Paris.")
    record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=agent_actor,
        old_string="Paris",
        new_string="Lyon",
    )
    response = staff_client.get(url("dashboard", agent.name))
    assert response.status_code == 200
    counts = {count.ui.key: count for count in response.context["counts"]}
    assert counts["memory"].total == 4
    assert counts["skill"].total == 1 and counts["task"].total == 1
    # The fake backend embeds eagerly on commit: nothing is stale until text changes unseen.
    assert counts["memory"].pending == 1
    stores = {store: live for store, _label, live, _inv in response.context["stores"]}
    assert stores == {"working": 2, "episodic": 1, "fact": 1}
    body = response.content.decode()
    assert "Recent changes" in body
    assert f"agent:{agent.name}/test" in body
    assert "Awaiting review" in body


def test_dashboard_shows_stale_embeddings(staff_client, agent, make):
    memory = make.memory(agent, "Fresh text.")
    Memory.objects.filter(pk=memory.pk).update(embedding_hash="")
    response = staff_client.get(url("dashboard", agent.name))
    counts = {count.ui.key: count for count in response.context["counts"]}
    assert counts["memory"].stale == 1
    stale = staff_client.get(url("record_list", agent.name, "memory") + "?stale=on")
    assert [row.pk for row, _ in stale.context["rows"]] == [memory.pk]


@pytest.mark.parametrize("surface", ["memory", "working", "skill", "task"])
def test_every_surface_lists_and_searches(staff_client, agent, make, surface):
    makers = {
        "memory": lambda n: make.memory(agent, f"note {n} about tea"),
        "working": lambda n: make.working(agent, key=f"k{n}", value=f"note {n} about tea"),
        "skill": lambda n: make.skill(agent, name=f"skill-{n}", summary=f"note {n} about tea"),
        "task": lambda n: make.task(agent, name=f"task-{n}", directive=f"note {n} about tea"),
    }
    for n in range(3):
        makers[surface](n)
    page = staff_client.get(url("record_list", agent.name, surface))
    assert page.status_code == 200
    assert len(page.context["rows"]) == 3
    fragment = staff_client.get(
        url("record_list", agent.name, surface) + "?q=note+1", headers=htmx("results")
    )
    assert fragment.status_code == 200
    body = fragment.content.decode()
    assert "<html" not in body
    assert "<mark>note 1</mark> about tea" in body  # the search is marked where it matched
    body = re.sub(r"</?mark>", "", body)
    assert "note 1 about tea" in body
    # Memory search ranks by relevance: holding only "note", which every memory holds, is
    # not relevant to "note 1", so memory search lists what the substring search lists.
    assert "note 0" not in body and "note 2" not in body


def test_memory_filters(staff_client, agent, make):
    person = SubjectFactory(agent=agent, external_id="u-1")
    keep = make.memory(agent, "Likes jazz.", category="taste", tags=["music"], importance=0.9)
    make.memory(agent, "Likes rock.", category="taste", tags=["loud"], importance=0.2)
    make.memory(agent, "Birthday in May.", category="dates", subject=person, importance=0.9)
    make.memory(agent, "An episode.", store="episodic", category="taste", tags=["music"])
    base = url("record_list", agent.name, "memory")

    def ids(query):
        return [row.pk for row, _ in staff_client.get(base + query).context["rows"]]

    assert ids("?category=taste&tag=music&store=working") == [keep.pk]
    assert ids("?importance_min=0.8&subject=shared") == [keep.pk]
    assert len(ids("?subject=u-1")) == 1
    assert len(ids("?importance_max=0.5&category=taste")) == 2


def test_invalidated_memories_are_hidden_unless_asked(staff_client, agent, make):
    gone = make.memory(agent, "Old address.")
    make.memory(agent, "New address.")
    staff_client.post(
        url("record_op", agent.name, "memory", gone.pk, "invalidate"),
        {"expected_version": 1},
        headers=htmx(),
    )
    base = url("record_list", agent.name, "memory")
    assert gone.pk not in [r.pk for r, _ in staff_client.get(base).context["rows"]]
    only = staff_client.get(base + "?invalidated=only").context["rows"]
    assert [r.pk for r, _ in only] == [gone.pk]


def test_list_sorts_and_paginates(staff_client, agent, make):
    for n in range(PAGE_SIZE + 3):
        make.memory(agent, f"memory {n}", importance=n / 100)
    base = url("record_list", agent.name, "memory")
    first = staff_client.get(base + "?sort=-importance")
    assert len(first.context["rows"]) == PAGE_SIZE
    assert first.context["rows"][0][0].content == f"memory {PAGE_SIZE + 2}"
    second = staff_client.get(base + "?sort=-importance&page=2", headers=htmx("results"))
    body = second.content.decode()
    assert body.index("memory 2") < body.index("memory 1") < body.index("memory 0")
    assert "memory 3<" not in body
    assert b"sort=-importance" in first.content


@pytest.mark.parametrize("rows", [3, 30])
def test_list_query_count_does_not_grow_with_rows(
    staff_client, agent, make, agent_actor, django_assert_max_num_queries, rows
):
    person = SubjectFactory(agent=agent)
    agent.review_mode = "all"
    agent.save()
    for n in range(rows):
        memory = make.memory(agent, f"memory {n}", subject=person if n % 2 else None)
        record_edit(
            surface_key="memory",
            agent=agent,
            ref=memory.pk,
            actor=agent_actor,
            old_string=f"memory {n}",
            new_string=f"memory #{n}",
        )
    # 12: the page's own ten, the agent's feed head it announces newer changes from, and the
    # open suggestions the navigation counts.
    with django_assert_max_num_queries(12):
        response = staff_client.get(url("record_list", agent.name, "memory"))
    assert response.status_code == 200


@pytest.mark.parametrize("surface", ["working", "skill", "task"])
def test_other_lists_query_count(staff_client, agent, make, django_assert_max_num_queries, surface):
    for n in range(12):
        if surface == "working":
            make.working(agent, key=f"k{n}")
        elif surface == "skill":
            make.skill(agent, name=f"s{n}")
        else:
            make.task(agent, name=f"t{n}")
    # 10: the list's own eight, the agent's feed head it announces newer changes from, and the
    # open suggestions the navigation counts.
    with django_assert_max_num_queries(10):
        assert staff_client.get(url("record_list", agent.name, surface)).status_code == 200


def test_dashboard_and_changes_query_counts(
    staff_client, agent, make, django_assert_max_num_queries
):
    for n in range(20):
        memory = make.memory(agent, f"memory {n}")
        if n % 3 == 0:
            record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=make.actor)
    # One count per surface, then the page's own ten and three more: the feed position the
    # live notice polls from, the open suggestions the navigation counts, and the same by kind
    # for their card.
    with django_assert_max_num_queries(len(SURFACES) + 13):
        assert staff_client.get(url("dashboard", agent.name)).status_code == 200
    with django_assert_max_num_queries(10):
        assert staff_client.get(url("changes", agent.name)).status_code == 200
    with django_assert_max_num_queries(10):
        assert staff_client.get(url("review", agent.name)).status_code == 200


def test_changes_page_keeps_deleted_records_findable(staff_client, agent, make):
    memory = make.memory(agent, "Soon gone.")
    record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=make.actor)
    response = staff_client.get(url("changes", agent.name) + "?op=forget")
    assert response.status_code == 200
    body = response.content.decode()
    assert "(deleted)" in body
    assert url("record_history", agent.name, "memory", memory.pk) in body


def test_unknown_surface_is_404(staff_client, agent):
    assert staff_client.get(f"/a/{agent.name}/nothing/").status_code == 404


def test_review_queue_lists_pending_revisions(staff_client, agent, make, agent_actor):
    agent.review_mode = "all"
    agent.save()
    memory = make.memory(agent, "The cat is black.")
    record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=agent_actor,
        old_string="black",
        new_string="white",
    )
    response = staff_client.get(url("review", agent.name))
    assert response.status_code == 200
    assert len(response.context["entries"]) == 1
    assert b"<ins>white</ins>" in response.content
    fragment = staff_client.get(url("review", agent.name), headers=htmx("queue"))
    assert b"<html" not in fragment.content


def test_review_queue_shows_every_field_a_write_changed_and_its_conversation(
    staff_client, agent, make, agent_actor
):
    """Regression: a file's rename read "No text change", which left the reviewer nothing to
    judge it by."""
    agent.review_mode = "all"
    agent.save()
    notes = make("file", agent, path="/memories/notes.md", content="Tea at four.")
    result = record_update(
        surface_key="file",
        agent=agent,
        ref=notes.pk,
        actor=agent_actor.with_source(Source(conversation="conv-rename-7")),
        changes={"path": "/memories/drinks.md"},
    )
    assert result.ok, result

    page = staff_client.get(url("review", agent.name)).content.decode()

    assert "No text change" not in page
    assert re.search(
        r"<td>path</td><td><del>/memories/notes.md</del></td><td><ins>/memories/drinks.md</ins>",
        page,
    )
    assert ">conv-rename-7</a>" in page


def test_token_page_lists_tokens(staff_client, agent):
    from tests.factories import agent_token

    agent_token(agent)
    response = staff_client.get(url("tokens", agent.name))
    assert response.status_code == 200
    assert len(response.context["tokens"]) == 1


def test_deleted_record_detail_redirects_to_history(staff_client, agent, make):
    memory = make.memory(agent, "Soon gone.")
    record_forget(surface_key="memory", agent=agent, ref=memory.pk, actor=make.actor)
    response = staff_client.get(url("record_detail", agent.name, "memory", memory.pk))
    assert response.status_code == 302
    assert response["Location"] == url("record_history", agent.name, "memory", memory.pk)
    history = staff_client.get(response["Location"])
    assert history.status_code == 200
    assert history.context["forgotten"].op == "forget"
    assert b"Restore it as it was" in history.content


def test_missing_record_is_404(staff_client, agent):
    assert staff_client.get(url("record_detail", agent.name, "memory", 999)).status_code == 404
    assert staff_client.get(url("record_history", agent.name, "memory", 999)).status_code == 404


def test_revision_rows_are_per_agent(staff_client, agent, other_agent, make):
    theirs = make.memory(other_agent, "Not yours.")
    response = staff_client.get(url("record_history", agent.name, "memory", theirs.pk))
    assert response.status_code == 404
    assert Revision.objects.filter(record_id=theirs.pk).exists()


def test_memory_search_ranks_by_hybrid_relevance_and_keeps_substring_matches(
    staff_client, agent, make
):
    make.memory(agent, content="Notes about the garden shed.")
    rare = make.memory(agent, content="The user's cat is called Zanzibarite.")
    partial = make.memory(agent, content="Bought zanzibar spices.")
    page = staff_client.get(url("record_list", agent.name, "memory"), {"q": "zanzibarite"})
    rows = [record.pk for record, _ in page.context["rows"]]
    assert rows[0] == rare.pk
    assert page.context["current_sort"] == "relevance"
    partial_page = staff_client.get(url("record_list", agent.name, "memory"), {"q": "zanzibar"})
    assert partial.pk in [record.pk for record, _ in partial_page.context["rows"]]


def test_memory_search_that_recall_does_not_rank_still_answers(staff_client, agent, make):
    """Regression: with nothing ranked by recall, the relevance order was ORDER BY 0, which
    PostgreSQL refuses (a 500); substring matches and empty results now list newest first."""
    long_word = make.memory(agent, content="n" * 5000 + " tail")
    make.memory(agent, content="Notes about the garden shed.")
    for query, expected in (("n" * 300, [long_word.pk]), ("nothing-like-this-anywhere", [])):
        page = staff_client.get(url("record_list", agent.name, "memory"), {"q": query})
        assert page.status_code == 200
        assert [record.pk for record, _ in page.context["rows"]] == expected


def test_a_search_over_the_query_limit_is_refused_not_listed_unfiltered(
    staff_client, agent, make, settings
):
    """Regression: an invalid filter form was dropped, so an over-long search listed every
    memory as if all matched; now it is refused, saying the limit, and lists nothing."""
    limit = settings.MEMORYADMIN["MAX_QUERY_LENGTH"]
    make.memory(agent, content="The user likes tea.")
    for headers in ({}, htmx("results")):
        page = staff_client.get(
            url("record_list", agent.name, "memory"), {"q": "tea " * 2000}, headers=headers
        )
        assert page.status_code == 400
        assert page.context["rows"] == []
        html = page.content.decode()
        assert 'data-status="invalid"' in html
        assert f"at most {limit} characters" in html


BIDI = "invoice\u202etxt.exe\u202c <b>bold</b> \u2067isolated\u2069 end"
RLO_MARKER = (
    '<span class="bidi" title="U+202E RIGHT-TO-LEFT OVERRIDE" data-char="&#x202e;">⟨U+202E⟩</span>'
)
CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_direction_controls_are_shown_as_markers_never_raw(staff_client, agent, make, agent_actor):
    """Regression: U+202A-U+202E and U+2066-U+2069 reached the page raw, so a reviewer saw
    the text reordered ("invoice" + RLO + "txt.exe" reads as an .exe ending in "txt")."""
    agent.review_mode = "all"
    agent.save()
    memory = make.memory(agent, BIDI, category="bills\u202e", tags=["t\u2066ag"])
    record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=agent_actor,
        old_string="end",
        new_string="end \u202dagain",
    )
    skill = make.skill(agent, content='# Steps\u202e\n\n[a link](https://x.test "ti\u202etle")\n')
    preview = staff_client.post(
        url("record_preview", agent.name, "memory", memory.pk, "edit"),
        {"old_string": "bold", "new_string": "\u2068bolder", "expected_version": 2},
        headers=htmx(),
    )
    pages = {
        "detail": staff_client.get(url("record_detail", agent.name, "memory", memory.pk)),
        "list": staff_client.get(url("record_list", agent.name, "memory")),
        "search": staff_client.get(
            url("record_list", agent.name, "memory"), {"q": "invoice"}, headers=htmx("results")
        ),
        "history": staff_client.get(url("record_history", agent.name, "memory", memory.pk)),
        "review": staff_client.get(url("review", agent.name)),
        "preview": preview,
        "skill": staff_client.get(url("record_detail", agent.name, "skill", skill.pk)),
    }
    for name, page in pages.items():
        assert page.status_code == 200, name
        html = page.content.decode()
        # Every shown text, tags, attributes and a textarea's text aside: a form field's value
        # keeps the exact text (a marker there would be saved back), shown marked beside it.
        shown = re.sub(
            r"<[^>]*>", "", re.sub(r"<textarea[^>]*>.*?</textarea>", "", html, flags=re.S)
        )
        assert not set(CONTROLS) & set(shown), name
        assert "⟨U+" in html, name
        if name != "skill":
            assert RLO_MARKER in html, name
            assert "&lt;b&gt;" in html and "<b>" not in html, name  # escaped still
    assert "⟨U+202D⟩" in pages["history"].content.decode()
    assert "⟨U+2068⟩" in pages["preview"].content.decode()
    assert "⟨U+2066⟩" in pages["list"].content.decode()  # the tag
    assert 'name="category" value="bills\u202e"' in pages["detail"].content.decode()
    # Shown differently, stored as written.
    assert Memory.objects.get(pk=memory.pk).content == BIDI.replace("end", "end \u202dagain")
