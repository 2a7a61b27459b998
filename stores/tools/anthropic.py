"""Anthropic's memory tool (`memory_20250818`) over memory files, as a drop-in backend.

The model sends the tool-use input of Claude's memory tool unchanged (`command` view,
create, str_replace, insert, delete or rename, with that command's fields) and reads the
sentences the Anthropic SDK's reference implementation (`BetaLocalFilesystemMemoryTool`)
answers with: a numbered view of a file, a two-level listing of a directory, "File created
successfully at: …", and errors it can act on. Each file is a record of the `file` surface;
a directory is the prefix of its files' paths. Every write goes through the edit service
(record_create, record_edit, record_insert, record_forget, record_update of the path), so
each command is a revision with its actor, reviewable and revertable.

The answer is `{"status", "is_error", "content": [{"type": "text", "text"}]}`: `content` is
the tool result block's content as the SDK would send it back, `is_error` its flag.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import transaction

from stores.editing import Status, TextEditError, line_count
from stores.engine.lookup import find_record
from stores.engine.results import WriteResult
from stores.errors import ApplicationError
from stores.models import MemoryFile
from stores.models.files import MEMORY_ROOT, path_problem
from stores.selectors.files import file_at, files_under, is_directory
from stores.selectors.records import record_lines
from stores.services import record_create, record_edit, record_forget, record_insert, record_update
from stores.surfaces import FILE
from stores.tools.registry import ToolContext, tool

# How deep a directory's view lists, as the SDK's does.
VIEW_DEPTH = 2
# Lines shown either side of a str_replace's changed line.
SNIPPET_CONTEXT = 2
NUMBER_WIDTH = 6


class MemoryToolError(Exception):
    """A command that cannot run: its sentence is the tool result, flagged as an error."""

    def __init__(self, message: str, status: Status = Status.INVALID) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


_COMMANDS: dict[str, list[str]] = {
    "view": ["path"],
    "create": ["path", "file_text"],
    "str_replace": ["path", "old_str", "new_str"],
    "insert": ["path", "insert_line", "insert_text"],
    "delete": ["path"],
    "rename": ["old_path", "new_path"],
}

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "enum": list(_COMMANDS), "description": "What to do."},
        "path": _string("A path under /memories: a file, or a directory (view, delete)."),
        "view_range": {
            "type": "array",
            "items": {"type": "integer", "maximum": 10**7},
            "minItems": 2,
            "maxItems": 2,
            "description": "view of a file: [first line, last line], 1-based; -1 for the end.",
        },
        "file_text": _string("create: the new file's whole text."),
        "old_str": _string("str_replace: the exact text to replace; it must occur once."),
        "new_str": _string("str_replace: the text to put in its place."),
        "insert_line": {
            "type": "integer",
            "minimum": 0,
            "description": "insert: the line after which to insert (0: before the first).",
        },
        "insert_text": _string("insert: the line(s) to insert."),
        "old_path": _string("rename: the file or directory to move."),
        "new_path": _string("rename: where to move it; it must not exist yet."),
    },
    "required": ["command"],
    "additionalProperties": False,
    "allOf": [
        {
            "if": {"properties": {"command": {"const": command}}, "required": ["command"]},
            "then": {"required": required},
        }
        for command, required in _COMMANDS.items()
    ],
}


@tool(
    "memory",
    "Claude's memory tool: your memory directory /memories, kept across conversations. "
    "ALWAYS view /memories first to see what you remember. Commands: view (a directory "
    "lists files two levels deep with sizes; a file shows numbered lines, view_range picks "
    "some), create (a new file), str_replace (old_str must occur exactly once), insert "
    "(after line insert_line, 0 for the top), delete (a file or a directory), rename (a "
    "file or a directory to a path that does not exist). Every path starts with /memories/.",
    PARAMETERS,
    family="anthropic",
)
def memory(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    handler = _HANDLERS[args["command"]]
    try:
        status, text = handler(context, args)
    except MemoryToolError as error:
        return _answer(error.status, error.message)
    except ApplicationError as error:
        return _answer(error.status, error.message)
    return _answer(status, text)


def _answer(status: Status, text: str) -> dict[str, Any]:
    return {
        "status": str(status),
        "is_error": not status.succeeded,
        "content": [{"type": "text", "text": text}],
    }


def _checked(path: str, *, directory: bool = False) -> str:
    """`path` as a file's path (or, with `directory`, also a directory's), or the refusal."""
    if directory:
        if path.rstrip("/") == MEMORY_ROOT:
            return MEMORY_ROOT
        if path.endswith("/"):
            path = path[:-1]
    problem = path_problem(path)
    if problem is not None:
        raise MemoryToolError(problem)
    return path


def _missing(path: str) -> MemoryToolError:
    return MemoryToolError(
        f"The path {path} does not exist. Please provide a valid path.", Status.NOT_FOUND
    )


def _file(context: ToolContext, path: str) -> MemoryFile:
    """The file at `path` as the caller may see it; a directory there is not one."""
    found = file_at(context.agent, path)
    if found is None:
        if is_directory(context.agent, path):
            raise MemoryToolError(f"The path {path} is not a file.")
        raise _missing(path)
    return find_record(FILE, agent=context.agent, ref=found.pk, actor=context.actor)


def _settled(result: WriteResult) -> WriteResult:
    if not result.ok:
        raise MemoryToolError(result.message, result.status)
    return result


def _view(context: ToolContext, args: dict[str, Any]) -> tuple[Status, str]:
    path = _checked(args["path"], directory=True)
    if path != MEMORY_ROOT and file_at(context.agent, path) is not None:
        record = _file(context, path)
        start, end = 1, None
        if args.get("view_range"):
            first, last = args["view_range"]
            start, end = max(1, first), (None if last == -1 else last)
        try:
            view = record_lines(record, start=start, end=end)
        except (ApplicationError, TextEditError) as error:
            # A range outside the file ([3, 1], [0, 0], past its end) is the caller's to fix.
            raise MemoryToolError(f"Invalid `view_range` parameter: {error.message}") from error
        return Status.OK, f"Here's the content of {path} with line numbers:\n{view['numbered']}"
    if not is_directory(context.agent, path):
        raise _missing(path)
    return Status.OK, _listing(path, files_under(context.agent, path))


def _listing(directory: str, files: list[tuple[str, int]]) -> str:
    """The SDK's directory view: the directory, then what is in it two levels deep, each
    level by name, hidden names left out; a directory's size is its files' total."""
    sizes: dict[str, int] = {}
    for path, size in files:
        parts = path[len(directory) + 1 :].split("/")
        if any(part.startswith(".") for part in parts):
            continue
        for depth in range(1, min(len(parts), VIEW_DEPTH) + 1):
            entry = "/".join(parts[:depth]) + ("/" if depth < len(parts) else "")
            sizes[entry] = sizes.get(entry, 0) + size
    total = sum(size for entry, size in sizes.items() if "/" not in entry.rstrip("/"))
    lines = [f"{_size(total)}\t{directory}"]
    lines += [f"{_size(sizes[entry])}\t{directory}/{entry}" for entry in sorted(sizes, key=_order)]
    return (
        f"Here're the files and directories up to {VIEW_DEPTH} levels deep in {directory}, "
        "excluding hidden items:\n" + "\n".join(lines)
    )


def _order(entry: str) -> tuple[str, ...]:
    # Depth first, each level by name, a directory just before what it holds.
    return tuple(entry.rstrip("/").split("/"))


def _size(size: int) -> str:
    """Bytes as the SDK writes them: 0B, 512B, 1.5K, 2M."""
    if size == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    unit = min((size.bit_length() - 1) // 10, len(units) - 1)
    scaled = size / 1024**unit
    return f"{int(scaled)}{units[unit]}" if scaled == int(scaled) else f"{scaled:.1f}{units[unit]}"


def _check_room(context: ToolContext, path: str) -> None:
    """Nothing is at `path` yet, in the SDK's words (the write itself refuses a path under a
    file, in every door)."""
    if file_at(context.agent, path) is not None or is_directory(context.agent, path):
        raise MemoryToolError(f"The destination {path} already exists", Status.CONFLICT)


def _create(context: ToolContext, args: dict[str, Any]) -> tuple[Status, str]:
    path = _checked(args["path"])
    if file_at(context.agent, path) is not None:
        raise MemoryToolError(f"File {path} already exists", Status.CONFLICT)
    _check_room(context, path)
    _settled(
        record_create(
            surface_key=FILE.key,
            agent=context.agent,
            actor=context.actor,
            values={"path": path, "content": args["file_text"]},
        )
    )
    return Status.CREATED, f"File created successfully at: {path}"


def _str_replace(context: ToolContext, args: dict[str, Any]) -> tuple[Status, str]:
    path = _checked(args["path"])
    record = _file(context, path)
    old, new = args["old_str"], args["new_str"]
    result = record_edit(
        surface_key=FILE.key,
        agent=context.agent,
        ref=record.pk,
        actor=context.actor,
        old_string=old,
        new_string=new,
    )
    if result.status is Status.NO_MATCH:
        raise MemoryToolError(
            f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}.",
            Status.NO_MATCH,
        )
    if result.status is Status.AMBIGUOUS:
        lines = ", ".join(str(line) for line in result.details.get("lines", []))
        raise MemoryToolError(
            f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: "
            f"{lines}. Please ensure it is unique",
            Status.AMBIGUOUS,
        )
    if result.status is Status.NO_CHANGE:
        # old_str == new_str: the SDK's backend "edits" the file to the same text.
        text = record.content
        changed = text[: text.find(old)].count("\n")
    else:
        text = _settled(result).record.content
        changed = result.details["lines"][0] - 1
    new_lines = text.split("\n")
    first = max(0, changed - SNIPPET_CONTEXT)
    last = min(len(new_lines), changed + SNIPPET_CONTEXT + 1)
    snippet = [
        f"{number:>{NUMBER_WIDTH}}\t{new_lines[number - 1]}"
        for number in range(first + 1, last + 1)
    ]
    return Status.UPDATED, (
        "The memory file has been edited. Here is the snippet showing the change (with line "
        "numbers):\n" + "\n".join(snippet)
    )


def _insert(context: ToolContext, args: dict[str, Any]) -> tuple[Status, str]:
    path = _checked(args["path"])
    record = _file(context, path)
    line = args["insert_line"]
    lines = line_count(record.content)
    if not 0 <= line <= lines:
        raise MemoryToolError(
            f"Invalid `insert_line` parameter: {line}. It should be within the range [0, {lines}]."
        )
    _settled(
        record_insert(
            surface_key=FILE.key,
            agent=context.agent,
            ref=record.pk,
            actor=context.actor,
            insert_line=line,
            content=args["insert_text"],
        )
    )
    return Status.UPDATED, f"The file {path} has been edited."


class _Refused(Exception):
    """One write of a directory's refused: every write before it is rolled back."""

    def __init__(self, result: WriteResult) -> None:
        super().__init__(result.message)
        self.result = result


