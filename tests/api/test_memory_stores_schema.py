"""The memory stores API in /api/schema/: every operation is there, and what each answers (its
successes and its refusals, in the hosted API's error shape) is what the schema declares."""

from __future__ import annotations

import hashlib
from functools import cache
from typing import Any

from jsonschema import Draft7Validator

from tests.api.conftest import client_for

OPERATIONS = {
    "memory_stores_list",
    "memory_stores_create",
    "memory_stores_retrieve",
    "memory_stores_update",
    "memory_stores_delete",
    "memory_stores_archive",
    "memory_stores_memories_list",
    "memory_stores_memories_create",
    "memory_stores_memories_retrieve",
    "memory_stores_memories_update",
    "memory_stores_memories_delete",
    "memory_stores_memory_versions_list",
    "memory_stores_memory_versions_retrieve",
    "memory_stores_memory_versions_redact",
}


@cache
def served() -> dict[str, Any]:
    return client_for().get("/api/schema/?format=json").json()


def operation(operation_id: str) -> dict[str, Any]:
    for methods in served()["paths"].values():
        for found in methods.values():
            if isinstance(found, dict) and found.get("operationId") == operation_id:
                return found
    raise AssertionError(f"no operation {operation_id} in /api/schema/")


def as_json_schema(schema: Any) -> Any:
    """OpenAPI 3.0's `nullable` as JSON Schema's null type, at every depth."""
    if isinstance(schema, list):
        return [as_json_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    converted = {key: as_json_schema(value) for key, value in schema.items() if key != "nullable"}
    if schema.get("nullable"):
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


class Checked:
    """Calls the API and holds each answer to what its operation declares for its status."""

    def __init__(self, client) -> None:
        self.client = client
        self.seen: set[str] = set()

    def __call__(self, operation_id: str, method: str, path: str, body: Any = None) -> Any:
        answer = self.client.call(method, f"memory_stores{path}", body)
        declared = operation(operation_id)["responses"]
        assert str(answer.status_code) in declared, (operation_id, answer.status_code)
        schema = declared[str(answer.status_code)]["content"]["application/json"]["schema"]
        errors = list(Draft7Validator(as_json_schema(schema)).iter_errors(answer.json()))
        assert errors == [], (operation_id, answer.json(), errors[:1])
        self.seen.add(operation_id)
        return answer


def test_every_operation_is_in_the_schema_with_the_error_shape_for_its_refusals():
    for operation_id in OPERATIONS:
        declared = operation(operation_id)
        assert declared["tags"] == ["memory stores"]
        for code in ("400", "401", "404", "429"):
            error = declared["responses"][code]["content"]["application/json"]["schema"]
            assert error["properties"]["type"]["enum"] == ["error"], operation_id
    security = operation("memory_stores_list")["security"]
    assert {"memoryStoresBearerAuth": []} in security
    assert {"memoryStoresApiKeyAuth": []} in security


def test_what_every_operation_answers_is_what_the_schema_declares(api):
    call = Checked(api)
    store = call("memory_stores_create", "post", "/", {"name": "Notes", "metadata": {"a": "b"}})
    store_id = store.json()["id"]
    call("memory_stores_update", "post", f"/{store_id}/", {"metadata": {"a": None}})
    call("memory_stores_list", "get", "/?limit=1")
    call("memory_stores_retrieve", "get", f"/{store_id}/")
    memory = call(
        "memory_stores_memories_create",
        "post",
        f"/{store_id}/memories/",
        {"path": "/deep/er/todo.md", "content": "Buy tea.\n"},
    ).json()
    call("memory_stores_memories_create", "post", f"/{store_id}/memories/", {"path": "/top.md"})
    conflict = call(
        "memory_stores_memories_create",
        "post",
        f"/{store_id}/memories/",
        {"path": "/deep/er/todo.md", "content": "Again."},
    )
    assert conflict.json()["error"]["type"] == "memory_path_conflict_error"
    call("memory_stores_memories_list", "get", f"/{store_id}/memories/?depth=1&view=full")
    call("memory_stores_memories_retrieve", "get", f"/{store_id}/memories/{memory['id']}/")
    stale = {"type": "content_sha256", "content_sha256": "0" * 64}
    refused = call(
        "memory_stores_memories_update",
        "post",
        f"/{store_id}/memories/{memory['id']}/",
        {"content": "Buy coffee.\n", "precondition": stale},
    )
    assert refused.json()["error"]["type"] == "memory_precondition_failed_error"
    fresh = {"type": "content_sha256", "content_sha256": memory["content_sha256"]}
    call(
        "memory_stores_memories_update",
        "post",
        f"/{store_id}/memories/{memory['id']}/",
        {"content": "Buy coffee.\n", "precondition": fresh},
    )
    versions = call(
        "memory_stores_memory_versions_list",
        "get",
        f"/{store_id}/memory_versions/?memory_id={memory['id']}&view=full",
    ).json()["data"]
    first = versions[-1]["id"]
    call(
        "memory_stores_memory_versions_redact",
        "post",
        f"/{store_id}/memory_versions/{first}/redact/",
    )
    call("memory_stores_memory_versions_retrieve", "get", f"/{store_id}/memory_versions/{first}/")
    sha = hashlib.sha256(b"Buy coffee.\n").hexdigest()
    call(
        "memory_stores_memories_delete",
        "delete",
        f"/{store_id}/memories/{memory['id']}/?expected_content_sha256={sha}",
    )
    call("memory_stores_archive", "post", f"/{store_id}/archive/")
    archived = call("memory_stores_update", "post", f"/{store_id}/", {"name": "Renamed"})
    assert archived.json()["error"]["type"] == "conflict_error"
    call("memory_stores_retrieve", "get", "/memstore_0/")
    call("memory_stores_delete", "delete", f"/{store_id}/")
    Checked(client_for("not-a-token"))("memory_stores_list", "get", "/")
    assert call.seen == OPERATIONS


def test_a_creation_time_filter_with_any_offset_iso_8601_allows_is_answered(api):
    """Regression: an offset past ±15:59 is ISO 8601, but PostgreSQL takes no such time zone,
    and a moment a far offset pushes past the calendar's end exists in no time zone at all."""
    call = Checked(api)
    call("memory_stores_create", "post", "/", {"name": "Notes"})
    listed = call(
        "memory_stores_list",
        "get",
        "/?created_at%5Blte%5D=2275-10-09T10%3A09%3A05.15%2B20%3A38"
        "&created_at%5Bgte%5D=2000-05-15T07%3A21%3A33.67Z",
    )
    assert [store["name"] for store in listed.json()["data"]] == ["Notes"]
    refused = call(
        "memory_stores_list", "get", "/?created_at%5Blte%5D=0001-01-01T00%3A00%3A00%2B20%3A00"
    )
    assert refused.status_code == 400
