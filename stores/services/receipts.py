"""Erasure receipts: what an erasure searched and removed, signed with the installation's key.

A receipt carries counts and SHA-256 hashes, never the erased text. Its signature is an
HMAC-SHA256 of its canonical JSON under a key derived from SECRET_KEY (Django's salted HMAC),
so only this installation can issue one, and anyone holding the installation can check it.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.utils.crypto import constant_time_compare, salted_hmac

from stores.errors import Invalid

# Separates this use of SECRET_KEY from every other one (sessions, signed cookies).
RECEIPT_SALT = "memoryadmin.erasure-receipt"
SIGNATURE = "signature"


def _canonical(body: dict[str, Any]) -> str:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _signature(body: dict[str, Any], secret: str) -> str:
    return salted_hmac(
        RECEIPT_SALT, _canonical(body), secret=secret, algorithm="sha256"
    ).hexdigest()


def signed(body: dict[str, Any]) -> dict[str, Any]:
    """`body` with its signature under the current SECRET_KEY."""
    return {**body, SIGNATURE: _signature(body, settings.SECRET_KEY)}


def verify(receipt: Any) -> dict[str, Any]:
    """The receipt's body if its signature holds under SECRET_KEY or one of its fallbacks (a
    key rotated since); Invalid otherwise, saying why."""
    if not isinstance(receipt, dict) or not isinstance(receipt.get(SIGNATURE), str):
        raise Invalid("This is not an erasure receipt: no signature in it.")
    body = {key: value for key, value in receipt.items() if key != SIGNATURE}
    keys = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    if any(constant_time_compare(_signature(body, key), receipt[SIGNATURE]) for key in keys):
        return body
    raise Invalid(
        "The receipt's signature does not match: it was changed after it was issued, or another "
        "installation issued it."
    )
