"""LangGraph's long-term memory store kept in memoryadmin.

`MemoryadminStore` is a `langgraph.store.base.BaseStore`: pass it where an `InMemoryStore` or
a `PostgresStore` would go (`graph.compile(store=...)`, LangMem's managers). Every `put` and
`delete` is a write of the agent's token through the REST API, so each is a revision a
person can review, correct and revert in memoryadmin::

    from memoryadmin.clients.langgraph_store import MemoryadminStore

    with MemoryadminStore("https://memory.example.org", token=AGENT_TOKEN) as store:
        store.put(("users", "alice"), "food", {"likes": "green tea"})
        store.search(("users",), query="what does alice drink?")

The store keeps its connections open between calls, as an HTTP client does: `close()` (or
leaving the `with`) closes them, and `aclose()` (or `async with`) those of the async calls.

Items are memories (the `memory` surface), not working memory or memory files: memories
are what recall ranks (words and vectors together), which `search(query=...)` needs, and
what people review. One item is one memory:

- its text is the value as JSON, what recall searches and what a person reads and edits;
- `alias` is `langgraph:` and a hash of (namespace, key), so a get is one request;
- `metadata.langgraph` holds the namespace and key; `category` is `langgraph`;
- `tags` are `langgraph` and `langgraph:<a>`, `langgraph:<a>.<b>`, ... for each prefix of the
  namespace (LangGraph forbids dots in namespace labels), so a search by namespace prefix
  is a filter of the server's.

Differences from LangGraph's own stores: a search with `query` is memoryadmin's recall, which
answers only the results reaching its relevance floor (`MEMORYADMIN_SEARCH_MIN_SCORE`; 0
ranks every candidate as LangGraph's stores do); `filter` is applied here to the values of
what the server found; `put(index=...)` is ignored (every memory is embedded); TTLs are not
supported (`supports_ttl` is False). Invalidating a memory is memoryadmin's notion,
LangGraph has none: an invalidated item still reads; a person corrects one by editing or
forgetting it.

The module imports only LangGraph and httpx (which LangGraph brings), no Django and nothing
else of memoryadmin (an import contract keeps it so): an application copies this one file.
"""

from __future__ import annotations

import hashlib
import json
import operator
from collections.abc import Callable, Generator, Iterable
from datetime import datetime
from typing import Any

import httpx
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

MEMORIES = "/api/v1/memories/"
CATEGORY = "langgraph"
TAG = "langgraph"
# The API's largest page.
PAGE = 200
# A put that meets a concurrent write of the same item reads it again and retries this often.
PUT_ATTEMPTS = 3

# One op as a conversation with the server: it yields each request, is sent its response,
# and returns the op's result. The same steps run over httpx's sync and async clients.
Steps = Generator[httpx.Request, httpx.Response, Any]


class MemoryadminStoreError(RuntimeError):
    """The server refused a request: its status word (`forbidden`, `invalid`, ...) and sentence."""

    def __init__(self, status: str, message: str, http_status: int) -> None:
        super().__init__(f"memoryadmin refused the request ({status}): {message}")
        self.status = status
        self.message = message
        self.http_status = http_status


def item_alias(namespace: tuple[str, ...], key: str) -> str:
    identity = json.dumps([list(namespace), key], ensure_ascii=False, separators=(",", ":"))
    return "langgraph:" + hashlib.sha256(identity.encode()).hexdigest()


def namespace_tag(prefix: tuple[str, ...]) -> str:
    return f"{TAG}:{'.'.join(prefix)}" if prefix else TAG


def namespace_tags(namespace: tuple[str, ...]) -> list[str]:
    return [TAG, *(namespace_tag(namespace[:depth]) for depth in range(1, len(namespace) + 1))]


def namespace_of_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """The item's namespace: its longest namespace tag."""
    paths = [tag[len(TAG) + 1 :].split(".") for tag in tags if tag.startswith(f"{TAG}:")]
    if not paths:
        return ()
    longest: list[str] = max(paths, key=len)
    return tuple(longest)


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": operator.eq,
    "$ne": operator.ne,
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


