"""The webhook pages: add one (its secret shown once), the list, the delivery log with the
reason a webhook was disabled, switching it, deleting it; viewers are kept out."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from stores.models import Webhook, WebhookDelivery
from stores.webhooks import sealing
from tests.web.conftest import htmx

pytestmark = pytest.mark.django_db

URL = "https://discord.com/api/webhooks/123456/secret-token-part"


def url(name, *args):
    return reverse(f"web:{name}", args=args)


def test_the_agent_nav_links_to_its_webhooks(staff_client, agent):
    page = staff_client.get(url("dashboard", agent.name)).content.decode()
    assert f'href="{url("webhooks", agent.name)}"' in page


def test_adding_a_webhook_shows_its_secret_once(staff_client, agent):
    added = staff_client.post(
        url("webhook_new", agent.name),
        {
            "url": "https://hooks.example.com/in",
            "format": "standard",
            "events": "memory.*, *.deleted",
        },
        headers=htmx("webhooks"),
    )
    assert added.status_code == 200 and added["Cache-Control"] == "no-store"
    webhook = Webhook.objects.get(agent=agent)
    assert webhook.events == ["memory.*", "*.deleted"]
    # Stored sealed: the page shows the secret itself, once.
    secret = sealing.unseal(webhook.secret)
    assert secret.startswith("whsec_") and secret in added.content.decode()

    listed = staff_client.get(url("webhooks", agent.name)).content.decode()
    assert secret not in listed
    assert "https://hooks.example.com/in" in listed


def test_a_discord_url_is_listed_without_its_token(staff_client, agent):
    staff_client.post(url("webhook_new", agent.name), {"url": URL, "format": "discord"})
    listed = staff_client.get(url("webhooks", agent.name)).content.decode()
    assert "secret-token-part" not in listed
    assert "https://discord.com/api/webhook…" in listed


def test_a_refused_webhook_says_why_in_place(staff_client, agent):
    refused = staff_client.post(
        url("webhook_new", agent.name),
        {"url": "ftp://example.com/", "format": "standard"},
        headers=htmx("webhooks"),
    )
    assert refused.status_code == 400
    assert "Only http and https" in refused.content.decode()
    assert not Webhook.objects.exists()


def test_the_log_shows_each_attempt_and_why_a_webhook_was_disabled(staff_client, agent):
    webhook = Webhook.objects.create(
        agent=agent,
        url=URL,
        format="discord",
        events=["*"],
        enabled=False,
        disabled_reason="Disabled after 5 changes in a row could not be delivered; HTTP 404",
        disabled_at=timezone.now(),
    )
    for attempt, status, outcome in [(1, 503, "retrying"), (2, 404, "failed")]:
        WebhookDelivery.objects.create(
            webhook=webhook,
            change_id=7,
            revision_id=42,
            event="memory.updated",
            attempt=attempt,
            at=timezone.now(),
            duration_ms=12.5,
            http_status=status,
            outcome=outcome,
        )

    page = staff_client.get(url("webhook_detail", agent.name, webhook.pk)).content.decode()

    assert "data-disabled-reason" in page and "HTTP 404" in page
    assert page.count('data-outcome="') == 2
    assert ">503<" in page and ">404<" in page and "13 ms" in page
    assert "Enable again" in page


def test_switching_and_deleting_a_webhook(staff_client, agent):
    webhook = Webhook.objects.create(agent=agent, url=URL, format="discord", events=["*"])

    staff_client.post(url("webhook_switch", agent.name, webhook.pk), {"enabled": "false"})
    webhook.refresh_from_db()
    assert not webhook.enabled and "Disabled by user:" in webhook.disabled_reason
    staff_client.post(url("webhook_switch", agent.name, webhook.pk), {"enabled": "true"})
    webhook.refresh_from_db()
    assert webhook.enabled and webhook.disabled_reason == ""

    gone = staff_client.post(url("webhook_remove", agent.name, webhook.pk), headers=htmx())
    assert gone["HX-Redirect"] == url("webhooks", agent.name)
    assert not Webhook.objects.exists()


def test_viewers_neither_see_nor_change_webhooks(viewer_client, agent):
    webhook = Webhook.objects.create(agent=agent, url=URL, format="discord", events=["*"])

    page = viewer_client.get(url("webhooks", agent.name)).content.decode()
    assert "write access" in page and "secret-token-part" not in page
    assert 'name="url"' not in page
    assert viewer_client.get(url("webhook_detail", agent.name, webhook.pk)).status_code == 302
    viewer_client.post(url("webhook_remove", agent.name, webhook.pk))
    viewer_client.post(url("webhook_new", agent.name), {"url": URL, "format": "discord"})
    assert list(Webhook.objects.values_list("pk", flat=True)) == [webhook.pk]


def test_another_agents_webhook_is_not_found(staff_client, agent, other_agent):
    theirs = Webhook.objects.create(agent=other_agent, url=URL, format="discord", events=["*"])
    assert staff_client.get(url("webhook_detail", agent.name, theirs.pk)).status_code == 404
