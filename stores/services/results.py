"""The answer of every service call: a status word and what the caller needs to act on it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stores.editing import Status


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