def value_matches(value: Any, expected: Any) -> bool:
    """LangGraph's filter: equal values, nested objects compared key by key, or operators
    (`{"$gt": 3}`) applied to the value."""
    if isinstance(expected, dict) and expected and all(name.startswith("$") for name in expected):
        try:
            return all(_OPERATORS[name](value, operand) for name, operand in expected.items())
        except KeyError as error:
            raise ValueError(f"Unsupported filter operator: {error.args[0]}") from error
        except TypeError:  # a missing field, or a string against a number
            return False
    if isinstance(expected, dict):
        return isinstance(value, dict) and all(
            value_matches(value.get(name), wanted) for name, wanted in expected.items()
        )
    return value == expected


def namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(wanted in ("*", label) for label, wanted in zip(part, path, strict=True))


def value_of(content: str) -> dict[str, Any]:
    """The item's value from the memory's text; a text a person rewrote as prose (no longer a
    JSON object) comes back as `{"content": text}`."""
    try:
        value = json.loads(content)
    except ValueError:
        return {"content": content}
    return value if isinstance(value, dict) else {"content": content}


class MemoryadminStore(BaseStore):
    """A LangGraph store whose items are one agent's memories in memoryadmin."""

    supports_ttl = False

    def __init__(
        self,
        base_url: str,
        *,
        token: str,
        timeout: float = 30.0,
        http: httpx.Client | None = None,
        async_http: httpx.AsyncClient | None = None,
    ) -> None:
        self._base_url = base_url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {token}"}
        self._http = http or httpx.Client(timeout=timeout)
        self._async_http = async_http or httpx.AsyncClient(timeout=timeout)
        # A client passed in is its caller's to close.
        self._owns_http = http is None
        self._owns_async_http = async_http is None

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    async def aclose(self) -> None:
        if self._owns_async_http:
            await self._async_http.aclose()
        self.close()

    def __enter__(self) -> MemoryadminStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> MemoryadminStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # --- running ops ---------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._run(self._steps(op)) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return [await self._arun(self._steps(op)) for op in ops]

    def _run(self, steps: Steps) -> Any:
        try:
            request = next(steps)
            while True:
                request = steps.send(self._http.send(request))
        except StopIteration as done:
            return done.value

    async def _arun(self, steps: Steps) -> Any:
        try:
            request = next(steps)
            while True:
                request = steps.send(await self._async_http.send(request))
        except StopIteration as done:
            return done.value

    def _steps(self, op: Op) -> Steps:
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            return self._put(op) if op.value is not None else self._delete(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise ValueError(f"Unknown operation: {op!r}")

    # --- requests --------------------------------------------------------------------------

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        body: dict[str, Any] | None = None,
    ) -> httpx.Request:
        return httpx.Request(
            method, self._base_url + path, params=params, json=body, headers=self._headers
        )

    @staticmethod
    def _answer(response: httpx.Response, *accepted: str) -> dict[str, Any]:
        """The body of an answer whose status word is accepted (any success if none is
        named); MemoryadminStoreError otherwise."""
        try:
            body = response.json()
        except ValueError:
            body = {}
        status = body.get("status", "")
        if (status in accepted) if accepted else response.is_success:
            return body
        message = body.get("message") or f"HTTP {response.status_code}"
        raise MemoryadminStoreError(status or "error", message, response.status_code)

    def _record(self, ref: str) -> Steps:
        """The memory `ref` (id or alias) in full, or None."""
        response = yield self._request("GET", f"{MEMORIES}{ref}/")
        if response.status_code == 404:
            return None
        return self._answer(response)["record"]

    def _hits(self, params: dict[str, Any], offset: int, limit: int | None) -> Steps:
        """Recall hits from `offset`, at most `limit` (None: every one), a page at a time."""
        hits: list[dict[str, Any]] = []
        while limit is None or len(hits) < limit:
            size = PAGE if limit is None else min(PAGE, limit - len(hits))
            response = yield self._request(
                "GET", MEMORIES, params={**params, "limit": size, "offset": offset + len(hits)}
            )
            page = self._answer(response)["results"]
            hits += page
            if len(page) < size:
                break
        return hits

    # --- the ops ---------------------------------------------------------------------------

    def _get(self, op: GetOp) -> Steps:
        record = yield from self._record(item_alias(op.namespace, op.key))
        return None if record is None else _item(record)

    def _put(self, op: PutOp) -> Steps:
        content = json.dumps(dict(op.value or {}), ensure_ascii=False)
        alias = item_alias(op.namespace, op.key)
        for _attempt in range(PUT_ATTEMPTS):
            record = yield from self._record(alias)
            if record is None:
                body = {
                    "content": content,
                    "alias": alias,
                    "category": CATEGORY,
                    "tags": namespace_tags(op.namespace),
                    "metadata": {"langgraph": {"namespace": list(op.namespace), "key": op.key}},
                }
                response = yield self._request("POST", MEMORIES, body=body)
            elif record["content"] == content:
                return None
            else:
                # The whole value, read just before: a shorter one is meant, not a cut preview.
                body = {"text": content, "expected_version": record["version"]}
                response = yield self._request(
                    "POST",
                    f"{MEMORIES}{record['id']}/replace/",
                    body={**body, "allow_shorter": True},
                )
            answer = self._answer(response, "created", "updated", "no_change", "conflict")
            if answer["status"] != "conflict":
                return None
        raise MemoryadminStoreError(
            "conflict", f"{op.namespace}/{op.key} kept changing under the put.", 409
        )

    def _delete(self, op: PutOp) -> Steps:
        response = yield self._request("DELETE", f"{MEMORIES}{item_alias(op.namespace, op.key)}/")
        if response.status_code != 404:  # deleting what is not there is no error
            self._answer(response, "deleted")
        return None

    def _search(self, op: SearchOp) -> Steps:
        params: dict[str, Any] = {
            "tag": namespace_tag(op.namespace_prefix),
            "include_invalidated": "true",
        }
        if op.query:
            params["q"] = op.query
        if op.filter:
            # The server knows texts, not the values' fields: read every candidate, filter.
            hits = yield from self._hits(params, 0, None)
        else:
            hits = yield from self._hits(params, op.offset, op.limit)
        found: list[SearchItem] = []
        for hit in hits:
            record = yield from self._record(str(hit["id"]))
            if record is None:  # forgotten between the two reads
                continue
            item = _search_item(record, hit.get("score"))
            if op.filter and not value_matches(item.value, op.filter):
                continue
            found.append(item)
        return found[op.offset : op.offset + op.limit] if op.filter else found

    def _list_namespaces(self, op: ListNamespacesOp) -> Steps:
        hits = yield from self._hits({"tag": TAG, "include_invalidated": "true"}, 0, None)
        namespaces = {namespace_of_tags(hit["tags"]) for hit in hits} - {()}
        conditions = op.match_conditions or ()
        chosen = {
            namespace[: op.max_depth] if op.max_depth is not None else namespace
            for namespace in namespaces
            if all(namespace_matches(namespace, condition) for condition in conditions)
        }
        return sorted(chosen)[op.offset : op.offset + op.limit]


def _item(record: dict[str, Any]) -> Item:
    identity = record["metadata"]["langgraph"]
    return Item(
        namespace=tuple(identity["namespace"]),
        key=identity["key"],
        value=value_of(record["content"]),
        created_at=datetime.fromisoformat(record["created_at"]),
        updated_at=datetime.fromisoformat(record["updated_at"]),
    )


def _search_item(record: dict[str, Any], score: float | None) -> SearchItem:
    item = _item(record)
    return SearchItem(
        item.namespace, item.key, item.value, item.created_at, item.updated_at, score=score
    )
