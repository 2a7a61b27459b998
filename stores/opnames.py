"""The op words: what a revision records, what the policy weighs, what a door offers.

In the order the doors list the ops (the registry sorts its modules by it).
"""

from __future__ import annotations

from enum import StrEnum


class OpName(StrEnum):
    RECALL = "recall"
    READ = "read"
    CREATE = "create"
    EDIT = "edit"
    REPLACE = "replace"
    UPDATE = "update"
    FORGET = "forget"
    REVERT = "revert"
    SET_IMPORTANCE = "set_importance"
    REINFORCE = "reinforce"
    INVALIDATE = "invalidate"
    MERGE = "merge"
    SET_TTL = "set_ttl"
    APPEND = "append"
    REPLACE_SECTION = "replace_section"
    DELETE_SECTION = "delete_section"
    ADD_RULE = "add_rule"
    REMOVE_RULE = "remove_rule"
    REPLACE_RULE = "replace_rule"
    VIEW = "view"
    INSERT = "insert"
    PREPEND = "prepend"
    UNDO = "undo"
    INSERT_BEFORE_SECTION = "insert_before_section"
    INSERT_AFTER_SECTION = "insert_after_section"
    # Bookkeeping a door never offers: an import's write, the link a forget removes, and the
    # text an erasure takes out of a live record (stores.services.erasing).
    IMPORT = "import"
    UNLINK = "unlink"
    ERASE = "erase"
