"""A PAM document to import, read as a stream: the members around its memories at once, its
memories one at a time, as often as the import goes through them.

A memory store of 100,000 memories is some 45 MB of JSON; parsed whole it took five times
that. From a file or an upload the document is parsed incrementally (ijson), so the import
holds one batch of memories at a time; a document a converter built is already in memory and
is read from there. Its nesting is measured before ijson reads it (stores.services.bounded_json):
ijson keeps the path to every level, so depth costs it memory by the square.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import ijson
from django.conf import settings

from stores.interchange.pam.mapping import Refused
from stores.services import bounded_json

MEMORIES = "memories"


def max_bytes() -> int:
    """The largest file the shell imports from disk."""
    return int(settings.MEMORYADMIN["MAX_IMPORT_BYTES"])


def upload_max_bytes() -> int:
    """The largest upload: a request body, bounded as every other one is."""
    return int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)


@dataclass(frozen=True)
class Document:
    """A memory store (or what claims to be one): `head` holds every top-level member but the
    memories (`memories` stays, as `[]` when it is an array), `memories` reads the array's
    items in order, each call from the start."""

    name: str
    opener: Callable[[], IO[bytes]] | None = None
    parsed: dict[str, Any] | None = None

    def head(self) -> dict[str, Any]:
        if self.parsed is not None:
            return {
                key: [] if key == MEMORIES and isinstance(value, list) else value
                for key, value in self.parsed.items()
            }
        assert self.opener is not None
        with self.opener() as handle:
            return self._parsing(lambda: _head(handle, self.name))

    def memories(self) -> Iterator[Any]:
        if self.parsed is not None:
            memories = self.parsed.get(MEMORIES)
            yield from memories if isinstance(memories, list) else []
            return
        assert self.opener is not None
        with self.opener() as handle:
            items = ijson.items(handle, f"{MEMORIES}.item", use_float=True)
            while True:
                item = self._parsing(lambda: next(items, _END))
                if item is _END:
                    return
                yield item

    def _parsing(self, step: Callable[[], Any]) -> Any:
        try:
            return step()
        except ijson.JSONError as error:
            raise Refused("json", f"{self.name} is not JSON text: {error}.") from None
        except UnicodeDecodeError as error:
            raise Refused("json", f"{self.name} is not UTF-8 text: {error}.") from None


_END = object()


def _within_limit(path: Path) -> int:
    """The size limit, once `path` is known to be within it (judged before a byte is read)."""
    size = path.stat().st_size
    limit = max_bytes()
    if size > limit:
        raise Refused(
            "size-limit",
            f"{path.name} is {size:,} bytes; at most {limit:,} are read "
            "(MEMORYADMIN_MAX_IMPORT_BYTES).",
        )
    return limit


def from_path(path: Path) -> Document:
    """A file to import, refused by its size before a byte of it is read."""
    _within_limit(path)
    _shallow(lambda: bounded_json.check_file(path))
    stated = path.stat()

    def opener() -> IO[bytes]:
        # Read twice (checked, then imported): what is imported must be what was checked.
        now = path.stat()
        if (now.st_size, now.st_mtime_ns) != (stated.st_size, stated.st_mtime_ns):
            raise Refused("file", f"{path.name} changed while it was being imported.")
        return path.open("rb")

    return Document(name=path.name, opener=opener)


def read_json(path: Path) -> Any:
    """The JSON of another tool's export, read whole (converters take a whole document),
    refused by its size before a byte of it is read."""
    limit = _within_limit(path)
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    _shallow(lambda: bounded_json.check_nesting(data, path.name))
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise Refused("json", f"{path.name} is not JSON text: {error}.") from None


def from_bytes(data: bytes, name: str) -> Document:
    """An uploaded file to import."""
    if len(data) > upload_max_bytes():
        raise Refused(
            "size-limit",
            f"{name} is larger than {upload_max_bytes():,} bytes, the limit of a request body "
            "(MEMORYADMIN_MAX_BODY_BYTES).",
        )
    _shallow(lambda: bounded_json.check_nesting(data, name))
    return Document(name=name, opener=lambda: io.BytesIO(data))


def _shallow(check: Callable[[], None]) -> None:
    """Run a nesting check, its refusal as the import's own."""
    try:
        check()
    except bounded_json.JsonTooDeep as refusal:
        raise Refused("too-deep", f"{refusal.message} (MEMORYADMIN_MAX_JSON_DEPTH).") from None


def from_dict(document: dict[str, Any], name: str = "the document") -> Document:
    """A memory store another tool's export was converted to."""
    return Document(name=name, parsed=document)


def _head(handle: IO[bytes], name: str) -> dict[str, Any]:
    """The top-level members of the JSON object in `handle`, the memories' items skipped."""
    events = ijson.parse(handle, use_float=True)
    first = next(events, None)
    if first is None or first[1] != "start_map":
        # What it is instead is read whole, so a document that is not JSON says so.
        for _ in events:
            pass
        raise Refused("schema", f"{name} is not a JSON object.")
    head: dict[str, Any] = {}
    for prefix, event, value in events:
        if event == "end_map" and prefix == "":
            break
        # Only a key can follow at the top level: `value` names the member that comes next.
        if value in head:
            raise Refused("schema", f"{name} states {value!r} twice.")
        prefix, event, member = next(events)
        if value == MEMORIES and event == "start_array":
            # The items are skipped event by event: nothing of them is built.
            for prefix, event, _ in events:
                if event == "end_array" and prefix == MEMORIES:
                    break
            head[value] = []
            continue
        builder = ijson.ObjectBuilder()
        builder.event(event, member)
        while builder.containers:
            _, event, member = next(events)
            builder.event(event, member)
        head[value] = builder.value
    for _ in events:  # the parser refuses anything after the object
        pass
    return head
