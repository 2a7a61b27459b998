"""Portable AI Memory (PAM v1.0): an agent's long-term memories as a memory store, and back.

PAM (portable-ai-memory.org) is the interchange format other memory tools read and write; its
SDK (`portable_ai_memory`) holds the models, the validator and the content hash: a file is
checked by the SDK's models and its deep validator before any of it is written. The file is
streamed (see `checking` for how the validator's whole-document checks are kept across
batches), so a store of any size is never held whole.

The mapping, both ways (README "Moving memories in and out"):

- `id` is the memory's ref: its alias, or its id here when it never had one. An import keeps it
  as the alias, so exporting again writes the same ids.
- `type` is the category when the category is one of PAM's types, else `custom` with the
  category as `custom_type`; `tags` are the tags (a list PAM cannot spell goes whole into the
  extension below); `confidence.current` is the importance and `confidence.last_reinforced`
  the last time it was seen; `temporal` holds created, updated, `valid_until` (when it was
  invalidated) and `superseded_by`, with `status` `superseded`, `retracted` (invalidated) or
  `archived`, and a `supersedes` relation from the successor.
- What memoryadmin holds beyond PAM (store, reinforcement count, pin and floor, decay and
  archive times, the subject, its own metadata) rides in the memory's PAM `metadata` under
  `memoryadmin`: the extension.
- What a PAM file carries that has no field here (summary, access, provenance, the validity
  start, the initial confidence and decay model, a `deprecated` status, the PAM metadata,
  relations other than the ones above, its conversation's index entry) is kept in the memory's
  `metadata` under `pam`, the residue, and written back out on export. Only what an export
  would not write by itself is kept, so re-importing an export writes nothing.
"""

from __future__ import annotations

from stores.interchange.pam.document import (
    Document,
    from_bytes,
    from_path,
    max_bytes,
    read_json,
    upload_max_bytes,
)
from stores.interchange.pam.integrity import canonical
from stores.interchange.pam.mapping import (
    EXTENSION,
    RESIDUE,
    SCHEMA,
    SCHEMA_VERSION,
    Refused,
    dump,
    pam_object,
    pam_tags,
)
from stores.interchange.pam.reading import check, empty_store, import_memory_store
from stores.interchange.pam.writing import write_embeddings, write_memory_store

__all__ = [
    "EXTENSION",
    "RESIDUE",
    "SCHEMA",
    "SCHEMA_VERSION",
    "Document",
    "Refused",
    "canonical",
    "check",
    "dump",
    "empty_store",
    "from_bytes",
    "from_path",
    "import_memory_store",
    "max_bytes",
    "pam_object",
    "pam_tags",
    "read_json",
    "upload_max_bytes",
    "write_embeddings",
    "write_memory_store",
]
