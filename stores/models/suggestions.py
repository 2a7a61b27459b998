"""Suggestions: pairs (or groups) of an agent's memories for a person to settle.

A suggestion is found by the suggestion pass (a duplicate or a conflict) or proposed by an
actor (an agent's merge). It pins each record at the version and text it was found at: a
record that moves since makes accepting it a conflict, and the pass marks it stale.
"""

from __future__ import annotations

from django.db import models


class Suggestion(models.Model):
    """Two or more of an agent's memories that say the same thing, or contradict each other,
    or that an actor proposes to merge; open until someone accepts or dismisses it."""

    class Kind(models.TextChoices):
        DUPLICATE = "duplicate", "Duplicate"
        CONFLICT = "conflict", "Conflict"
        MERGE = "merge", "Merge proposal"

    class State(models.TextChoices):
        OPEN = "open", "Open"
        ACCEPTED = "accepted", "Accepted"
        DISMISSED = "dismissed", "Dismissed"
        STALE = "stale", "Stale"

    agent = models.ForeignKey("stores.Agent", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=10, choices=Kind)
    status = models.CharField(max_length=10, choices=State, default=State.OPEN)
    score = models.FloatField(default=0.0)
    reason = models.CharField(max_length=500)
    # What settling it would do: {"keep": id} and, for a merge, the merged "content".
    proposal = models.JSONField(default=dict, blank=True)
    # The pass ("pass:suggestions") or the actor that proposed it.
    found_by = models.CharField(max_length=255)
    # The records and the texts they had, as one digest: the pass never suggests a pair
    # again (open, dismissed or settled) while both texts stay as they were.
    fingerprint = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    settled_at = models.DateTimeField(null=True, blank=True)
    settled_by = models.CharField(max_length=255, blank=True)
    # The revisions the accepting wrote.
    revisions = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["agent", "status", "kind"], name="suggestion_inbox"),
            models.Index(fields=["agent", "fingerprint"], name="suggestion_fingerprint"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} suggestion {self.pk} ({self.status})"


class SuggestedRecord(models.Model):
    """One memory of a suggestion, pinned at the version and text it was found at."""

    suggestion = models.ForeignKey(Suggestion, on_delete=models.CASCADE, related_name="records")
    memory_id = models.BigIntegerField()
    version = models.PositiveIntegerField()
    text_hash = models.CharField(max_length=64)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["memory_id"], name="suggested_memory")]

    def __str__(self) -> str:
        return f"memory {self.memory_id} v{self.version} of suggestion {self.suggestion_id}"
