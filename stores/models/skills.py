"""Skills: named markdown procedures with a summary used for recall."""

from __future__ import annotations

from django.db import models

from stores.models.agents import Agent
from stores.models.base import EmbeddedRecord, unique_alias


class Skill(EmbeddedRecord):
    """A skill. Its vector reads name + summary, so a body edit needs no re-embedding."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="skills")
    name = models.CharField(max_length=200)
    summary = models.TextField(blank=True)
    content = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]
        indexes = [models.Index(fields=["agent", "-updated_at"], name="skill_updated")]
        constraints = [
            models.UniqueConstraint(fields=["agent", "name"], name="skill_unique_name"),
            unique_alias("skill"),
        ]

    def __str__(self) -> str:
        return self.name

    def embedding_text(self) -> str:
        return f"{self.name}\n{self.summary}"
