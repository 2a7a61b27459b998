"""Every path refuses a body past the upload limit before reading it, as the API's JSON 413.

Against the real ASGI application over a socket: a declared length past the limit is refused
without the server waiting for a byte of the body, and a chunked body is cut off as soon as
the bytes read pass the limit, before any authentication or parsing.
"""

from __future__ import annotations

import json
import socket
import threading

import pytest
from django.conf import settings

from tests.factories import agent_token
from tests.servers import asgi_server

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
GIB = 1024**3
PATHS = [
    ("GET", "/api/v1/changes/"),
    ("POST", "/api/v1/memories/"),
    ("POST", "/accounts/login/"),
    ("POST", "/mcp/"),
    ("POST", "/no/such/page/"),
]


@pytest.fixture
def served():
    with asgi_server() as base:
        yield base.rsplit(":", 1)[1]


def head(method: str, path: str, *extra: str) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: localhost", *extra, "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_answer(sock: socket.socket) -> tuple[int, dict]:
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    _headers, _, body = rest.partition(b"\r\n\r\n")
    return int(status_line.split()[1]), json.loads(body)


def assert_too_large(code: int, body: dict) -> None:
    assert code == 413
    assert body["status"] == "invalid"
    assert body["code"] == "too_large"
    assert body["max_bytes"] == LIMIT


@pytest.mark.parametrize(("method", "path"), PATHS)
def test_a_declared_gibibyte_is_refused_before_a_byte_of_it_is_sent(served, method, path):
    """Regression: the feed's long poll read the whole GiB (server 188 -> 1,204 MB), then 401."""
    with socket.create_connection(("127.0.0.1", int(served)), timeout=10) as sock:
        sock.sendall(head(method, path, f"Content-Length: {GIB}", "Content-Type: text/plain"))
        code, body = read_answer(sock)  # no body sent: an answer proves none was awaited

    assert_too_large(code, body)


@pytest.mark.parametrize(("method", "path"), PATHS)
def test_a_chunked_body_is_cut_off_once_the_bytes_read_pass_the_limit(served, method, path):
    """Regression: a POST without a token spooled the whole body to disk before its 401."""
    chunk = b"x" * (1024 * 1024)
    sent = {"bytes": 0}
    with socket.create_connection(("127.0.0.1", int(served)), timeout=10) as sock:
        sock.sendall(head(method, path, "Transfer-Encoding: chunked"))

        def send_three_limits() -> None:
            try:
                while sent["bytes"] < 3 * LIMIT:
                    sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    sent["bytes"] += len(chunk)
                sock.sendall(b"0\r\n\r\n")
            except OSError:
                pass  # the server answered and closed: what is expected

        sender = threading.Thread(target=send_three_limits, daemon=True)
        sender.start()
        code, body = read_answer(sock)
        sock.close()
        sender.join(10)

    if path == "/mcp/":  # the MCP door asks for the token before it reads anything
        assert (code, body["code"]) == (401, "not_authenticated")
    else:
        assert_too_large(code, body)
    assert sent["bytes"] < 3 * LIMIT  # answered before the client could finish


def test_a_body_within_the_limit_still_reaches_the_app(served, agent):
    _token, raw = agent_token(agent)
    content = json.dumps({"content": "The user likes tea."}).encode()
    with socket.create_connection(("127.0.0.1", int(served)), timeout=10) as sock:
        sock.sendall(
            head(
                "POST",
                "/api/v1/memories/",
                f"Content-Length: {len(content)}",
                "Content-Type: application/json",
                f"Authorization: Bearer {raw}",
            )
            + content
        )
        code, body = read_answer(sock)

    assert code == 201
    assert body["status"] == "created"
