"""What a reviewer reads on the pages (issue 15): plain store names, rows that say what
changed, lists that count and sort in words, a create page for every surface, tokens ready
to paste."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from stores.tools import get_tool

pytestmark = pytest.mark.django_db


def url(name, *args):
    return reverse(f"web:{name}", args=args)


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


# --- the store of long-term memories (item 20) --------------------------------------------


def test_the_default_store_reads_as_editable_not_as_working_memory(staff_client, agent, make):
    make.memory(agent, "The user lives in Paris.")

    listing = text_of(staff_client.get(url("record_list", agent.name, "memory")).content.decode())
    dashboard = text_of(staff_client.get(url("dashboard", agent.name)).content.decode())

    assert re.search(r"The user lives in Paris\. editable ", listing), listing
    assert "Editable (long-term)" in dashboard
    assert "Working (editable)" not in dashboard


def test_the_recall_tool_says_what_the_store_values_mean():
    store = get_tool("recall_memories").parameters["properties"]["store"]

    assert store["enum"] == ["working", "episodic", "fact"]
    assert "not working memory" in store["description"]
