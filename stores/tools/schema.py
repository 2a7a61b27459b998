"""JSON Schema pieces the tool definitions share, with descriptions written for a model."""

from __future__ import annotations

from typing import Any

from stores.selectors.search import max_query_length

SURFACE_KEYS = ["memory", "working", "skill", "task", "rules"]

REFUSAL_ADVICE = (
    " A refusal (no_match, ambiguous, conflict, suspected_truncation, ...) means the text "
    "is not what you think: read the record again and base the next call on what you read; "
    "never repeat the same call unchanged."
)


def record_id(what: str = "record") -> dict[str, Any]:
    return {
        "type": ["integer", "string"],
        "description": f"The {what}'s id as shown by recall or a list (or its alias).",
    }


SURFACE = {
    "type": "string",
    "enum": SURFACE_KEYS,
    "description": "memory (long-term), working (working memory), skill, task "
    "(scheduled-task directive) or rules (the rules document).",
}
OLD_STRING = {
    "type": "string",
    "description": "The exact text to replace, copied from a full read of the record "
    "(keep whitespace and punctuation). Quote enough to be unique.",
}
NEW_STRING = {"type": "string", "description": "The text to put in its place."}
REPLACE_ALL = {
    "type": "boolean",
    "default": False,
    "description": "Replace every occurrence instead of refusing when the text occurs "
    "more than once.",
}
EXPECTED_VERSION = {
    "type": "integer",
    "minimum": 1,
    "description": "The version you read; the write is refused (conflict) if the record "
    "changed since.",
}
QUERY = {
    "type": "string",
    "maxLength": max_query_length(),
    "description": "Words to look for: a few words or a sentence.",
}
