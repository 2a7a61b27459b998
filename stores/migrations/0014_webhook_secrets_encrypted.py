"""Webhook signing secrets encrypted at rest: the column widened for the Fernet token, and
the secrets stored in clear until now encrypted (stores.webhooks.sealing)."""

from __future__ import annotations

from django.db import migrations, models

from stores.webhooks import sealing

CLEAR_PREFIX = "whsec_"


def encrypt_secrets(apps, schema_editor) -> None:
    webhooks = apps.get_model("stores", "Webhook")
    for webhook in webhooks.objects.filter(secret__startswith=CLEAR_PREFIX).only("secret"):
        webhook.secret = sealing.seal(webhook.secret)
        webhook.save(update_fields=["secret"])


def decrypt_secrets(apps, schema_editor) -> None:
    webhooks = apps.get_model("stores", "Webhook")
    for webhook in webhooks.objects.exclude(secret="").only("secret"):
        if not webhook.secret.startswith(CLEAR_PREFIX):
            webhook.secret = sealing.unseal(webhook.secret)
            webhook.save(update_fields=["secret"])


class Migration(migrations.Migration):
    dependencies = [("stores", "0013_import_digest")]

    operations = [
        migrations.AlterField(
            model_name="webhook",
            name="secret",
            field=models.CharField(blank=True, editable=False, max_length=255),
        ),
        migrations.RunPython(encrypt_secrets, decrypt_secrets),
    ]
