"""The suggestions page: pairs side by side with their diff, settled through the services."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from stores.engine.actors import Actor
from stores.engine.sources import Source
from stores.models import AgentAccess, Memory, Suggestion
from stores.services import record_create, record_edit
from stores.services.suggestions import suggestion_create
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair(agent, make):
    paris = make.memory(agent, content="The user lives in Paris.")
    lyon = make.memory(agent, content="The user lives in Lyon.")
    suggestion = suggestion_create(
        agent=agent, kind="conflict", memories=[paris, lyon], reason="'Paris' → 'Lyon'"
    )
    return suggestion, paris, lyon


def test_the_page_shows_both_texts_their_diff_and_the_count_in_the_nav(
    client, staff_user, agent, pair
):
    client.force_login(staff_user)
    page = client.get(reverse("web:suggestions", args=[agent.name])).content.decode()
    assert "The user lives in Paris." in page and "The user lives in Lyon." in page
    assert "<del>Paris.</del>" in page or "<del>Paris</del>" in page
    assert "data-suggestions-count>1<" in page
    assert "Keep this one" in page and "Keep both" in page


def test_the_dashboard_counts_the_open_ones_by_kind_and_links_to_them(
    client, staff_user, agent, make, pair
):
    client.force_login(staff_user)
    dashboard = reverse("web:dashboard", args=[agent.name])
    inbox = reverse("web:suggestions", args=[agent.name])
    page = client.get(dashboard).content.decode()
    assert 'Suggestions to settle <span class="badge warn">1</span>' in page
    assert f'<a href="{inbox}?kind=conflict">1 conflict</a>' in page
    assert "duplicate</a>" not in page
    assert f'class="button" href="{inbox}">Open the suggestions' in page

    suggestion, _paris, _lyon = pair
    client.post(
        reverse("web:suggestion_settle", args=[agent.name, suggestion.pk]),
        {"action": "dismiss"},
        headers={"HX-Request": "true"},
    )
    settled = client.get(dashboard).content.decode()
    assert "No duplicates or contradictions wait to be settled." in settled
    assert "data-suggestions-count" not in settled


def test_keep_one_supersedes_the_other_and_keep_both_dismisses(
    client, staff_user, agent, make, pair
):
    suggestion, paris, lyon = pair
    client.force_login(staff_user)
    url = reverse("web:suggestion_settle", args=[agent.name, suggestion.pk])
    preview = client.post(
        url, {"action": "preview", "keep": lyon.pk, "content": "The user lives in Lyon now."},
        headers={"HX-Request": "true"},
    )  # fmt: skip
    assert preview.status_code == 200 and 'data-status="preview"' in preview.content.decode()
    assert Memory.objects.get(pk=lyon.pk).content == "The user lives in Lyon."
    kept = client.post(url, {"action": "keep", "keep": lyon.pk}, headers={"HX-Request": "true"})
    assert kept.status_code == 200
    assert Memory.objects.get(pk=paris.pk).superseded_by_id == lyon.pk
    other = suggestion_create(
        agent=agent, kind="duplicate", memories=[lyon, make.memory(agent, content="x y z")],
        reason="test",
    )  # fmt: skip
    url = reverse("web:suggestion_settle", args=[agent.name, other.pk])
    client.post(url, {"action": "dismiss"}, headers={"HX-Request": "true"})
    assert Suggestion.objects.get(pk=other.pk).status == "dismissed"


def test_a_viewer_sees_but_cannot_settle(client, agent, pair):
    suggestion, paris, _ = pair
    viewer = UserFactory()
    AgentAccess.objects.create(user=viewer, agent=agent, role="viewer")
    client.force_login(viewer)
    page = client.get(reverse("web:suggestions", args=[agent.name])).content.decode()
    assert "The user lives in Paris." in page and "Keep this one" not in page
    url = reverse("web:suggestion_settle", args=[agent.name, suggestion.pk])
    client.post(url, {"action": "keep", "keep": paris.pk}, headers={"HX-Request": "true"})
    assert Suggestion.objects.get(pk=suggestion.pk).status == "open"


def test_merge_all_exact_duplicates(client, staff_user, agent, make):
    first = make.memory(agent, content="Tea, no sugar.")
    second = make.memory(agent, content="tea no sugar")
    suggestion_create(
        agent=agent, kind="duplicate", memories=[first, second], reason="same", score=1.0
    )
    client.force_login(staff_user)
    answer = client.post(
        reverse("web:suggestions_merge_exact", args=[agent.name]), headers={"HX-Request": "true"}
    )
    assert "Merged 1 exact duplicate" in answer.content.decode()
    assert Memory.objects.get(pk=second.pk).superseded_by_id == first.pk


def _preview(client, agent, suggestion, **data):
    return client.post(
        reverse("web:suggestion_settle", args=[agent.name, suggestion.pk]),
        {"action": "preview", **data},
        headers={"HX-Request": "true"},
    )


def test_a_keep_one_preview_shows_the_would_be_text_and_writes_nothing(
    client, staff_user, agent, pair
):
    client.force_login(staff_user)
    suggestion, paris, lyon = pair

    answer = _preview(
        client, agent, suggestion, keep=lyon.pk, content="The user lives in Lyon since May."
    )

    body = answer.content.decode()
    assert answer.status_code == 200
    assert 'data-status="preview"' in body
    assert "Preview</strong> · nothing has been written; Keep applies it." in body
    assert "Saved" not in body and 'class="outcome' not in body
    assert "The user lives in Lyon since May." in body
    assert "<ins> since May</ins>" in body or "<ins>since May</ins>" in body
    assert f"Memory {paris.pk} would be marked as no longer true, superseded by memory" in body
    paris.refresh_from_db()
    lyon.refresh_from_db()
    assert (lyon.version, lyon.content, paris.invalidated_at) == (
        1,
        "The user lives in Lyon.",
        None,
    )
    assert Suggestion.objects.get(pk=suggestion.pk).status == "open"


def test_a_merge_preview_is_worded_as_a_preview(client, staff_user, agent, make):
    client.force_login(staff_user)
    older = make.memory(agent, content="The user resides in Toronto.")
    newer = make.memory(agent, content="The user lives in Toronto.")
    suggestion = suggestion_create(
        agent=agent, kind="duplicate", memories=[older, newer], reason="same words"
    )

    body = _preview(client, agent, suggestion, keep=newer.pk).content.decode()

    assert "nothing has been written; Merge applies it." in body
    assert "Its text would stay as it is today." in body
    assert f"Memory {older.pk} would be merged into it" in body
    assert "Saved" not in body
    older.refresh_from_db()
    assert older.superseded_by_id is None


def test_each_card_shows_the_conversation_its_memory_came_from(client, staff_user, agent):
    client.force_login(staff_user)
    maker = Actor.maintainer("seed")
    first = record_create(
        surface_key="memory",
        agent=agent,
        actor=maker.with_source(Source(conversation="conv-41", platform="slack")),
        values={"content": "The user lives in Paris."},
    ).record
    second = record_create(
        surface_key="memory",
        agent=agent,
        actor=maker,
        values={"content": "The user lives in Lyon."},
    ).record
    record_edit(
        surface_key="memory", agent=agent, ref=first.pk,
        actor=maker.with_source(Source(conversation="conv-77")),
        old_string="Paris", new_string="Paris, France",
    )  # fmt: skip
    suggestion_create(agent=agent, kind="conflict", memories=[first, second], reason="places")

    page = client.get(reverse("web:suggestions", args=[agent.name])).content.decode()

    card = page[page.index(f'data-record="{first.pk}"') :]
    assert re.search(r"from\s+conversation <a [^>]*>conv-41</a> on slack", card)
    assert re.search(r"<br>last changed\s*<span[^>]*>from\s+conversation <a [^>]*>conv-77<", card)
    other = page[page.index(f'data-record="{second.pk}"') :]
    assert "No source conversation recorded." in other
