"""Ops only working memory has, as the shell calls them (`stores/ops/working/`)."""

from __future__ import annotations

from stores.ops.working import set_ttl

working_set_ttl = set_ttl.OP.execute
