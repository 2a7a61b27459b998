"""List-append histories: what each client asked and heard, checked against what was stored.

Every edit inserts a token unique to it in front of one anchor of a hot record, so a
record's text is a list the writers append to (newest first), and its revision chain is the
order the database applied them in. The checks are those of Elle's list-append model,
for one anchor per record:

- an edit answered as applied is in the final text exactly once; a refused one is absent;
  one that got no answer (timeout, broken connection) is there at most once;
- the revision chain is gap-free (versions 1..n, each from the one before), its length is
  the applied edits plus the create, each revision's text is the previous one's with its
  own token inserted (no lost or reordered write), and the last one is the record's text;
- the version an applied edit was answered with is the revision that inserted its token;
- real time: an edit that was answered before another was sent sits below it in the chain;
- the background work (decay, re-embedding) never wrote a revision or changed text.

A failure prints the minimal history that shows it: the ops and revisions involved, and
the ops that overlapped them in time.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field

ANCHOR = "¶"


@dataclass
class Op:
    """One client request: who sent it, on which record, its token, and what it heard."""

    writer: str
    record_id: int
    token: str
    invoked: float
    completed: float = 0.0
    outcome: str = "unknown"  # "applied" | "refused" | "unknown"
    status: str = ""
    http_code: int = 0
    version: int | None = None
    expected_version: int | None = None

    def line(self) -> str:
        sent = f" expected v{self.expected_version}" if self.expected_version else ""
        answer = f" -> v{self.version}" if self.version else ""
        return (
            f"  [{self.invoked:9.4f} .. {self.completed:9.4f}] {self.writer:<10} "
            f"{self.token}{sent}: {self.http_code} {self.status}{answer} ({self.outcome})"
        )


@dataclass
class StoredRevision:
    version_before: int
    version_after: int
    op: str
    actor: str
    channel: str
    before_text: str
    after_text: str


@dataclass
class Anomaly:
    kind: str
    record_id: int
    message: str
    ops: list[Op] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)


def tokens_in(text: str) -> list[str]:
    """The tokens of a record's text, newest first (each edit puts its own before the anchor)."""
    head = text.split(ANCHOR, 1)[0]
    return [word for word in head.split() if word.startswith("<") and word.endswith(">")]


def inserted_token(revision: StoredRevision) -> str | None:
    """The one token a revision added, if it did exactly that."""
    before, after = (
        Counter(tokens_in(revision.before_text)),
        Counter(tokens_in(revision.after_text)),
    )
    added = after - before
    if before - after or sum(added.values()) != 1:
        return None
    return next(iter(added))


