"""The browsable API as a person signed in to the web UI sees it."""

from __future__ import annotations

import re

from rest_framework.test import APIClient


def breadcrumbs(page: str) -> list[str]:
    trail = re.search(r'<ul class="breadcrumb">(.*?)</ul>', page, re.S)
    assert trail is not None
    return [
        re.sub(r"<[^>]+>", "", item).strip() for item in re.findall(r"<li.*?</li>", trail[1], re.S)
    ]


def test_the_breadcrumb_names_only_real_endpoints(staff_user, agent, make):
    memory = make.memory(agent)
    client = APIClient()
    client.force_login(staff_user)

    listing = client.get(f"/api/v1/memories/?agent={agent.name}", HTTP_ACCEPT="text/html")
    detail = client.get(
        f"/api/v1/memories/{memory.pk}/?agent={agent.name}", HTTP_ACCEPT="text/html"
    )

    # /api/v1/ is the index of every collection, so the trail starts there.
    assert breadcrumbs(listing.content.decode()) == ["Api Index", "Memory List"]
    assert breadcrumbs(detail.content.decode()) == ["Api Index", "Memory List", "Memory Instance"]
