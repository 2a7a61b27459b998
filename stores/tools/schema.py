"""JSON Schema pieces the reference tools share with the catalog's own tools."""

from __future__ import annotations

from typing import Any

from stores.opnames import OpName
from stores.ops.catalog import CATALOG, REFUSAL_ADVICE

_PHRASE = {param.name: param.json_schema() for param in CATALOG[OpName.EDIT].parameters}
OLD_STRING = _PHRASE["old_string"]
NEW_STRING = _PHRASE["new_string"]
REPLACE_ALL = _PHRASE["replace_all"]
EXPECTED_SHA256 = {param.name: param.json_schema() for param in CATALOG[OpName.REPLACE].parameters}[
    "expected_sha256"
]

__all__ = [
    "EXPECTED_SHA256",
    "NEW_STRING",
    "OLD_STRING",
    "REFUSAL_ADVICE",
    "REPLACE_ALL",
    "record_id",
]


def record_id(what: str = "record") -> dict[str, Any]:
    return {
        "type": ["integer", "string"],
        "description": f"The {what}'s id as shown by recall or a list (or its alias).",
    }
