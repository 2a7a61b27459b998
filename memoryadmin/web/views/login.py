"""The answer to a login refused by django-axes after too many failures (settings: AXES_*)."""

from __future__ import annotations

import math

from axes.helpers import get_cool_off
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

LOCKED_OUT_STATUS = 429


def locked_out(
    request: HttpRequest, original_response: object = None, credentials: object = None
) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: the login page again, saying why and for how long.

    Whichever form was used (the UI's, the admin's, the browsable API's), the person sees
    the app's own page. Neither `original_response` nor `credentials` is read: under ASGI
    axes passes the credentials in the place of the response (django-axes PR #1494).
    """
    cool_off = get_cool_off(request)
    minutes = math.ceil(cool_off.total_seconds() / 60) if cool_off else None
    context = {
        "form": AuthenticationForm(request),
        "locked_out": True,
        "cool_off_minutes": minutes,
        "next": request.POST.get(REDIRECT_FIELD_NAME) or request.GET.get(REDIRECT_FIELD_NAME, ""),
    }
    return render(request, "registration/login.html", context, status=LOCKED_OUT_STATUS)
