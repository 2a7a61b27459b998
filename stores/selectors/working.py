"""Working-memory reads: which entries are past their `expires_at`."""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet
from django.utils import timezone

from stores.models import WorkingMemoryEntry


def expired_entries(now: datetime | None = None) -> QuerySet[WorkingMemoryEntry]:
    return WorkingMemoryEntry.objects.filter(expires_at__lte=now or timezone.now())
