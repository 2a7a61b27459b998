"""Webhook signing secrets encrypted at rest (Fernet: AES-128-CBC with HMAC-SHA256).

The keys are MEMORYADMIN["WEBHOOKS"]["SECRET_KEYS"] (MEMORYADMIN_WEBHOOK_SECRET_KEYS, comma
separated): the first encrypts, every one decrypts, so a key is rotated by putting a new one
first, running `manage.py rotate_webhook_secrets` (which re-encrypts every secret with it)
and then dropping the old one. Unset, one key is derived from the installation's SECRET_KEY:
a database copied without the secret key file does not give the secrets away.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, MultiFernet
from django.conf import settings

_DERIVATION = b"memoryadmin webhook signing secrets\x00"


def derived_key(secret_key: str) -> str:
    """A Fernet key made from the installation's secret key (32 bytes of SHA-256)."""
    digest = hashlib.sha256(_DERIVATION + secret_key.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode()


def keys() -> list[str]:
    configured = settings.MEMORYADMIN["WEBHOOKS"].get("SECRET_KEYS") or []
    return list(configured) or [derived_key(settings.SECRET_KEY)]


def _fernet() -> MultiFernet:
    return MultiFernet([Fernet(key) for key in keys()])


def seal(secret: str) -> str:
    """`secret` encrypted with the first key ("" stays "": a webhook without a secret)."""
    return _fernet().encrypt(secret.encode()).decode() if secret else ""


def unseal(sealed: str) -> str:
    """The secret `seal` encrypted, with whichever configured key it was sealed with."""
    return _fernet().decrypt(sealed.encode()).decode() if sealed else ""


def reseal(sealed: str) -> str:
    """`sealed` encrypted again with the first key (MultiFernet.rotate)."""
    return _fernet().rotate(sealed.encode()).decode() if sealed else ""
