"""Webhooks: an agent's changes sent to a URL, and the log of each attempt."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Webhook(models.Model):
    """A URL that hears of the agent's changes, in feed order, from `cursor` on.

    Delivery is at least once and in order: `cursor` moves past a change only once it was
    delivered (or given up on), and while `attempt` counts tries at the change after it,
    nothing later goes out. `leased_until` keeps two workers from delivering at once.
    """

    class Format(models.TextChoices):
        STANDARD = "standard", "Standard Webhooks (signed JSON)"
        DISCORD = "discord", "Discord (one embed per change)"

    agent = models.ForeignKey("stores.Agent", on_delete=models.CASCADE, related_name="webhooks")
    name = models.CharField(max_length=100, blank=True)
    # As it goes on the wire (host in ASCII, path percent-encoded): what was given is at most
    # 2,000 characters, and written out it may be longer.
    url = models.TextField()
    # Which changes go out: "<surface>.<status>" patterns such as "memory.*" or "*.deleted".
    events = models.JSONField(default=list)
    format = models.CharField(max_length=10, choices=Format, default=Format.STANDARD)
    # The Standard Webhooks signing secret ("whsec_…"), shown once; Discord needs none.
    # Stored encrypted (stores.webhooks.sealing).
    secret = models.CharField(max_length=255, blank=True, editable=False)
    enabled = models.BooleanField(default=True)
    disabled_reason = models.TextField(blank=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    cursor = models.BigIntegerField(default=0, editable=False)
    attempt = models.PositiveIntegerField(default=0, editable=False)
    retry_at = models.DateTimeField(null=True, blank=True, editable=False)
    leased_until = models.DateTimeField(null=True, blank=True, editable=False)
    lease = models.CharField(max_length=32, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["agent", "enabled"], name="webhook_agent")]

    def __str__(self) -> str:
        return self.name or self.url


class WebhookDelivery(models.Model):
    """One attempt to deliver one change: when, the answer, how long it took."""

    class Outcome(models.TextChoices):
        DELIVERED = "delivered", "Delivered"
        RETRYING = "retrying", "Failed, will retry"
        FAILED = "failed", "Failed, given up"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    change_id = models.BigIntegerField()
    revision_id = models.BigIntegerField(null=True, blank=True)
    event = models.CharField(max_length=40)
    attempt = models.PositiveIntegerField()
    at = models.DateTimeField()
    duration_ms = models.FloatField(default=0.0)
    http_status = models.PositiveIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=10, choices=Outcome)
    error = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["webhook", "-id"], name="webhook_delivery_log")]
        verbose_name_plural = "webhook deliveries"

    def __str__(self) -> str:
        return f"{self.event} #{self.revision_id} attempt {self.attempt}: {self.outcome}"
