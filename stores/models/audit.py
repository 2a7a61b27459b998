"""The audit log: erasures, redactions, overrides and memory stores' own changes, one row each,
never changed."""

from __future__ import annotations

from typing import Any, NoReturn

from django.db import models


class AppendOnly(models.QuerySet["AuditEntry"]):
    """Rows are added, never changed or removed in bulk either."""

    def update(self, **kwargs: Any) -> NoReturn:
        raise TypeError("Audit entries are never changed once written.")

    def delete(self) -> NoReturn:
        raise TypeError("Audit entries are never deleted.")


class AuditEntry(models.Model):
    """One act a person must be able to account for. Rows are only ever added.

    `details` names what was done (counts, hashes, ids), never the text it removed. The
    agent's name is kept beside the link so an entry outlives the agent it was about.
    """

    class Kind(models.TextChoices):
        ERASURE = "erasure", "Erasure"
        REDACTION = "redaction", "Redaction"
        OVERRIDE = "override", "Override"
        MEMORY_STORE = "memory_store", "Memory store"

    kind = models.CharField(max_length=20, choices=Kind)
    actor = models.CharField(max_length=255)
    agent = models.ForeignKey(
        "stores.Agent", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    agent_name = models.CharField(max_length=100, blank=True)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    objects = AppendOnly.as_manager()

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.kind} by {self.actor} ({self.agent_name or 'no agent'})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise TypeError("An audit entry is never changed once written.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("An audit entry is never deleted.")
