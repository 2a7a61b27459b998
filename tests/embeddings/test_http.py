"""The OpenAI-compatible backend against a real HTTP server on loopback."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from stores.embeddings import EmbeddingError, EmbeddingUnavailable
from stores.embeddings.http import OpenAICompatibleBackend


class EmbeddingServer:
    """A tiny /v1/embeddings server; `script` lists answers to give before answering well."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.script: list[tuple[int, dict[str, str]] | str] = []
        self.dimensions = 384
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                step = server.script.pop(0) if server.script else None
                if step == "hang":
                    time.sleep(1.0)
                    return
                if isinstance(step, tuple):
                    status, headers = step
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(b'{"error": {"message": "try later"}}')
                    return
                data = [
                    {"object": "embedding", "index": index, "embedding": server.vector(text)}
                    for index, text in enumerate(body["input"])
                ]
                # Out of order on purpose: clients must sort by index.
                payload = json.dumps({"data": data[::-1], "model": body["model"]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        vector[len(text) % self.dimensions] = 2.0  # not unit length: the client normalises
        return vector


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    server = EmbeddingServer()
    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def backend(server: EmbeddingServer, **options) -> OpenAICompatibleBackend:
    options.setdefault("backoff", 0.01)
    return OpenAICompatibleBackend(url=server.url, model="e5-small", **options)


def test_documents_are_sent_in_batches_and_come_back_in_order(server):
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    vectors = backend(server, batch_size=2, api_key="sk-test").embed_documents(texts)

    assert [len(body["input"]) for body in server.requests] == [2, 2, 1]
    assert server.requests[0] == {
        "model": "e5-small",
        "input": ["a", "bb"],
        "encoding_format": "float",
        "dimensions": 384,
    }
    assert server.headers[0]["Authorization"] == "Bearer sk-test"
    assert [vector.index(1.0) for vector in vectors] == [1, 2, 3, 4, 5]


def test_prefixes_are_applied_and_dimensions_can_be_left_out(server):
    client = backend(
        server, send_dimensions=False, query_prefix="query: ", document_prefix="passage: "
    )
    client.embed_documents(["tea"])
    client.embed_query("what does the user drink")

    assert server.requests[0]["input"] == ["passage: tea"]
    assert server.requests[1]["input"] == ["query: what does the user drink"]
    assert "dimensions" not in server.requests[0]
    assert client.model_name != backend(server).model_name


def test_transient_errors_are_retried(server):
    server.script = [(503, {}), (429, {"Retry-After": "0"})]

    vectors = backend(server).embed_documents(["tea"])

    assert len(server.requests) == 3
    assert len(vectors[0]) == 384


def test_a_server_that_keeps_failing_is_reported_unavailable(server):
    server.script = [(502, {})] * 3

    with pytest.raises(EmbeddingUnavailable, match="after 3 attempts"):
        backend(server, max_retries=2).embed_documents(["tea"])
    assert len(server.requests) == 3


def test_a_slow_server_times_out_and_is_retried(server):
    server.script = ["hang"]

    vectors = backend(server, timeout=0.2, max_retries=1).embed_documents(["tea"])

    assert len(server.requests) == 2
    assert len(vectors) == 1


def test_a_refusal_is_not_retried(server):
    server.script = [(400, {})]

    with pytest.raises(EmbeddingError, match="refused the request \\(400\\)"):
        backend(server).embed_documents(["tea"])
    assert len(server.requests) == 1


def test_a_model_of_the_wrong_size_is_refused(server):
    server.dimensions = 1536

    with pytest.raises(EmbeddingError, match="returned 1536 dimensions"):
        backend(server).embed_documents(["tea"])


def test_nothing_listening_is_unavailable():
    client = OpenAICompatibleBackend(
        url="http://127.0.0.1:9/v1", model="e5-small", max_retries=1, backoff=0.01, timeout=1
    )
    with pytest.raises(EmbeddingUnavailable):
        client.embed_query("tea")


def test_at_most_the_configured_characters_are_sent(server):
    """Regression: a 100,000-character record was sent whole, for a model that reads its
    first few hundred tokens; the service's work and the request grew with the record."""
    text = "word " * 20_000
    client = backend(server, max_input_chars=1000, document_prefix="passage: ")
    client.embed_documents([text, "tea"])
    client.embed_query(text)

    assert server.requests[0]["input"] == ["passage: " + text[:1000], "passage: tea"]
    assert server.requests[1]["input"] == [text[:1000]]
    assert len(backend(server).fit(text, query=False)) == 4096
