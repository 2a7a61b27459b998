"""Import a RockBot agent directory (memory/, working/, skills/, tasks/, rules.md)."""

from __future__ import annotations

from stores.interchange import rockbot
from stores.management.transfers import DirectoryImportCommand


class Command(DirectoryImportCommand):
    help = (
        "Import a RockBot agent directory into an agent (created if missing). Records keep "
        "their original ids as aliases; running it again changes only what changed."
    )

    count_files = staticmethod(rockbot.count_files)
    read_files = staticmethod(rockbot.read_store)
