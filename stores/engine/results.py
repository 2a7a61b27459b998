"""The answer of every write: a status word and what the caller needs to act on it.

`returns_result` turns a write's expected refusals into its answer and logs and counts every
write; `success` and `would_be` are the answers about a record written or previewed.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ParamSpec

from stores import metrics
from stores.editing import Status, TextEditError, unified_diff
from stores.errors import ApplicationError
from stores.models import (
    Revision,
    VersionedRecord,
)
from stores.surfaces import SurfaceSpec


@dataclass
class WriteResult:
    status: Status
    message: str = ""
    surface: str | None = None
    id: int | None = None
    version: int | None = None
    revision: int | None = None
    diff: str | None = None
    store: str | None = None
    bank: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    record: Any = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.status.succeeded

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"status": str(self.status)}
        if self.message:
            body["message"] = self.message
        for key in ("surface", "id", "version", "revision", "diff", "store", "bank"):
            value = getattr(self, key)
            if value is not None:
                body[key] = value
        body.update(self.details)
        return body


logger = logging.getLogger("memoryadmin.writes")


P = ParamSpec("P")


def returns_result(function: Callable[P, WriteResult], name: str = "") -> Callable[P, WriteResult]:
    """Turn expected refusals into results; everything else is a real error. The write log
    names the function (`name`, for an op's own method: the service it is)."""
    operation = name or function.__name__

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> WriteResult:
        try:
            result = function(*args, **kwargs)
        except ApplicationError as error:
            result = WriteResult(
                status=error.status, message=error.message, details=dict(error.details)
            )
        except TextEditError as error:
            result = WriteResult(
                status=error.status, message=error.message, details=dict(error.details)
            )
        _log(operation, kwargs, result)
        if not kwargs.get("dry_run"):
            actor = kwargs.get("actor")
            door = getattr(actor, "channel", "unknown")
            metrics.count_write(operation, door, str(result.status), refused=not result.ok)
        return result

    if name:
        wrapper.__name__ = wrapper.__qualname__ = name
    return wrapper


def _log(operation: str, kwargs: dict[str, Any], result: WriteResult) -> None:
    actor = kwargs.get("actor")
    agent = kwargs.get("agent")
    ref = kwargs.get("ref")
    # record_id is always the numeric id (None when the write was refused before one was
    # known); ref is the id or alias the caller gave, as text.
    record_id = result.id
    surface = result.surface or kwargs.get("surface_key")
    dry_run = bool(kwargs.get("dry_run"))
    # Ids and words only: the text written never goes into the message or its fields.
    logger.info(
        "%s %s %s: %s %s",
        "preview" if dry_run else "write",
        operation,
        result.status,
        surface,
        record_id if record_id is not None else ref,
        extra={
            "op": operation,
            "status": str(result.status),
            "agent": getattr(agent, "name", None),
            "record_id": record_id,
            "ref": str(ref) if ref is not None else None,
            "surface": surface,
            "actor": getattr(actor, "label", None),
            "channel": getattr(actor, "channel", None),
            "dry_run": dry_run,
        },
    )


def success(
    spec: SurfaceSpec,
    record: VersionedRecord,
    revision: Revision,
    *,
    status: Status,
    diff: str | None,
    message: str = "",
    details: dict[str, Any] | None = None,
) -> WriteResult:
    details = dict(details or {})
    if revision.review == Revision.Review.PENDING:
        # The writer (an agent) is told its change waits for a person, who may revert it.
        details["review"] = str(Revision.Review.PENDING)
        waits = "It awaits review: a person may approve it or revert it."
        message = f"{message} {waits}" if message else waits
    return _record_result(
        spec, record, status=status, message=message, diff=diff, details=details, revision=revision
    )


def would_be(
    spec: SurfaceSpec,
    record: VersionedRecord,
    *,
    status: Status,
    text_field: str,
    before_text: str,
    after_text: str,
    message: str = "",
    details: dict[str, Any] | None = None,
) -> WriteResult:
    """What a write would answer, written nothing: a dry run's result.

    `version` is the one the change was computed against (the version a confirming write
    sends back as its precondition); there is no revision. `details` carry `dry_run`, the text
    field and its would-be text, beside the op's own details (replacements, lines).
    """
    return _record_result(
        spec,
        record,
        status=status,
        message=message,
        diff=record_diff(spec, record, before_text, after_text),
        details={**(details or {}), "dry_run": True, "field": text_field, "text": after_text},
    )


def _record_result(
    spec: SurfaceSpec,
    record: VersionedRecord,
    *,
    status: Status,
    message: str,
    diff: str | None,
    details: dict[str, Any],
    revision: Revision | None = None,
) -> WriteResult:
    """The answer about a record written or previewed: the record, its version and, for a
    surface with stores, where it is kept (its store and bank)."""
    kept = spec.store_policy
    return WriteResult(
        status=status,
        message=message,
        surface=spec.key,
        id=record.pk,
        version=record.version,
        revision=revision.pk if revision is not None else None,
        diff=diff,
        store=record.store if kept else None,
        bank=record.bank if kept else None,
        details=details,
        record=record,
    )


def record_diff(spec: SurfaceSpec, record: VersionedRecord, before: str, after: str) -> str:
    return unified_diff(before, after, label=f"{spec.key}/{record.pk}")
