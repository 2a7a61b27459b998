"""Line inserts on every surface's text, as the shell calls them (`stores/ops/records/`)."""

from __future__ import annotations

from stores.ops.records import insert, prepend

record_insert = insert.OP.execute
record_prepend = prepend.OP.execute
