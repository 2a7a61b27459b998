"""The files memoryadmin's export commands wrote, so an erasure can reach them too."""

from __future__ import annotations

from django.db import models


class ExportFile(models.Model):
    """One file an export command wrote for an agent (the newest write of each path)."""

    agent = models.ForeignKey("stores.Agent", on_delete=models.CASCADE, related_name="+")
    path = models.TextField()
    format = models.CharField(max_length=20)
    # The one record the file holds (a memory file, a RockBot memory, skill or task), empty
    # for a file of many: an erasure of that record deletes its file.
    surface = models.CharField(max_length=20, blank=True)
    record_id = models.BigIntegerField(null=True, blank=True)
    written_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["agent", "path"], name="export_file_unique_path")
        ]

    def __str__(self) -> str:
        return f"{self.format} export {self.path}"
