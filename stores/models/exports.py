"""The files memoryadmin's export commands wrote, so an erasure can reach them too."""

from __future__ import annotations

from django.db import models


class ExportFile(models.Model):
    """One file an export command wrote for an agent (the newest write of each path)."""

    agent = models.ForeignKey("stores.Agent", on_delete=models.CASCADE, related_name="+")
    path = models.TextField()
    format = models.CharField(max_length=20)
    written_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["agent", "path"], name="export_file_unique_path")
        ]

    def __str__(self) -> str:
        return f"{self.format} export {self.path}"
