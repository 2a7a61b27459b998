"""Scheduled tasks: a cron schedule and the directive the agent follows when it fires."""

from __future__ import annotations

from django.db import models

from stores.models.agents import Agent
from stores.models.base import EmbeddedRecord, unique_alias


class ScheduledTask(EmbeddedRecord):
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="scheduled_tasks")
    name = models.CharField(max_length=200)
    schedule = models.CharField(max_length=100, help_text="A cron expression.")
    directive = models.TextField()
    enabled = models.BooleanField(default=True)
    last_run_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]
        indexes = [models.Index(fields=["agent", "-updated_at"], name="task_updated")]
        constraints = [
            models.UniqueConstraint(fields=["agent", "name"], name="task_unique_name"),
            unique_alias("task"),
        ]

    def __str__(self) -> str:
        return self.name

    def embedding_text(self) -> str:
        return self.directive
