"""Reading memory stores, their memories (memory files below a store's folder) and their
versions (the revisions of those files), by the ids the memory stores API gives them."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Max, Q, QuerySet

from stores.errors import NotFound
from stores.models import Agent, MemoryFile, MemoryStore, Revision
from stores.models.memory_stores import STORE_ID_PREFIX

MEMORY_ID_PREFIX = "mem_"
VERSION_ID_PREFIX = "memver_"
FILE_SURFACE = "file"


def memory_public_id(file_id: int) -> str:
    return f"{MEMORY_ID_PREFIX}{file_id}"


def version_public_id(revision_id: int) -> str:
    return f"{VERSION_ID_PREFIX}{revision_id}"


def number_in(public_id: str, prefix: str) -> int | None:
    """The number an id such as `mem_42` carries; None when it is not one of ours."""
    digits = public_id[len(prefix) :] if public_id.startswith(prefix) else ""
    return int(digits) if digits.isascii() and digits.isdigit() else None


def stores_of(agent: Agent, *, include_archived: bool = False) -> QuerySet[MemoryStore]:
    stores = MemoryStore.objects.filter(agent=agent)
    return stores if include_archived else stores.filter(archived_at__isnull=True)


def store_of(agent: Agent, public_id: str) -> MemoryStore:
    """The agent's store with that id; another agent's store is not found, as is none."""
    number = number_in(public_id, STORE_ID_PREFIX)
    store = MemoryStore.objects.filter(agent=agent, pk=number).first() if number else None
    if store is None:
        raise NotFound(f"No memory store {public_id}.")
    return store


def paths_in(store: MemoryStore, below: str) -> list[tuple[str, int]]:
    """(path, id) of every file of `store` whose path starts with `below` (a folder path
    ending in /), by path; no text is read."""
    rows = (
        MemoryFile.objects.filter(agent_id=store.agent_id, path__startswith=below)
        .order_by("path")
        .values_list("path", "pk")
    )
    # SQLite's LIKE ignores ASCII case: /memories/Notes is not below /memories/notes.
    return [(path, pk) for path, pk in rows if path.startswith(below)]


def files_by_id(store: MemoryStore, ids: Iterable[int]) -> dict[int, MemoryFile]:
    files = MemoryFile.objects.filter(agent_id=store.agent_id, pk__in=list(ids)).defer("embedding")
    return {file.pk: file for file in files}


def file_in(store: MemoryStore, public_id: str, *, lock: bool = False) -> MemoryFile:
    """The store's memory with that id: a file of its agent below the store's folder (its row
    locked to the end of the transaction with `lock`)."""
    number = number_in(public_id, MEMORY_ID_PREFIX)
    files = MemoryFile.objects.select_for_update() if lock else MemoryFile.objects
    file = (
        files.filter(agent_id=store.agent_id, pk=number).defer("embedding").first()
        if number
        else None
    )
    if file is None or not file.path.startswith(store.folder + "/"):
        raise NotFound(f"No memory {public_id} in memory store {store.public_id}.")
    return file


def file_at_path(store: MemoryStore, path: str) -> MemoryFile | None:
    return MemoryFile.objects.filter(agent_id=store.agent_id, path=path).defer("embedding").first()


def versions_of(store: MemoryStore, *, file_id: int | None = None) -> QuerySet[Revision]:
    """The revisions of the store's memories, newest first: those that left a file below its
    folder or took one from there (a delete, a move out), the deleted memories' too, and the
    redacted ones of those files (a redaction takes the removed text out of a path, which
    may take the path out of the folder)."""
    below = store.folder + "/"
    files = Revision.objects.filter(agent_id=store.agent_id, surface=FILE_SURFACE)
    if file_id is not None:
        files = files.filter(record_id=file_id)
    in_folder = Q(after_state__path__startswith=below) | Q(before_state__path__startswith=below)
    revisions = files.filter(
        in_folder | (~Q(redacted={}) & Q(record_id__in=files.filter(in_folder).values("record_id")))
    )
    return revisions.select_related("actor_user", "actor_token").order_by("-created_at", "-id")


def version_in(store: MemoryStore, public_id: str) -> Revision:
    number = number_in(public_id, VERSION_ID_PREFIX)
    revision = versions_of(store).filter(pk=number).first() if number else None
    if revision is None:
        raise NotFound(f"No memory version {public_id} in memory store {store.public_id}.")
    return revision


def current_versions(store: MemoryStore, file_ids: Iterable[int]) -> dict[int, int]:
    """The id of the revision that holds each file's current text (its latest)."""
    # Revisions are appended in order, so a record's newest is its highest id.
    rows = (
        Revision.objects.filter(
            agent_id=store.agent_id, surface=FILE_SURFACE, record_id__in=list(file_ids)
        )
        .values("record_id")
        .annotate(latest=Max("id"))
        .values_list("record_id", "latest")
    )
    return dict(rows)


def listing(store: MemoryStore, prefix: str, depth: int) -> list[tuple[str, int | None]]:
    """The items of a memory list below `prefix` (a store path ending in /), by path: each
    memory as (store path, file id); with `depth`, a memory deeper than `depth` segments below
    the prefix is rolled into its folder at that depth, listed once as (folder path/, None)."""
    items: list[tuple[str, int | None]] = []
    start = len(store.folder)
    # Sorted here, by code point: a database's collation may not keep a folder's paths together.
    for path, file_id in sorted(paths_in(store, store.folder + prefix)):
        relative = path[start:]
        segments = relative[len(prefix) :].split("/")
        if depth and len(segments) > depth:
            folder = prefix + "/".join(segments[:depth]) + "/"
            if not items or items[-1][0] != folder:
                items.append((folder, None))
        else:
            items.append((relative, file_id))
    return items
