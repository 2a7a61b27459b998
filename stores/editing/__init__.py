"""The pure text engine: phrase edits, line inserts, section and rule operations, numbered views,
undoing one change, diffs. No Django here."""

from stores.editing.diff import DiffBudget, DiffChunk, WordDiff, unified_diff, word_diff
from stores.editing.errors import (
    Ambiguous,
    InvalidEdit,
    NearMiss,
    NoChange,
    NoMatch,
    Occurrence,
    TextEditError,
    TooLong,
)
from stores.editing.inserts import insert_lines, line_count, prepend
from stores.editing.limits import MAX_BATCH_EDITS
from stores.editing.outcome import Edited
from stores.editing.previews import (
    PREVIEW_LENGTH,
    cut_preview,
    fingerprint_of_sha256,
    looks_truncated,
    text_sha256,
)
from stores.editing.rules import Rule, add_rule, parse_rules, remove_rule, replace_rule
from stores.editing.sections import (
    Section,
    append,
    delete_section,
    insert_after_section,
    insert_before_section,
    outline,
    replace_section,
)
from stores.editing.status import Status
from stores.editing.text import EditApplied, PhraseEdit, apply_edit, apply_edits
from stores.editing.undo import UndoConflict, touched_by, undo_change
from stores.editing.view import NumberedView, view_lines

__all__ = [
    "MAX_BATCH_EDITS",
    "PREVIEW_LENGTH",
    "Ambiguous",
    "DiffBudget",
    "DiffChunk",
    "EditApplied",
    "Edited",
    "InvalidEdit",
    "NearMiss",
    "NoChange",
    "NoMatch",
    "NumberedView",
    "Occurrence",
    "PhraseEdit",
    "Rule",
    "Section",
    "Status",
    "TextEditError",
    "TooLong",
    "UndoConflict",
    "WordDiff",
    "add_rule",
    "append",
    "apply_edit",
    "apply_edits",
    "cut_preview",
    "delete_section",
    "fingerprint_of_sha256",
    "insert_after_section",
    "insert_before_section",
    "insert_lines",
    "line_count",
    "looks_truncated",
    "outline",
    "parse_rules",
    "prepend",
    "remove_rule",
    "replace_rule",
    "replace_section",
    "text_sha256",
    "touched_by",
    "undo_change",
    "unified_diff",
    "view_lines",
    "word_diff",
]
