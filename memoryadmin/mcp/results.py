"""A tool's answer as an MCP tool result: the same JSON the REST door answers, and a sentence.

Every answer of the registry is a JSON object with a `status` word. MCP hands it back as
`structuredContent` (that object, unchanged) and as two text blocks: a short sentence that
starts with the status word, then the object serialised as JSON — many MCP clients show a
model only the text blocks, and a model must see the whole record it read, not a summary.

A refusal (no_match, ambiguous, conflict, …; or a reference tool's own failure word) is a
result with `isError` set: MCP's "tool execution error", which clients hand to the model so
it can correct itself. It is never a JSON-RPC error.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from mcp_types import CallToolResult, TextContent

from memoryadmin.doors.errors import SUCCESS_WORDS, bounded_refusal
from stores.editing import Status


def succeeded(answer: dict[str, Any]) -> bool:
    """Did the call do what was asked? Tomori's answers say so themselves (`success`)."""
    if isinstance(answer.get("success"), bool):
        return answer["success"]
    return answer.get("status") in SUCCESS_WORDS


def summary(answer: dict[str, Any]) -> str:
    """One or two sentences a model can act on, starting with the status word."""
    status = answer.get("status", "")
    texts = [
        part["text"]
        for part in answer.get("content") or []
        if isinstance(part, dict) and part.get("type") == "text"
    ]
    if texts:
        # oh-my-pi's answers carry the sentence their model is used to.
        return f"{status}: {' '.join(texts)}"
    if answer.get("message"):
        return f"{status}: {answer['message']}"
    if isinstance(answer.get("record"), dict):
        record = answer["record"]
        return (
            f"{status}: record {record.get('id')} at version {record.get('version')}; its full "
            "text is in the JSON below. Base any replacement on this text and version."
        )
    if isinstance(answer.get("results"), list):
        shown = len(answer["results"])
        return (
            f"{status}: {answer.get('count', shown)} memories match the query and filters "
            f"(a query lists only memories relevant to it), {shown} shown. Texts are "
            "previews: read_record (or the resource memory://<id>) gives a full text."
        )
    facts = [" ".join(str(answer[key]) for key in ("surface", "id") if key in answer)]
    if "version" in answer:
        facts.append(f"version {answer['version']}")
    if "revision" in answer:
        facts.append(f"revision {answer['revision']}")
    described = ", ".join(fact for fact in facts if fact)
    return f"{status}: {described}." if described else str(status)


def tool_result(answer: dict[str, Any]) -> CallToolResult:
    answer = bounded_refusal(answer)
    # Serialised once, as the REST door would (dates, decimals), so both forms are equal.
    encoded = json.dumps(answer, ensure_ascii=False, cls=DjangoJSONEncoder)
    return CallToolResult(
        content=[TextContent(text=summary(answer)), TextContent(text=encoded)],
        structured_content=json.loads(encoded),
        is_error=not succeeded(answer),
    )


def refusal(status: Status, message: str, **details: Any) -> CallToolResult:
    """A call that could not run (bad arguments, a dead token), in the REST door's words."""
    return tool_result({"status": str(status), "message": message, **details})
