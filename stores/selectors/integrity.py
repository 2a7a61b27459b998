"""Integrity checks a maintainer runs: stale vectors, broken replacement links, and records
whose version does not match their revision history."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import F, Q

from stores.models import Memory
from stores.selectors.embeddings import EmbeddingStatus, embedding_status
from stores.selectors.revisions import latest_version
from stores.selectors.working import expired_entries
from stores.surfaces import SURFACES

EXAMPLES = 20


@dataclass
class Finding:
    """One kind of problem: how many records have it, and the first few of them."""

    check: str
    count: int
    examples: list[str] = field(default_factory=list)


@dataclass
class IntegrityReport:
    embeddings: list[EmbeddingStatus]
    #: Real inconsistencies: something wrote around the edit service, or a bug did.
    problems: list[Finding]
    #: Work the periodic passes have not done yet (stale vectors, unpurged entries).
    backlog: list[Finding]

    @property
    def ok(self) -> bool:
        return not any(finding.count for finding in self.problems)


def _finding(check: str, records, describe) -> Finding:
    return Finding(
        check=check,
        count=records.count(),
        examples=[describe(record) for record in records[:EXAMPLES]],
    )


def broken_replacement_links() -> list[Finding]:
    links = Memory.objects.filter(superseded_by__isnull=False).select_related("superseded_by")
    return [
        _finding(
            "memory superseded by itself",
            links.filter(superseded_by=F("pk")),
            lambda memory: f"memory {memory.pk}",
        ),
        _finding(
            "memory superseded by another agent's memory",
            links.exclude(superseded_by__agent=F("agent")),
            lambda memory: f"memory {memory.pk} -> {memory.superseded_by_id}",
        ),
        _finding(
            "memory superseded but not invalidated",
            links.filter(invalidated_at__isnull=True),
            lambda memory: f"memory {memory.pk} -> {memory.superseded_by_id}",
        ),
    ]


def version_mismatches() -> list[Finding]:
    """Each record's version must be the version its latest revision produced."""
    findings = []
    for key, spec in SURFACES.items():
        records = (
            spec.model.objects.annotate(recorded_version=latest_version(key))
            .filter(Q(recorded_version__isnull=True) | ~Q(recorded_version=F("version")))
            .order_by("pk")
            .only("pk", "version")
        )
        findings.append(
            _finding(
                f"{key}: version differs from its revision history",
                records,
                lambda record: (
                    f"{record.pk}: version {record.version}, history says "
                    f"{record.recorded_version or 'nothing'}"
                ),
            )
        )
    return findings


def check_integrity() -> IntegrityReport:
    statuses = embedding_status()
    backlog = [
        Finding(check=f"{status.surface}: stale vectors", count=status.stale) for status in statuses
    ]
    backlog.append(
        _finding(
            "working: expired entries not purged yet",
            expired_entries().order_by("pk"),
            lambda entry: f"{entry.pk} ({entry})",
        )
    )
    return IntegrityReport(
        embeddings=statuses,
        problems=[*broken_replacement_links(), *version_mismatches()],
        backlog=backlog,
    )
