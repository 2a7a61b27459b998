"""An agent's memories as a file to download, the same from the UI and the REST API."""

from __future__ import annotations

import tempfile

from django.http import FileResponse

from stores.interchange import pam
from stores.models import Agent

# An export up to this size stays in memory; a larger one spills to a temporary file.
IN_MEMORY_BYTES = 8 * 1024 * 1024


def pam_download(agent: Agent) -> FileResponse:
    """The agent's PAM memory store as `<agent>-memory-store.json`, written before the answer
    starts, so a failure is an error answer rather than a cut-off download."""
    buffer = tempfile.SpooledTemporaryFile(max_size=IN_MEMORY_BYTES)  # noqa: SIM115 (the response closes it)
    pam.write_memory_store(agent, buffer)
    buffer.seek(0)
    response = FileResponse(
        buffer,
        as_attachment=True,
        filename=f"{agent.name}-memory-store.json",
        content_type="application/json",
    )
    response["Cache-Control"] = "no-store"
    return response
