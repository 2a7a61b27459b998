"""Long-term memory: what the agent knows, in the shared bank or a subject's bank."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone

from stores.models.agents import Agent, Subject
from stores.models.base import EmbeddedRecord, unique_alias

SHARED_BANK = "shared"


class Memory(EmbeddedRecord):
    """A long-term memory entry. Its `store` decides which edit ops it accepts."""

    class Store(models.TextChoices):
        # The value is RockBot's and oh-my-pi's; the label says what it means, since
        # "working" read like the separate working-memory surface.
        WORKING = "working", "Editable (long-term)"
        EPISODIC = "episodic", "Episodic (history: invalidate only)"
        FACT = "fact", "Fact (read-only projection)"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="memories")
    subject = models.ForeignKey(
        Subject,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="memories",
        help_text="Empty for the agent-wide shared bank.",
    )
    store = models.CharField(max_length=10, choices=Store, default=Store.WORKING)
    category = models.CharField(max_length=100, default="general")
    tags = models.JSONField(default=list, blank=True)
    content = models.TextField()
    importance = models.FloatField(default=0.5)
    importance_floor = models.FloatField(default=0.0)
    pinned = models.BooleanField(default=False, help_text="Pinned memories do not decay.")
    last_seen_at = models.DateTimeField(default=timezone.now)
    reinforcement_count = models.PositiveIntegerField(default=1)
    metadata = models.JSONField(default=dict, blank=True)
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    invalidated_at = models.DateTimeField(null=True, blank=True)
    archived_at = models.DateTimeField(null=True, blank=True)
    decayed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "memories"
        ordering = ["-updated_at", "-id"]
        # The admin permission of PRODUCT.md section 2: a human holding it may change episodic
        # and fact rows (the shell's maintainers always may).
        permissions = [
            ("bypass_store_rules", "Can change episodic and fact memories despite store rules")
        ]
        indexes = [
            models.Index(fields=["agent", "subject"], name="memory_bank"),
            models.Index(fields=["agent", "category"], name="memory_category"),
            models.Index(fields=["agent", "store"], name="memory_store"),
            # The web list's default order, and the recent memories recall measures its
            # baseline on: read from the index in order, id included, so neither sorts the
            # agent's memories (recall's sample took 350 ms at 100,000 memories that shared
            # one updated_at, computing every vector's distance before the sort).
            models.Index(fields=["agent", "-updated_at", "-id"], name="memory_updated"),
            # What the web list counts for its pager on each request: recall's default
            # filter (still true) by an index-only scan (4 ms at 100,000, not 30).
            models.Index(
                fields=["agent"],
                condition=Q(invalidated_at__isnull=True, superseded_by__isnull=True),
                name="memory_still_true",
            ),
            # The agent's embedded memories, for the vector side of recall when an agent has
            # few or none (fresh after an import, before the sweep): the planner read every
            # memory of the agent to find no vector (50 ms at 100,000 rows, 0.5 ms this way).
            models.Index(
                fields=["agent"], condition=Q(embedding__isnull=False), name="memory_embedded"
            ),
            # No index may cover importance or decayed_at: the decay pass rewrites both on
            # every row, and only while no indexed column changes can PostgreSQL update a
            # row in place (a HOT update) instead of adding an entry to every index,
            # including the expensive HNSW and full-text ones.
        ]
        constraints = [
            unique_alias("memory"),
            models.CheckConstraint(
                condition=Q(importance__gte=0.0) & Q(importance__lte=1.0),
                name="memory_importance_range",
            ),
        ]

    def __str__(self) -> str:
        return f"Memory {self.pk}"

    @property
    def bank(self) -> str:
        return bank_label(self.subject)

    def embedding_text(self) -> str:
        return "\n".join(
            part for part in (self.content, " ".join(self.tags), self.category) if part
        )


def bank_label(subject: Subject | None) -> str:
    return SHARED_BANK if subject is None else f"subject:{subject.external_id}"
