"""Erasure and the audit log, for staff: a dry run's report before the erasure, the receipts,
and the log as a page, CSV or JSON."""

from __future__ import annotations

import csv
import json
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET, require_http_methods

from memoryadmin.web.forms import ErasureForm
from memoryadmin.web.views.common import form_refusal, http_status
from stores.editing import Status
from stores.engine.actors import Actor
from stores.engine.results import WriteResult
from stores.errors import ApplicationError
from stores.models import AuditEntry, Channel
from stores.services.erasing import Scope, erase

AUDIT_PAGE_SIZE = 50


def _staff(request: HttpRequest) -> None:
    if not request.user.is_staff:
        raise PermissionDenied("Only staff erase and read the audit log.")


@require_http_methods(["GET", "POST"])
@login_required
def erasure_page(request: HttpRequest) -> HttpResponse:
    """Fill in what to erase; "Dry run" reports what would go, "Erase" (confirmed) does it."""
    _staff(request)
    form = ErasureForm(request.POST or None)
    context: dict[str, Any] = {"form": form, "report": None, "refused": None}
    if request.method == "POST":
        erasing = request.POST.get("action") == "erase"
        if not form.is_valid():
            context["refused"] = form_refusal(form)
        elif erasing and request.POST.get("confirm") != "yes":
            context["refused"] = WriteResult(
                status=Status.INVALID,
                message="Tick that you understand an erasure cannot be undone, then erase.",
            )
        else:
            data = form.cleaned_data
            try:
                context["report"] = erase(
                    agent=data["agent"],
                    actor=Actor.for_user(request.user, channel=Channel.UI),
                    scope=Scope(
                        text=data["text"] or None,
                        record=Scope.parse_record(data["record"]) if data["record"] else None,
                        subject=data["subject"] or None,
                        everything=data["everything"],
                    ),
                    reason=data["reason"],
                    dry_run=not erasing,
                )
            except ApplicationError as refusal:
                context["refused"] = WriteResult(status=refusal.status, message=refusal.message)
    refused = context["refused"]
    status = http_status(refused) if refused is not None else 200
    return render(request, "web/erase.html", context, status=status)


@require_GET
@login_required
def audit_log(request: HttpRequest) -> HttpResponse:
    _staff(request)
    page = Paginator(AuditEntry.objects.all(), AUDIT_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "web/audit.html", {"page": page})


@require_GET
@login_required
def audit_export(request: HttpRequest, form: str) -> HttpResponse:
    """The whole log, oldest first, as CSV or JSON (details as JSON in CSV's last column)."""
    _staff(request)
    rows = [_row(entry) for entry in AuditEntry.objects.order_by("id").iterator(chunk_size=500)]
    if form == "json":
        response: HttpResponse = JsonResponse({"entries": rows})
    else:
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        writer = csv.writer(response)
        writer.writerow(["id", "kind", "at", "actor", "agent", "details"])
        for row in rows:
            writer.writerow(
                [
                    row["id"],
                    row["kind"],
                    row["at"],
                    row["actor"],
                    row["agent"],
                    json.dumps(row["details"], sort_keys=True),
                ]
            )
    response["Content-Disposition"] = f'attachment; filename="memoryadmin-audit.{form}"'
    return response


@require_GET
@login_required
def erasure_receipt(request: HttpRequest, entry_id: int) -> HttpResponse:
    """One erasure's signed receipt, as the file `manage.py erase --verify` checks."""
    _staff(request)
    entry = get_object_or_404(AuditEntry, pk=entry_id, kind=AuditEntry.Kind.ERASURE)
    response = JsonResponse(entry.details["receipt"], json_dumps_params={"indent": 2})
    receipt_id = entry.details["receipt"]["id"]
    response["Content-Disposition"] = f'attachment; filename="erasure-{receipt_id}.json"'
    return response


def _row(entry: AuditEntry) -> dict[str, Any]:
    return {
        "id": entry.pk,
        "kind": entry.kind,
        "at": entry.created_at.isoformat(),
        "actor": entry.actor,
        "agent": entry.agent_name,
        "details": entry.details,
    }
