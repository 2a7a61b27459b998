"""The one status vocabulary shared by the engine, the API, the UI and the shell."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    # A successful read (full record, list, recall): nothing was written.
    OK = "ok"
    UPDATED = "updated"
    CREATED = "created"
    DELETED = "deleted"
    INVALIDATED = "invalidated"
    REVERTED = "reverted"
    APPROVED = "approved"
    NOT_FOUND = "not_found"
    NOT_EDITABLE = "not_editable"
    NO_MATCH = "no_match"
    AMBIGUOUS = "ambiguous"
    NO_CHANGE = "no_change"
    CONFLICT = "conflict"
    PRECONDITION_REQUIRED = "precondition_required"
    SUSPECTED_TRUNCATION = "suspected_truncation"
    PRIVACY_RESTRICTED = "privacy_restricted"
    # The text holds credentials or personal data this agent's policy refuses.
    SENSITIVE_DATA = "sensitive_data"
    DISABLED = "disabled"
    FORBIDDEN = "forbidden"
    INVALID = "invalid"

    @property
    def succeeded(self) -> bool:
        return self in SUCCESS_STATUSES


SUCCESS_STATUSES = frozenset(
    {
        Status.OK,
        Status.UPDATED,
        Status.CREATED,
        Status.DELETED,
        Status.INVALIDATED,
        Status.REVERTED,
        Status.APPROVED,
    }
)
