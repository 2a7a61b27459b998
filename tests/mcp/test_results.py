"""A tool's answer as an MCP result: the same JSON, a sentence first, isError for refusals."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from memoryadmin.mcp.results import tool_result


@pytest.mark.parametrize(
    ("answer", "sentence", "is_error"),
    [
        (
            {"status": "updated", "surface": "memory", "id": 4, "version": 3, "revision": 9},
            "updated: memory 4, version 3, revision 9.",
            False,
        ),
        (
            {"status": "conflict", "message": "The record is at version 5.", "current_version": 5},
            "conflict: The record is at version 5.",
            True,
        ),
        (
            {"status": "ok", "record": {"id": 4, "version": 3, "content": "x"}},
            "ok: record 4 at version 3; its full text is in the JSON below. Base any "
            "replacement on this text and version.",
            False,
        ),
        (
            {"status": "ok", "count": 12, "results": [{"id": 1}, {"id": 2}]},
            "ok: 12 memories match the query and filters (a query lists only memories "
            "relevant to it), 2 shown. Texts are previews: read_record (or the resource "
            "memory://<id>) gives a full text.",
            False,
        ),
        (
            {
                "status": "not_editable",
                "content": [{"type": "text", "text": "Memory 4 is a read-only fact."}],
                "details": {"status": "not_editable", "store": "fact"},
            },
            "not_editable: Memory 4 is a read-only fact.",
            True,
        ),
        (
            {"status": "memory_deleted_successfully", "success": True, "message": "Deleted."},
            "memory_deleted_successfully: Deleted.",
            False,
        ),
        (
            {"status": "memory_update_failed_ambiguous_user", "success": False, "message": "Two."},
            "memory_update_failed_ambiguous_user: Two.",
            True,
        ),
    ],
)
def test_every_answer_reads_as_a_sentence_and_as_json(answer, sentence, is_error):
    result = tool_result(answer)
    assert [block.text for block in result.content] == [sentence, json.dumps(answer)]
    assert result.structured_content == answer
    assert result.is_error is is_error


def test_dates_are_written_as_the_rest_door_writes_them():
    moment = dt.datetime(2026, 5, 1, 12, 30, tzinfo=dt.UTC)
    result = tool_result({"status": "ok", "record": {"id": 1, "version": 1, "at": moment}})
    assert result.structured_content["record"]["at"] == "2026-05-01T12:30:00Z"
    assert json.loads(result.content[1].text) == result.structured_content
