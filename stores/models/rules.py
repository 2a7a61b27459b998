"""The behavioural rules of an agent: one markdown document, kept exactly as written."""

from __future__ import annotations

from django.db import models

from stores.models.agents import Agent
from stores.models.base import VersionedRecord, unique_alias


class RulesDocument(VersionedRecord):
    agent = models.OneToOneField(Agent, on_delete=models.CASCADE, related_name="rules")
    content = models.TextField(blank=True)

    class Meta:
        verbose_name = "rules document"
        constraints = [unique_alias("rules")]

    def __str__(self) -> str:
        return f"rules.md of {self.agent_id}"
