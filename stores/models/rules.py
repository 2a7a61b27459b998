"""The behavioural rules of an agent: one markdown document, kept exactly as written."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from stores.models.agents import Agent
from stores.models.base import VersionedRecord


class RulesDocument(VersionedRecord):
    agent = models.OneToOneField(Agent, on_delete=models.CASCADE, related_name="rules")
    content = models.TextField(blank=True)

    class Meta:
        verbose_name = "rules document"
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "alias"],
                condition=Q(alias__isnull=False),
                name="rules_unique_alias",
            ),
        ]

    def __str__(self) -> str:
        return f"rules.md of {self.agent_id}"
