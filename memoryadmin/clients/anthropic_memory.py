"""The Anthropic SDK's memory tool, kept in memoryadmin instead of the local file system.

A drop-in for `BetaLocalFilesystemMemoryTool`: the same tool (`memory_20250818`) for the
model, the same answers, but each command is sent to `POST /api/v1/tools/memory/` with an
agent token, so every file the model writes is versioned, has a history and can be
reviewed and reverted there. Needs the `anthropic` package (which brings httpx2)::

    from anthropic import Anthropic
    from memoryadmin.clients.anthropic_memory import MemoryadminMemoryTool

    with MemoryadminMemoryTool("https://memory.example.org", token=AGENT_TOKEN) as memory:
        runner = Anthropic().beta.messages.tool_runner(
            model="claude-sonnet-4-5", max_tokens=2048, tools=[memory], messages=[...]
        )

The module imports only the SDK (and the httpx2 it brings), no Django and nothing else of
memoryadmin (an import contract keeps it so): an application that does not install
memoryadmin copies this one file.
"""

from __future__ import annotations

import httpx2
from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
from anthropic.types.beta import BetaCacheControlEphemeralParam, BetaMemoryTool20250818Command

TOOL_PATH = "/api/v1/tools/memory/"


class MemoryadminMemoryTool(BetaAbstractMemoryTool):
    """Forwards each memory command to memoryadmin; a refusal is raised as the SDK's ToolError
    (the tool runner hands its sentence to the model as an error result)."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str,
        http: httpx2.Client | None = None,
        timeout: float = 30.0,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self._url = base_url.rstrip("/") + TOOL_PATH
        self._http = http or httpx2.Client(timeout=timeout)
        # A client passed in is its caller's to close.
        self._owns_http = http is None
        self._headers = {"Authorization": f"Bearer {token}"}

    def close(self) -> None:
        """Close the connection kept open between commands."""
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> MemoryadminMemoryTool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _send(self, command: BetaMemoryTool20250818Command) -> str:
        body = command.to_dict(exclude_none=True)
        try:
            response = self._http.post(self._url, json=body, headers=self._headers)
        except httpx2.HTTPError as error:
            raise ToolError(
                f"The memory store could not be reached ({error}); try again."
            ) from error
        try:
            answer = response.json()
        except ValueError:
            answer = {}
        if response.status_code != 200:
            message = answer.get("message") or f"HTTP {response.status_code}"
            raise ToolError(f"The memory store refused the command: {message}")
        text = answer["content"][0]["text"]
        if answer.get("is_error"):
            raise ToolError(text)
        return text

    # The server runs every command as the SDK's file-system tool would: each handler the SDK
    # dispatches to is the same request.
    view = create = str_replace = insert = delete = rename = _send
