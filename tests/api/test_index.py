"""GET /api/v1/: where an agent starts, every collection and door listed."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from stores.surfaces import SURFACES

pytestmark = pytest.mark.django_db


def test_the_api_root_lists_every_collection_and_door():
    answer = APIClient().get("/api/v1/")

    assert answer.status_code == 200
    index = answer.json()
    assert set(index["collections"]) == {
        *(spec.api_path for spec in SURFACES.values()),
        "revisions",
        "webhooks",
        "suggestions",
        "sources",
        "memory_stores",
    }
    base = "http://testserver"
    assert index["collections"]["revisions"] == f"{base}/api/v1/revisions/"
    assert (index["changes"], index["tools"], index["mcp"]) == (
        f"{base}/api/v1/changes/",
        f"{base}/api/v1/tools/",
        f"{base}/mcp/",
    )
    assert (index["schema"], index["docs"]) == (f"{base}/api/schema/", f"{base}/api/docs/")
    assert index["export_pam"] == f"{base}/api/v1/export/pam/"


def test_every_listed_collection_answers_with_a_token(api):
    index = api.get("/api/v1/").json()

    doors = [index["changes"], index["tools"], index["export_pam"]]
    for url in [*index["collections"].values(), *doors]:
        assert api.get(url).status_code == 200, url
