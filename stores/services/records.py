"""Ops every surface shares, as the shell calls them: create, phrase edit, full replace, field
update, forget, revert, undo of one change. Each is its op (`stores/ops/records/`)."""

from __future__ import annotations

from stores.ops.records import create, edit, forget, replace, revert, undo, update

record_create = create.OP.execute
record_edit = edit.OP.execute
record_replace = replace.OP.execute
record_update = update.OP.execute
record_forget = forget.OP.execute
record_revert = revert.OP.execute
record_undo = undo.OP.execute
