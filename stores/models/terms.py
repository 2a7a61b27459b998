"""What recall knows of an agent's common words without counting them at each query."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class TermShare(models.Model):
    """The share of an agent's memories that hold a common word (its stemmed lexeme, as the
    text-search document stores it), as the last periodic count found it.

    Recall weighs a query's word by how many of the searched memories hold it. For a word
    most of a large store holds, counting is reading every memory that holds it; such a
    word's count is this share of the memories searched instead.
    """

    agent = models.ForeignKey("stores.Agent", on_delete=models.CASCADE, related_name="+")
    lexeme = models.TextField()
    share = models.FloatField()
    counted_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["agent", "lexeme"], name="term_share_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.lexeme}: {self.share:.1%}"