def _each_file(context: ToolContext, path: str, write: Callable[[MemoryFile], WriteResult]) -> int:
    """`write` each file at or below `path`, all or none; how many there were (0: none)."""
    found = file_at(context.agent, path)
    targets = [found] if found is not None else []
    if not targets:
        paths = [name for name, _ in files_under(context.agent, path)]
        targets = list(MemoryFile.objects.filter(agent=context.agent, path__in=paths))
    try:
        with transaction.atomic():
            for record in targets:
                result = write(record)
                if not result.ok:
                    raise _Refused(result)
    except _Refused as refused:
        raise MemoryToolError(refused.result.message, refused.result.status) from None
    return len(targets)


def _delete(context: ToolContext, args: dict[str, Any]) -> tuple[Status, str]:
    path = _checked(args["path"], directory=True)
    if path == MEMORY_ROOT:
        raise MemoryToolError(f"Cannot delete the {MEMORY_ROOT} directory itself")

    def forget(record: MemoryFile) -> WriteResult:
        return record_forget(
            surface_key=FILE.key, agent=context.agent, ref=record.pk, actor=context.actor
        )

    if not _each_file(context, path, forget):
        raise MemoryToolError(f"The path {path} does not exist", Status.NOT_FOUND)
    return Status.DELETED, f"Successfully deleted {path}"


