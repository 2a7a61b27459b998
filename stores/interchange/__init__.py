"""Reading and writing other stores' files: the native JSON Lines format and RockBot's layout.

Parsers turn files into `stores.services.importing.entries.Incoming` records (or Problems) for the
import service; writers read records and write files atomically. No database write here.
"""