def check_record(
    record_id: int,
    text: str,
    version: int,
    seed_text: str,
    chain: list[StoredRevision],
    ops: list[Op],
) -> list[Anomaly]:
    anomalies: list[Anomaly] = []
    counts = Counter(tokens_in(text))
    for op in ops:
        seen = counts[op.token]
        if op.outcome == "applied" and seen != 1:
            anomalies.append(
                Anomaly(
                    "lost" if seen == 0 else "duplicated",
                    record_id,
                    f"{op.token} answered applied, found {seen} times",
                    [op],
                )
            )
        elif op.outcome == "refused" and seen:
            anomalies.append(
                Anomaly(
                    "refused-but-present",
                    record_id,
                    f"{op.token} answered {op.status}, found {seen} times",
                    [op],
                )
            )
        elif op.outcome == "unknown" and seen > 1:
            anomalies.append(
                Anomaly("duplicated", record_id, f"{op.token} unanswered, found {seen} times", [op])
            )
    known = {op.token for op in ops}
    for token in counts:
        if token not in known:
            anomalies.append(Anomaly("phantom", record_id, f"{token} was never sent"))

    versions = [r.version_after for r in chain]
    if versions != list(range(1, len(chain) + 1)) or any(
        r.version_before != r.version_after - 1 for r in chain
    ):
        anomalies.append(
            Anomaly(
                "gap", record_id, f"revision versions are {versions[:50]}...", versions=versions
            )
        )
    if version != len(chain):
        anomalies.append(
            Anomaly("version", record_id, f"record at v{version} has {len(chain)} revisions")
        )
    applied = [op for op in ops if op.outcome == "applied"]
    unknown_present = [op for op in ops if op.outcome == "unknown" and counts[op.token]]
    if len(chain) != 1 + len(applied) + len(unknown_present):
        anomalies.append(
            Anomaly(
                "chain-length",
                record_id,
                f"{len(chain)} revisions for {len(applied)} applied edits "
                f"(+{len(unknown_present)} unanswered that landed) and the create",
            )
        )
    if chain and (chain[0].op != "create" or chain[0].after_text != seed_text):
        anomalies.append(Anomaly("create", record_id, "the first revision is not the create"))
    if chain and chain[-1].after_text != text:
        anomalies.append(
            Anomaly("text", record_id, "the text is not its last revision's", versions=[version])
        )

    by_token = {op.token: op for op in ops}
    version_of: dict[str, int] = {}
    for previous, revision in itertools.pairwise(chain):
        if revision.before_text != previous.after_text:
            anomalies.append(
                Anomaly(
                    "lost-update",
                    record_id,
                    f"v{revision.version_after} was not built on v{previous.version_after}",
                    versions=[previous.version_after, revision.version_after],
                )
            )
        token = inserted_token(revision)
        if revision.op != "edit" or revision.channel == "task" or token is None:
            anomalies.append(
                Anomaly(
                    "foreign-write",
                    record_id,
                    f"v{revision.version_after} ({revision.op} by {revision.actor}, "
                    f"{revision.channel}) is not one client's phrase edit",
                    versions=[revision.version_after],
                )
            )
            continue
        version_of[token] = revision.version_after
        op = by_token.get(token)
        if op is not None and op.outcome == "applied" and op.version != revision.version_after:
            anomalies.append(
                Anomaly(
                    "acknowledgement",
                    record_id,
                    f"{token} answered v{op.version}, written as v{revision.version_after}",
                    [op],
                    [revision.version_after],
                )
            )

    # Real time: answered before the other was sent means applied before it.
    ordered = sorted((op for op in applied if op.token in version_of), key=lambda op: op.completed)
    by_invocation = sorted(ordered, key=lambda op: op.invoked)
    for later in by_invocation:
        for earlier in ordered:
            if earlier.completed >= later.invoked:
                break
            if version_of[earlier.token] > version_of[later.token]:
                anomalies.append(
                    Anomaly(
                        "real-time",
                        record_id,
                        f"{earlier.token} was answered before {later.token} was sent but "
                        "was applied after it",
                        [earlier, later],
                        [version_of[earlier.token], version_of[later.token]],
                    )
                )
                break
    return anomalies


def explain(anomaly: Anomaly, ops: list[Op], chain: list[StoredRevision]) -> str:
    """The smallest history that shows the anomaly: its ops, revisions, and what overlapped."""
    lines = [f"{anomaly.kind} on record {anomaly.record_id}: {anomaly.message}"]
    if anomaly.ops:
        start = min(op.invoked for op in anomaly.ops)
        end = max(op.completed or op.invoked for op in anomaly.ops)
        overlapping = [
            op
            for op in ops
            if op not in anomaly.ops and op.invoked <= end and (op.completed or end) >= start
        ]
        lines.append(" ops:")
        lines += [op.line() for op in anomaly.ops]
        if overlapping:
            lines.append(f" concurrent ops ({len(overlapping)}, first 8):")
            lines += [op.line() for op in overlapping[:8]]
    versions = set(anomaly.versions)
    versions |= {op.version for op in anomaly.ops if op.version}
    around = sorted({v + d for v in versions for d in (-1, 0, 1) if 1 <= v + d <= len(chain)})
    if around:
        lines.append(" revisions:")
        for version in around:
            revision = chain[version - 1]
            lines.append(
                f"  v{revision.version_before}->v{revision.version_after} {revision.op} "
                f"by {revision.actor} ({revision.channel}) inserted {inserted_token(revision)}"
            )
    return "\n".join(lines)
