"""What recall knows of an agent's common words without counting them at each query."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class TermShare(models.Model):
    """How many of an agent's memories hold a common word (its stemmed lexeme, as the
    text-search document stores it), of how many, as the last periodic count found them.

    Recall weighs a query's word by how many of the searched memories hold it. For a word
    most of a large store holds, counting is reading every memory that holds it; such a
    word's count is its share of the memories searched instead, and a search of the whole
    store takes the store's size from here too.
    """

    agent = models.ForeignKey("stores.Agent", on_delete=models.CASCADE, related_name="+")
    lexeme = models.TextField()
    holding = models.PositiveIntegerField()
    # The agent's memories still true when counted: the same for every word of one count.
    memories = models.PositiveIntegerField()
    counted_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["agent", "lexeme"], name="term_share_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.lexeme}: {self.share:.1%}"

    @property
    def share(self) -> float:
        return self.holding / self.memories
