"""What the page says about an outcome, in a reviewer's words: one sentence per status.

A result's `message` is written for a model: it names the op's parameters (old_string,
replace_all) and quotes text as Python literals (an NBSP reads '\\xa0'). Agents keep it, and the
page shows it folded away; the page's own sentence comes from here, and the details it needs
(the closest text, each occurrence, the revisions in the way) are shown from the result's
fields, never parsed out of the message.
"""

from __future__ import annotations

from stores.editing import Status

SENTENCES: dict[Status, str] = {
    Status.OK: "Done.",
    Status.UPDATED: "Saved.",
    Status.CREATED: "Created.",
    Status.DELETED: "Deleted. Its history keeps the last text, so it can be restored.",
    Status.INVALIDATED: "Marked as no longer true. It stays in the history.",
    Status.REVERTED: "Brought back as it was.",
    Status.APPROVED: "Approved.",
    Status.NOT_FOUND: "This record is not there any more: it may have been deleted.",
    Status.NOT_EDITABLE: "This record cannot be changed this way.",
    Status.NO_MATCH: "The text you are looking for is not in the record exactly as typed.",
    Status.AMBIGUOUS: "The text you are looking for appears more than once, so it is unclear "
    "which place to change.",
    Status.NO_CHANGE: "Nothing would change: the record already reads like that.",
    Status.CONFLICT: "This change clashes with another change made to the record.",
    Status.PRECONDITION_REQUIRED: "The page did not say which version it was changing. Reload "
    "the record and try again.",
    Status.SUSPECTED_TRUNCATION: "The new text is much shorter than the old one, which looks "
    "like an accident, so nothing was written.",
    Status.PRIVACY_RESTRICTED: "This record is private to the person it is about, so it is not "
    "changed from here.",
    Status.SENSITIVE_DATA: "The text holds credentials or personal data this agent does not "
    "store, so nothing was written.",
    Status.DISABLED: "This is switched off for this agent.",
    Status.FORBIDDEN: "You may not make this change.",
    Status.INVALID: "The change could not be made as filled in.",
}

# Where the sentence alone would leave the person guessing: the reason is in the service's
# message (a limit, a missing field), so the page shows it too, not only folded away.
REASON_SHOWN = frozenset(
    {
        Status.INVALID,
        Status.NOT_EDITABLE,
        Status.NOT_FOUND,
        Status.FORBIDDEN,
        Status.DISABLED,
        Status.PRIVACY_RESTRICTED,
        Status.SUSPECTED_TRUNCATION,
        Status.SENSITIVE_DATA,
    }
)


def sentence(status: Status | str) -> str:
    return SENTENCES[Status(status)]
