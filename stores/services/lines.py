"""Line inserts on every surface's text: at a line number, or before the first line.

Each previews with `dry_run`, writing nothing. Without `expected_version` the line number is
read against the current text under the row lock, as a phrase edit's match is.
"""

from __future__ import annotations

from collections.abc import Callable

from stores.editing import insert_lines, prepend
from stores.models import Agent, VersionedRecord
from stores.services import validation
from stores.services.actors import Actor
from stores.services.engine import Change, RecordRef, returns_result, text_limit, write
from stores.services.records import text_field_of
from stores.services.results import WriteResult
from stores.surfaces import surface


def _line_write(
    *,
    surface_key: str,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    op: str,
    field: str | None,
    expected_version: int | None,
    transform: Callable[[str, int], str],
    dry_run: bool,
) -> WriteResult:
    spec = surface(surface_key)
    text_field = text_field_of(spec, field)

    def build(record: VersionedRecord) -> Change:
        text = transform(getattr(record, text_field), text_limit(spec))
        return Change(op=op, values={text_field: text}, text_field=text_field)

    return write(
        spec,
        agent=agent,
        ref=ref,
        actor=actor,
        op=op,
        expected_version=expected_version,
        build=build,
        dry_run=dry_run,
    )


@returns_result
def record_insert(
    *,
    surface_key: str,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    insert_line: int,
    content: str,
    field: str | None = None,
    expected_version: int | None = None,
    dry_run: bool = False,
) -> WriteResult:
    """Insert `content` as whole lines after line `insert_line` (0: before the first line).

    A line number outside [0, lines] is refused as invalid naming that range. The new lines
    take the text's own line ending, and the text ends with one afterwards, as the Anthropic
    memory tool's insert leaves a file.
    """
    content = validation.text(content, "content")
    return _line_write(
        surface_key=surface_key,
        agent=agent,
        ref=ref,
        actor=actor,
        op="insert",
        field=field,
        expected_version=expected_version,
        dry_run=dry_run,
        transform=lambda text, limit: insert_lines(text, insert_line, content, max_length=limit),
    )


@returns_result
def record_prepend(
    *,
    surface_key: str,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    content: str,
    field: str | None = None,
    expected_version: int | None = None,
    dry_run: bool = False,
) -> WriteResult:
    """Insert `content` as whole lines before the first line of the text."""
    content = validation.text(content, "content")
    return _line_write(
        surface_key=surface_key,
        agent=agent,
        ref=ref,
        actor=actor,
        op="prepend",
        field=field,
        expected_version=expected_version,
        dry_run=dry_run,
        transform=lambda text, limit: prepend(text, content, max_length=limit),
    )
