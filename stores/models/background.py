"""What the periodic passes leave behind for the operator."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class DecayPass(models.Model):
    """One run of the importance decay: when, how long, how many memories it lowered."""

    started_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_seconds = models.FloatField(default=0.0)
    rows_touched = models.PositiveBigIntegerField(default=0)
    batches = models.PositiveIntegerField(default=0)
    half_life_days = models.FloatField()
    # Who ran it: "task:decay" for the scheduled pass, "shell:<name>" from a command.
    triggered_by = models.CharField(max_length=100, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at"]
        verbose_name_plural = "decay passes"

    def __str__(self) -> str:
        return f"Decay pass {self.started_at:%Y-%m-%d %H:%M:%S}"

    @property
    def daily_factor(self) -> float:
        """What one day of decay multiplies importance by."""
        return 0.5 ** (1.0 / self.half_life_days)
