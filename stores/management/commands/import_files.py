"""Import a memory directory (the files of Claude's memory tool) as an agent's memory files."""

from __future__ import annotations

from stores.interchange import memory_files
from stores.management.transfers import DirectoryImportCommand


class Command(DirectoryImportCommand):
    help = (
        "Import every file below DIRECTORY as the memory file /memories/<its path> of an "
        "agent (created if missing). Files come in byte for byte (UTF-8 text; another "
        "encoding is refused and named); symbolic links are never followed. Running it again "
        "changes only what changed."
    )

    count_files = staticmethod(memory_files.count_files)
    read_files = staticmethod(memory_files.read_directory)
