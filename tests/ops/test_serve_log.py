"""bin/serve's server logs no query string: a recall's `q=` is the memory text it looks for."""

from __future__ import annotations

import pytest
import requests

from tests.load.server import bin_serve

SECRET = "pinnumberofthebankcard4821"


@pytest.mark.database_free  # bin/serve runs on a SQLite database of its own
def test_bin_serve_logs_requests_without_their_query_strings(tmp_path):
    """Regression: uvicorn's access log kept `GET /api/v1/memories/?q=<memory text>`."""
    with bin_serve(tmp_path, "a password for the log test") as base:
        for path in (f"/api/v1/memories/?q={SECRET}", f"/accounts/login/?next=/{SECRET}/"):
            requests.get(base + path, timeout=30)

    log = (tmp_path / "serve.log").read_text()
    assert "/api/v1/memories/" in log  # the requests are logged, by the app's own request log
    assert SECRET not in log
