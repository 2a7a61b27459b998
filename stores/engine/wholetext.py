"""The proof a whole-text write carries: what the caller read, checked by the engine for every
op that replaces a text field whole (replace, a text field set by update, a merge's text, an
accepted proposal's), so no op or door can forget it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stores.editing import PREVIEW_LENGTH, looks_truncated, text_sha256
from stores.errors import Conflict, Invalid, PreconditionRequired, SuspectedTruncation
from stores.models import VersionedRecord
from stores.selectors.records import sha256_key
from stores.surfaces import SurfaceSpec


@dataclass(frozen=True)
class WholeText:
    """A change that replaces text whole, with what its caller read: the version, and the
    SHA-256 a full read gave of each text (one hash, or one per text field for a caller
    holding the whole record). `allow_shorter` says a cut of the current text is meant."""

    version: int | None
    sha256: str | Mapping[str, str | None] | None = None
    allow_shorter: bool = False

    def sha256_of(self, text_field: str) -> str | None:
        if isinstance(self.sha256, Mapping):
            return self.sha256.get(text_field)
        return self.sha256


def check_whole_text(
    spec: SurfaceSpec, record: VersionedRecord, values: Mapping[str, Any], proof: WholeText
) -> None:
    """Refuse a whole-text write that does not prove a full read of every text it replaces,
    or whose new text looks cut from a preview of the current one."""
    replaced = [
        name
        for name in spec.text_fields
        if name in values and values[name] != getattr(record, name)
    ]
    if replaced and proof.version is None:
        raise PreconditionRequired(
            f"Replacing {', '.join(replaced)} whole needs the version you read "
            f"(expected_version or If-Match). Read the record in full first "
            f"({full_reads(spec, record)}), or change just a phrase with an edit.",
            sha256_field=sha256_key(replaced[0]),
        )
    for name in replaced:
        current = getattr(record, name)
        _check_full_read(spec, record, name, current, proof.sha256_of(name))
        # The second line: a shape cut from a preview, even from a caller who read in full.
        if not proof.allow_shorter and looks_truncated(current, values[name]):
            raise SuspectedTruncation(
                f"The new {name} looks cut from a preview of the current one: it is "
                f"{len(values[name])} of {len(current)} characters, begins like it and lacks "
                f"the rest. Read the full text first ({full_reads(spec, record)}), merge your "
                "change into it and replace with the whole text, or change just a phrase with "
                "an edit. Only if you mean to drop the rest, send the replacement again with "
                "allow_shorter: true.",
                current_length=len(current),
                new_length=len(values[name]),
            )


def full_reads(spec: SurfaceSpec, record: VersionedRecord) -> str:
    ways = [
        f"read_record (surface {spec.key}, id {record.pk})",
        f"GET /api/v1/{spec.api_path}/{record.pk}/",
    ]
    if spec.resource:
        ways.append(spec.resource.format(id=record.pk))
    return ", ".join(ways)


def _check_full_read(
    spec: SurfaceSpec,
    record: VersionedRecord,
    text_field: str,
    current: str,
    expected_sha256: str | None,
) -> None:
    """A text longer than a preview is replaced whole only by a caller who proves a full read.

    The version proves only that some read was seen, and a recall or list preview carries it
    too; an edited preview sent back with it silently dropped the rest of the text, however
    the shape guard was tuned. The SHA-256 of the current text is in full reads only (the feed
    carries a fingerprint of it that is not it), so sending it back is the proof (as
    Anthropic's memory stores take `content_sha256`). Refused as precondition_required, not
    suspected_truncation: nothing says this text is a cut (a full rewrite is legitimate); what
    is missing is the precondition, which the caller can supply, and the word says to read
    first, as a missing version does.
    """
    key = sha256_key(text_field)
    if expected_sha256 is None:
        if len(current) <= PREVIEW_LENGTH:
            return  # every preview of it is the whole text: the version is proof enough
        raise PreconditionRequired(
            f"The current {text_field} is {len(current)} characters, longer than a preview "
            f"({PREVIEW_LENGTH}): replacing it whole needs proof that you read all of it. Read "
            f"the record in full ({full_reads(spec, record)}), merge your change into the "
            f"whole text, and send its {key} as expected_sha256 with the version; or change "
            "just a phrase with an edit. A recall, list or feed preview is never enough.",
            current_length=len(current),
            preview_length=PREVIEW_LENGTH,
            sha256_field=key,
        )
    if not isinstance(expected_sha256, str):
        raise Invalid("expected_sha256 must be a string: the 64 hex digits a full read gives.")
    if expected_sha256.lower() != text_sha256(current):
        raise Conflict(
            f"expected_sha256 is not the SHA-256 of the current {text_field}: the text changed "
            f"since you read it, or the hash was not its {key} from a full read (a feed's "
            f"fingerprint is not it). Read the record in full again ({full_reads(spec, record)}) "
            "and apply your change to what you read.",
            current_version=record.version,
        )
