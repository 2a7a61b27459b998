"""Working memory: short-lived key/value notes grouped by namespace."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from stores.models.agents import Agent
from stores.models.base import EmbeddedRecord, unique_alias


class WorkingMemoryEntry(EmbeddedRecord):
    """A working-memory value. Editing it never extends `expires_at`; only set_ttl does."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="working_memory")
    namespace = models.CharField(max_length=100, default="session")
    key = models.CharField(max_length=255)
    value = models.TextField()
    stored_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    category = models.CharField(max_length=100, blank=True)
    tags = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["namespace", "key"]
        verbose_name_plural = "working memory entries"
        indexes = [
            models.Index(fields=["expires_at"], name="working_expiry"),
            models.Index(fields=["agent", "-updated_at"], name="working_updated"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "namespace", "key"], name="working_unique_key"
            ),
            unique_alias("working"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.key}"

    def is_expired(self, now=None) -> bool:
        return self.expires_at is not None and self.expires_at <= (now or timezone.now())

    def embedding_text(self) -> str:
        return f"{self.key}\n{self.value}"
