"""Who a single sign-on provider's user is here: their account, found by issuer and subject."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ProviderIdentity(models.Model):
    """One provider user (the ID token's `iss` and `sub`, which never change nor repeat)
    linked to the account single sign-on made for them. A name is not an identity: two
    provider users may give the same `preferred_username`, and one may change theirs."""

    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="provider_identities"
    )
    linked_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["issuer", "subject"], name="provider_identity_unique_subject"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.issuer} {self.subject}"
