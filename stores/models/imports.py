"""Where an imported record came from, so an export can hand it back exactly as it was."""

from __future__ import annotations

from django.db import models


class ImportedSource(models.Model):
    """One file (or one entry of a group file) of another agent store, as it was read.

    `raw` keeps what the memoryadmin fields cannot hold verbatim: the file's own spelling of
    each field name (PascalCase or camelCase), the exact text of values such as timestamps
    with 100-nanosecond ticks, fields memoryadmin does not know (for surfaces without a
    metadata field), and the file's key order. An export writes a raw value back when the
    record still means the same value, and the record's current value when it changed.
    This is bookkeeping of the import door, not record state: it carries no version.

    `digest` (of a file that holds one record) with `record_version` and `record_decayed_at`
    say what the record was when it last matched the file: a re-import leaves a file unparsed
    while its bytes and its record are both still those (decay changes a memory without a
    new version, so it is noted too). Empty for a file that is always read.
    """

    agent = models.ForeignKey("stores.Agent", on_delete=models.CASCADE, related_name="+")
    source_format = models.CharField(max_length=20)
    # Path of the file relative to the store's root; an entry of a group file adds `#key`.
    path = models.CharField(max_length=1000)
    surface = models.CharField(max_length=20, blank=True)
    record_id = models.BigIntegerField(null=True, blank=True)
    position = models.PositiveIntegerField(default=0)
    raw = models.JSONField(default=dict, blank=True)
    digest = models.CharField(max_length=64, blank=True)
    record_version = models.PositiveIntegerField(null=True, blank=True)
    record_decayed_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "source_format", "path"], name="imported_source_unique_path"
            ),
        ]
        indexes = [
            models.Index(fields=["surface", "record_id"], name="imported_source_record"),
        ]

    def __str__(self) -> str:
        return f"{self.source_format}:{self.path}"
