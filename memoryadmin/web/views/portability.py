"""Moving memories in and out: a PAM download, and an upload checked by a dry run first."""

from __future__ import annotations

import hashlib
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods

from memoryadmin.doors import statuses
from memoryadmin.doors.exports import pam_download
from memoryadmin.web.access import AgentScope, HtmxHttpRequest, agent_view
from stores.errors import ApplicationError
from stores.interchange import pam

CHECK, IMPORT = "check", "import"
SIZE_LIMIT = "size-limit"


@require_GET
@agent_view
def pam_export(request: HttpRequest, scope: AgentScope) -> HttpResponseBase:
    return pam_download(scope.agent)


@require_http_methods(["GET", "POST"])
@agent_view
def pam_import(request: HtmxHttpRequest, scope: AgentScope) -> HttpResponse:
    """GET: the page. POST `check`: the dry run's report (nothing written) and, when clean, the
    button that imports the same file; POST `import`: the import of the file that was checked
    (its SHA-256 must be the one the report showed)."""
    limit = pam.upload_max_bytes()
    context: dict[str, Any] = {"scope": scope, "agent": scope.agent, "limit": limit}
    if request.method == "GET":
        return render(request, "web/portability.html", context)
    action = IMPORT if request.POST.get("action") == IMPORT else CHECK
    context.update(_run(request, scope, action))
    template = "web/portability.html#report" if request.htmx else "web/portability.html"
    return render(request, template, context, status=_status(context))


def _status(context: dict[str, Any]) -> int:
    if context.get("check") == SIZE_LIMIT:
        return statuses.REQUEST_TOO_LARGE
    if context.get("refused"):
        return 400
    return 403 if context.get("forbidden") else 200


def _run(request: HttpRequest, scope: AgentScope, action: str) -> dict[str, Any]:
    if not scope.can_write:
        return {"forbidden": "You may read this agent's memories but not import into them."}
    upload = request.FILES.get("file")
    if upload is None:
        return {"refused": "Choose a PAM memory store (memory-store.json) to check."}
    limit = pam.upload_max_bytes()
    if upload.size is not None and upload.size > limit:
        # Django holds a large upload in a temporary file; it is refused by its size unread.
        return {
            "refused": f"{upload.name} is {upload.size:,} bytes; the limit of an upload (of "
            f"any request body) is {limit:,} bytes (MEMORYADMIN_MAX_BODY_BYTES).",
            "check": SIZE_LIMIT,
        }
    data = upload.read(limit + 1)
    digest = hashlib.sha256(data).hexdigest()
    dry_run = action == CHECK
    if not dry_run and request.POST.get("checked") != digest:
        return {
            "refused": "This is not the file that was checked (or it changed since): check "
            "it again before importing.",
            "check": "checked",
        }
    try:
        outcome = pam.import_memory_store(
            agent=scope.agent,
            document=pam.from_bytes(data, upload.name or "the file"),
            actor=scope.actor,
            dry_run=dry_run,
        )
    except pam.Refused as error:
        return {"refused": error.message, "check": error.check, "name": upload.name}
    except ApplicationError as error:
        return {"refused": error.message, "check": str(error.status)}
    return {
        "report": outcome.report,
        "notes": outcome.notes,
        "digest": digest,
        "name": upload.name,
    }
