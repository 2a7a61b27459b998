"""Refusals of the services and selectors: one exception family, each carrying its status word."""

from __future__ import annotations

from typing import Any

from stores.editing import Status, TextEditError


class ApplicationError(Exception):
    status: Status = Status.INVALID

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


def refusal_of(error: TextEditError) -> ApplicationError:
    """The text engine's refusal as a service's, its status word kept (for reads, which
    raise rather than answer a WriteResult)."""
    refused = ApplicationError(error.message, **error.details)
    refused.status = error.status
    return refused


class NotFound(ApplicationError):
    status = Status.NOT_FOUND


class NotEditable(ApplicationError):
    status = Status.NOT_EDITABLE


class Conflict(ApplicationError):
    status = Status.CONFLICT


class PreconditionRequired(ApplicationError):
    status = Status.PRECONDITION_REQUIRED


class SuspectedTruncation(ApplicationError):
    status = Status.SUSPECTED_TRUNCATION


class PrivacyRestricted(ApplicationError):
    status = Status.PRIVACY_RESTRICTED


class SensitiveData(ApplicationError):
    status = Status.SENSITIVE_DATA


class Disabled(ApplicationError):
    status = Status.DISABLED


class Forbidden(ApplicationError):
    status = Status.FORBIDDEN


class Invalid(ApplicationError):
    status = Status.INVALID


class NoChangeError(ApplicationError):
    status = Status.NO_CHANGE
