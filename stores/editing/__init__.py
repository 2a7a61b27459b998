"""The pure text engine: phrase edits, section and rule operations, diffs. No Django here."""

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
from stores.editing.outcome import Edited
from stores.editing.previews import PREVIEW_LENGTH, cut_preview, looks_truncated
from stores.editing.rules import Rule, add_rule, parse_rules, remove_rule, replace_rule
from stores.editing.sections import Section, append, delete_section, outline, replace_section
from stores.editing.status import Status
from stores.editing.text import EditApplied, PhraseEdit, apply_edit, apply_edits

__all__ = [
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
    "Occurrence",
    "PhraseEdit",
    "Rule",
    "Section",
    "Status",
    "TextEditError",
    "TooLong",
    "WordDiff",
    "add_rule",
    "append",
    "apply_edit",
    "apply_edits",
    "cut_preview",
    "delete_section",
    "looks_truncated",
    "outline",
    "parse_rules",
    "remove_rule",
    "replace_rule",
    "replace_section",
    "unified_diff",
    "word_diff",
]
