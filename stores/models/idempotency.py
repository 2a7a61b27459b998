"""The first answer to a write sent with an Idempotency-Key, kept to answer its retries."""

from __future__ import annotations

from django.db import models


class IdempotentRequest(models.Model):
    """One Idempotency-Key of one caller.

    A row is reserved (status_code 0) before the write runs and completed with the
    answer afterwards, so a retry that arrives while the first attempt still runs is
    told so instead of applying the write twice.
    """

    IN_PROGRESS = 0

    owner = models.CharField(max_length=100, help_text="token:<id> or user:<id>")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of method, path and body.")
    status_code = models.PositiveSmallIntegerField(default=IN_PROGRESS)
    body = models.JSONField(default=dict, blank=True)
    headers = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["owner", "key"], name="idempotency_unique_key"),
        ]

    def __str__(self) -> str:
        return f"{self.owner} {self.key}"