def _rename(context: ToolContext, args: dict[str, Any]) -> tuple[Status, str]:
    old = _checked(args["old_path"], directory=True)
    new = _checked(args["new_path"], directory=True)
    if MEMORY_ROOT in (old, new):
        raise MemoryToolError(f"Cannot rename the {MEMORY_ROOT} directory itself")
    if new.startswith(old + "/"):
        raise MemoryToolError(f"Cannot move {old} into itself ({new}).")
    if file_at(context.agent, old) is None and not is_directory(context.agent, old):
        raise MemoryToolError(f"The path {old} does not exist", Status.NOT_FOUND)
    _check_room(context, new)

    def move(record: MemoryFile) -> WriteResult:
        moved = new + record.path[len(old) :]
        problem = path_problem(moved)
        if problem is not None:
            raise MemoryToolError(problem)
        return record_update(
            surface_key=FILE.key,
            agent=context.agent,
            ref=record.pk,
            actor=context.actor,
            changes={"path": moved},
        )

    _each_file(context, old, move)
    return Status.UPDATED, f"Successfully renamed {old} to {new}"


_HANDLERS: dict[str, Callable[[ToolContext, dict[str, Any]], tuple[Status, str]]] = {
    "view": _view,
    "create": _create,
    "str_replace": _str_replace,
    "insert": _insert,
    "delete": _delete,
    "rename": _rename,
}
