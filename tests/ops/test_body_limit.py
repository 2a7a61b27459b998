"""Every path refuses a body past the upload limit before reading it, as the API's JSON 413.

Against the real ASGI application over a socket: a declared length past the limit is refused
without the server waiting for a byte of the body, and a chunked body is cut off as soon as
the bytes read pass the limit, before any authentication or parsing.
"""

from __future__ import annotations

import gc
import json
import socket
import threading
import time

import pytest
from django.conf import settings
from django.core.handlers.wsgi import WSGIRequest

from tests.factories import agent_token
from tests.servers import asgi_server

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
GIB = 1024**3
MIB = 1024**2
AGENT_DOORS = ("/api/v1/", "/mcp/")
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

    if path.startswith(AGENT_DOORS):  # they ask for the token before they read anything
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


def test_a_body_to_an_agent_door_without_a_token_is_refused_unread(served):
    """Regression: 60 held bodies without a token took 614 MiB of temporary space."""
    with socket.create_connection(("127.0.0.1", int(served)), timeout=10) as sock:
        sock.sendall(head("POST", "/api/v1/memories/", f"Content-Length: {MIB}"))
        code, body = read_answer(sock)  # no body sent: an answer proves none was awaited

    assert (code, body["code"]) == (401, "not_authenticated")


def test_bodies_past_the_budget_in_flight_answer_503_until_it_frees(served, agent, settings):
    """Regression: 300 connections each holding 2.4 MiB took the server from 174 to 697 MiB."""
    settings.MEMORYADMIN = {**settings.MEMORYADMIN, "BODY_BYTES_IN_FLIGHT": 3 * MIB}
    _token, raw = agent_token(agent)
    token = f"Authorization: Bearer {raw}\r\nContent-Type: application/json"
    declared = f"Content-Length: {2 * MIB}"
    address = ("127.0.0.1", int(served))
    with socket.create_connection(address, timeout=10) as held:
        held.sendall(head("POST", "/api/v1/memories/", declared, token) + b" " * (3 * MIB // 2))
        # Until the server has read the held part, the next body still fits (and is read).
        for _attempt in range(50):
            with socket.create_connection(address, timeout=10) as late:
                late.sendall(head("POST", "/api/v1/memories/", declared, token) + b" " * 2 * MIB)
                code, busy = read_answer(late)
            if code == 503:
                break
        assert (code, busy["status"], busy["code"]) == (503, "unavailable", "busy")

        held.sendall(b" " * (MIB // 2))
        assert read_answer(held)[0] == 400  # a body of spaces is no JSON: read, then refused

    content = b'{"content": "The user likes tea."}'.ljust(2 * MIB)
    with socket.create_connection(address, timeout=10) as after:
        after.sendall(head("POST", "/api/v1/memories/", declared, token) + content)
        code, body = read_answer(after)
    assert (code, body["status"]) == (201, "created")


def requests_holding_a_body(size: int) -> int:
    # type(), not isinstance(): isinstance asks a lazy object (a CSP nonce, a user) for its
    # __class__, which evaluates it, and some cannot be evaluated once their response is sent.
    return sum(
        1
        for held in gc.get_objects()
        if issubclass(type(held), WSGIRequest) and len(held.__dict__.get("_body", b"")) >= size
    )


def test_the_answered_requests_of_a_load_leave_memory_with_their_bodies(served, agent, settings):
    """Regression: after 300 connections each sent 2.4 MiB, the 13 requests read stayed in
    memory with their bodies (+32 MiB) until Python's collector happened to run."""
    settings.MEMORYADMIN = {**settings.MEMORYADMIN, "BODY_BYTES_IN_FLIGHT": 4 * MIB}
    _token, raw = agent_token(agent)
    token = f"Authorization: Bearer {raw}\r\nContent-Type: application/json"
    # Every request is in a reference cycle: only a collection frees it, and the automatic
    # ones are off here, so what frees the load's is the server's own, once it is answered.
    gc.disable()
    try:
        for _body in range(2):  # together past a quarter of the budget
            with socket.create_connection(("127.0.0.1", int(served)), timeout=10) as sock:
                sock.sendall(
                    head("POST", "/api/v1/memories/", f"Content-Length: {MIB}", token) + b" " * MIB
                )
                assert read_answer(sock)[0] == 400  # spaces are no JSON: read, then refused
        deadline = time.monotonic() + 5
        while requests_holding_a_body(MIB) and time.monotonic() < deadline:
            time.sleep(0.05)  # the server frees them once its answer is out
        assert requests_holding_a_body(MIB) == 0
    finally:
        gc.enable()
