"""A LangMem memory manager keeping its memories in memoryadmin through MemoryadminStore.

The model is a fake OpenAI-compatible server on loopback (no network, no key): asked with
LangMem's `Memory` tool it calls that tool with one memory; LangMem, LangChain's OpenAI client
and the store are the real ones, and the store talks to the live test server.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from langmem import create_memory_store_manager

from stores.models import Memory, Revision

EXTRACTED = "The user takes tea without sugar."


class FakeChatCompletions(BaseHTTPRequestHandler):
    """POST /v1/chat/completions: a call of the `Memory` tool when it is offered, else text."""

    requests: list[dict[str, Any]]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append(body)
        offered = [tool["function"]["name"] for tool in body.get("tools", [])]
        message: dict[str, Any] = {"role": "assistant", "content": "Noted."}
        if "Memory" in offered:
            call = {"name": "Memory", "arguments": json.dumps({"content": EXTRACTED})}
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_1", "type": "function", "function": call}],
            }
        answer = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def fake_model() -> Iterator[tuple[ChatOpenAI, list[dict[str, Any]]]]:
    requests: list[dict[str, Any]] = []
    handler = type("Handler", (FakeChatCompletions,), {"requests": requests})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_port}/v1"
    try:
        yield ChatOpenAI(model="fake-model", base_url=url, api_key="not-a-key"), requests
    finally:
        server.shutdown()
        server.server_close()


def test_a_langmem_manager_remembers_in_memoryadmin_and_reads_a_persons_fix(
    store, agent, fake_model, rank_everything, person_corrects
):
    model, requests = fake_model
    manager = create_memory_store_manager(model, namespace=("memories", "alice"), store=store)
    conversation = [
        {"role": "user", "content": "I take my tea without sugar."},
        {"role": "assistant", "content": "Noted."},
    ]

    manager.invoke({"messages": conversation})

    memory = Memory.objects.get(agent=agent)
    assert json.loads(memory.content) == {"kind": "Memory", "content": {"content": EXTRACTED}}
    revision = Revision.objects.get(agent=agent)
    assert (revision.op, revision.actor) == ("create", f"agent:{agent.name}/test")
    [item] = store.search(("memories", "alice"))
    assert item.value["content"]["content"] == EXTRACTED

    # A person corrects the memory in memoryadmin; the manager's next run sees the correction
    # among the memories it hands the model.
    person_corrects(agent, memory.pk, "without sugar", "with honey")
    manager.invoke({"messages": [{"role": "user", "content": "What do I take in my tea?"}]})
    assert "The user takes tea with honey." in json.dumps(requests[-1]["messages"])
