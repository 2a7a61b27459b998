"""Section ops on a skill's markdown body, as the shell calls them (`stores/ops/skill/`)."""

from __future__ import annotations

from stores.ops.skill import (
    append,
    delete_section,
    insert_after_section,
    insert_before_section,
    replace_section,
)

skill_append = append.OP.execute
skill_replace_section = replace_section.OP.execute
skill_delete_section = delete_section.OP.execute
skill_insert_before_section = insert_before_section.OP.execute
skill_insert_after_section = insert_after_section.OP.execute
