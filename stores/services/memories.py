"""Ops only long-term memory has, as the shell calls them (`stores/ops/memory/`)."""

from __future__ import annotations

from stores.ops.memory import invalidate, merge, reinforce, set_importance

memory_set_importance = set_importance.OP.execute
memory_reinforce = reinforce.OP.execute
memory_invalidate = invalidate.OP.execute
memory_merge = merge.OP.execute
