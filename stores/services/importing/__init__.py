"""Bulk import: many records from another store, each keeping its original id as an alias.

New records are inserted in batches (`inserting`), never one save per row; a record that exists
already is left alone or changed through the edit engine (`syncing`); each entry is checked whole
before anything of it is written (`cleaning`), and a bad entry becomes a problem in the report
(`entries`) while the rest goes on (`run`). Where each record came from is kept (`traces`), and
the links between memories are set last (`links`).
"""
