"""The application's bridge to Django: a body read whole, an answer sent whole, no websocket."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from asgiref.testing import ApplicationCommunicator

from memoryadmin.asgi import DjangoInThreads

SCOPE = {
    "type": "http",
    "asgi": {"version": "3.0"},
    "http_version": "1.1",
    "method": "POST",
    "scheme": "http",
    "path": "/echo/",
    "raw_path": b"/echo/",
    "query_string": b"",
    "headers": [(b"host", b"localhost"), (b"content-type", b"text/plain")],
    "client": ("127.0.0.1", 50000),
    "server": ("127.0.0.1", 8000),
}


def echo(environ, start_response):
    """A WSGI app answering with the body it read, in two chunks."""
    body = environ["wsgi.input"].read()
    start_response("201 Created", [("Content-Type", "text/plain"), ("X-Length", str(len(body)))])
    return [b"got ", body]


def run(coroutine):
    # A thread of its own: the browser tests' Playwright keeps an event loop in this one.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def test_a_body_in_several_messages_reaches_the_app_whole_and_its_answer_goes_out_whole():
    async def exchange():
        communicator = ApplicationCommunicator(DjangoInThreads(echo, threads=2), SCOPE)
        await communicator.send_input({"type": "http.request", "body": b"tea ", "more_body": True})
        await communicator.send_input({"type": "http.request", "body": b"and coffee"})
        return await communicator.receive_output(10), await communicator.receive_output(10)

    start, body = run(exchange())
    assert start["status"] == 201
    assert (b"x-length", b"14") in start["headers"]
    assert body == {"type": "http.response.body", "body": b"got tea and coffee"}


def test_a_client_gone_before_its_body_arrived_gets_no_answer_and_the_app_never_runs():
    calls = []

    def app(environ, start_response):
        calls.append(environ)
        return echo(environ, start_response)

    async def exchange():
        communicator = ApplicationCommunicator(DjangoInThreads(app, threads=1), SCOPE)
        await communicator.send_input({"type": "http.request", "body": b"tea", "more_body": True})
        await communicator.send_input({"type": "http.disconnect"})
        await communicator.wait(10)
        return await communicator.receive_nothing()

    assert run(exchange()) is True
    assert calls == []


def test_a_websocket_is_closed():
    async def exchange():
        scope = {"type": "websocket", "path": "/ws/", "headers": [], "query_string": b""}
        communicator = ApplicationCommunicator(DjangoInThreads(echo, threads=1), scope)
        await communicator.send_input({"type": "websocket.connect"})
        return await communicator.receive_output(10)

    assert run(exchange()) == {"type": "websocket.close", "code": 1000}
