"""/healthz answers without touching anything; /readyz reports each dependency."""

from __future__ import annotations

import pytest
from django.db import OperationalError

from memoryadmin.celery import app as celery_app
from memoryadmin.hosting import health


class BrokenEmbeddings:
    model_name = "broken"
    dimensions = 384

    def embed_documents(self, texts):
        raise ConnectionError("model server down")

    def embed_query(self, text):
        raise ConnectionError("model server down")


@pytest.fixture
def database_down(monkeypatch):
    def refuse(*args, **kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(health.connections["default"], "cursor", refuse)


def test_liveness_needs_no_database(client, database_down):
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_probes_answer_any_host_and_plain_http(client, db, settings):
    # A container probe uses 127.0.0.1 and HTTP, whatever the public name and redirect.
    settings.ALLOWED_HOSTS = ["memory.example.com"]
    settings.SECURE_SSL_REDIRECT = True

    assert client.get("/healthz", HTTP_HOST="10.0.0.7:8000").status_code == 200
    assert client.get("/readyz", HTTP_HOST="10.0.0.7:8000").status_code == 200
    assert client.get("/", HTTP_HOST="memory.example.com").status_code == 301


def test_readiness_reports_each_dependency(client, db):
    response = client.get("/readyz")

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ready"
    assert {name: check["status"] for name, check in body["checks"].items()} == {
        "database": "ok",
        "broker": "eager",  # no broker configured: tasks run in-process
        "embeddings": "ok",
    }
    assert response["Cache-Control"] == "no-store"


def test_readiness_fails_with_the_database_and_names_it(client, database_down):
    response = client.get("/readyz")

    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["database"] == {
        "status": "error",
        "error": "OperationalError",
        "ms": checks["database"]["ms"],
    }
    assert checks["embeddings"]["status"] == "ok"


def test_readiness_fails_when_the_broker_is_unreachable(client, db, settings, monkeypatch):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    # Under the CELERY_ prefix the app reads Django's settings with, which a lookup tries first.
    monkeypatch.setitem(celery_app.conf, "CELERY_BROKER_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setitem(celery_app.conf, "CELERY_BROKER_WRITE_URL", None)

    response = client.get("/readyz")

    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["broker"]["status"] == "error"
    assert checks["database"]["status"] == "ok"


def test_readiness_fails_when_the_embedding_backend_does(client, db, settings):
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "EMBEDDINGS": {"BACKEND": "tests.ops.test_health.BrokenEmbeddings", "OPTIONS": {}},
    }

    response = client.get("/readyz")

    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["embeddings"] == {
        "status": "error",
        "error": "ConnectionError",
        "ms": checks["embeddings"]["ms"],
    }
    assert checks["database"]["status"] == "ok"
