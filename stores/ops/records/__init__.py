"""Ops every surface has: read, create, edit, replace, update, forget, revert, undo, lines."""
