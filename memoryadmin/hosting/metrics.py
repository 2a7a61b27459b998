"""GET /metrics: Prometheus's scrape, for whoever holds MEMORYADMIN_METRICS_TOKEN.

Counters and histograms are kept by the processes that count (django-prometheus's request
metrics, stores.metrics for the domain's). Under gunicorn, with PROMETHEUS_MULTIPROC_DIR set,
each worker writes its values to files there and any worker's scrape sums every process's.
What the database knows (reviews and suggestions waiting, stale vectors) is read at each
scrape instead, so it is the same whichever worker answers.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Iterator

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector

from stores.models import Revision
from stores.selectors.embeddings import embedding_status
from stores.selectors.suggestions import open_by_kind


class DatabaseCollector:
    """Gauges of work waiting in the database, read at each scrape."""

    def collect(self) -> Iterator[Metric]:
        pending = GaugeMetricFamily(
            "memoryadmin_reviews_pending",
            "Agent writes awaiting a person's review.",
        )
        pending.add_metric([], Revision.objects.filter(review=Revision.Review.PENDING).count())
        yield pending
        suggestions = GaugeMetricFamily(
            "memoryadmin_suggestions_open",
            "Duplicates, conflicts and merge proposals waiting for a person, by kind.",
            labels=["kind"],
        )
        for kind, _label, waiting in open_by_kind():
            suggestions.add_metric([kind], waiting)
        yield suggestions
        stale = GaugeMetricFamily(
            "memoryadmin_stale_vectors",
            "Records whose vector is missing, or was computed from other text or another model.",
            labels=["surface"],
        )
        for status in embedding_status():
            stale.add_metric([status.surface], status.stale)
        yield stale


class Scrape:
    """What one scrape reports: every process's counters, then the database's gauges."""

    def collect(self) -> Iterator[Metric]:
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            processes = CollectorRegistry()
            MultiProcessCollector(processes)
            yield from processes.collect()
        else:
            yield from REGISTRY.collect()
        yield from DatabaseCollector().collect()


def bearer_matches(request: HttpRequest, token: str) -> bool:
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        given.strip().encode(), token.encode()
    )


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    token = settings.MEMORYADMIN["METRICS_TOKEN"]
    if not token:
        raise Http404
    if not bearer_matches(request, token):
        refused = HttpResponse("A metrics token is required.\n", status=401)
        refused["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return refused
    return HttpResponse(generate_latest(Scrape()), content_type=CONTENT_TYPE_LATEST)
