"""Encrypt every webhook signing secret again with the first of the configured keys."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from stores.models import Webhook
from stores.webhooks import sealing


class Command(BaseCommand):
    help = (
        "Re-encrypt every webhook's signing secret with the first key of "
        "MEMORYADMIN_WEBHOOK_SECRET_KEYS (the others only decrypt); then the old keys can go."
    )

    def handle(self, *args, **options) -> None:
        count = 0
        for webhook in Webhook.objects.exclude(secret="").only("secret").iterator():
            # Only the column: no other field of a webhook a delivery may be updating.
            Webhook.objects.filter(pk=webhook.pk).update(secret=sealing.reseal(webhook.secret))
            count += 1
        self.stdout.write(f"Re-encrypted {count} webhook secrets with the first key.")
