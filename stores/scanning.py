"""What a text holds that must not be written unnoticed: credentials and personal data.

Pure Python, no Django: the engine asks it about the text a write would store and decides
from the agent's policy. Credentials come from detect-secrets' own detectors (the ones that
look for a shape a key or token has, not those that guess from entropy or a nearby word,
which mistake ordinary prose for secrets); personal data from phonenumbers and stdnum's
checksums, so a card or an account number is one that validates, not any long number.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import phonenumbers
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from stdnum import iban, luhn


class Category(StrEnum):
    CREDENTIALS = "credentials"
    PERSONAL_DATA = "personal_data"


CATEGORY_WORDS = {Category.CREDENTIALS: "credentials", Category.PERSONAL_DATA: "personal data"}

# detect-secrets detectors that match a shape a credential has. Left out: the entropy
# detectors and the keyword one (they flag ordinary sentences and ids), the public IP one
# (an address is not a secret), Artifactory's (it takes plain capitalised words), and
# Cloudant's, IBM Cloud's, IBM COS's and SoftLayer's, which look for a vendor's key name
# beside a value from every position of the text: together five times the cost of all the
# others, for vendors' keys a memory seldom holds.
SECRET_DETECTORS = (
    "AWSKeyDetector",
    "AzureStorageKeyDetector",
    "BasicAuthDetector",
    "DiscordBotTokenDetector",
    "GitHubTokenDetector",
    "GitLabTokenDetector",
    "JwtTokenDetector",
    "MailchimpDetector",
    "NpmDetector",
    "OpenAIDetector",
    "PrivateKeyDetector",
    "PypiTokenDetector",
    "SendGridDetector",
    "SlackDetector",
    "SquareOAuthDetector",
    "StripeDetector",
    "TelegramBotTokenDetector",
    "TwilioKeyDetector",
)
# detect-secrets' names where a reader would not know what was meant.
KIND_NAMES = {
    "Basic Auth Credentials": "password in a URL",
    "Private Key": "private key",
    "JSON Web Token": "JSON web token",
}
EMAIL = "email address"
PHONE = "phone number"
CARD = "card number"
IBAN = "IBAN"

# A whole PEM block, so masking leaves none of the key behind its header.
PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN[A-Z ]*PRIVATE KEY( BLOCK)?-----.*?(-----END[A-Z ]*PRIVATE KEY( BLOCK)?-----|\Z)",
    re.DOTALL,
)
EMAIL_ADDRESS = re.compile(
    r"(?<![\w.+%:/-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}\b"
)
# 13 to 19 digits, in groups as people write them, starting as card numbers do (2 to 6: an
# ISBN's 978 is not one); Luhn decides.
CARD_DIGITS = re.compile(r"(?<![\d-])[2-6](?:[ -]?\d){12,18}(?![\d-])")
IBAN_TEXT = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b")
TOKEN_TAIL = re.compile(r"[A-Za-z0-9_+/=-]*")
# A run of digits a phone number could be written as: an optional +, digits with spaces,
# dots, dashes or brackets between them.
PHONE_CANDIDATE = re.compile(r"(?<![\w+])\+?\(?\d[\d ().-]{5,24}\d(?!\w)")
# A date as ISO 8601 writes it has the digits of a phone number and never is one.
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# Fewer digits than this on a line and it holds no phone number: the matcher is not asked.
PHONE_MIN_DIGITS = 7


@dataclass(frozen=True)
class Finding:
    """One match in a text: what kind it is and where (offsets into the text scanned)."""

    category: Category
    kind: str
    start: int
    end: int

    def describe(self) -> dict[str, str]:
        """What may be said about it: never the matched text."""
        return {"category": str(self.category), "kind": self.kind}


@functools.cache
def _secret_patterns() -> tuple[tuple[str, Any, re.Pattern[str]], ...]:
    detector_classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    classes = {detector_class.__name__: detector_class for detector_class in detector_classes}
    patterns: list[tuple[str, Any, re.Pattern[str]]] = []
    for name in SECRET_DETECTORS:
        detector = classes[name]()
        kind = KIND_NAMES.get(detector.secret_type, detector.secret_type)
        patterns.extend((kind, detector, regex) for regex in detector.denylist)
    return tuple(patterns)


def _token_end(text: str, end: int) -> int:
    tail = TOKEN_TAIL.match(text, end)
    return tail.end() if tail else end


def _credentials(text: str, offset: int) -> Iterator[Finding]:
    for kind, detector, regex in _secret_patterns():
        for match in regex.finditer(text):
            # The credential itself where the pattern captures it with its context (the
            # password of a URL), else the whole match; a captured prefix alone is not it.
            start, end = match.span()
            if match.lastindex and match.end(1) - match.start(1) >= 8:
                start, end = match.span(1)
            else:
                # Some patterns stop at the shortest token that matches (a JWT's first two
                # parts): the credential runs on to the end of the token.
                end = _token_end(text, end)
            if kind == "JSON web token" and not detector.is_formally_valid(text[start:end]):
                continue
            yield Finding(Category.CREDENTIALS, kind, offset + start, offset + end)


def _personal(kind: str, start: int, end: int) -> Finding:
    return Finding(Category.PERSONAL_DATA, kind, start, end)


def _personal_data(text: str, offset: int, region: str | None) -> Iterator[Finding]:
    if "@" in text:
        for match in EMAIL_ADDRESS.finditer(text):
            yield _personal(EMAIL, offset + match.start(), offset + match.end())
    if sum(map(str.isdigit, text)) < PHONE_MIN_DIGITS:
        return
    cards = []
    for match in CARD_DIGITS.finditer(text):
        if luhn.is_valid(re.sub(r"[ -]", "", match.group())):
            cards.append((match.start(), match.end()))
            yield _personal(CARD, offset + match.start(), offset + match.end())
    for match in IBAN_TEXT.finditer(text):
        if iban.is_valid(match.group()):
            yield _personal(IBAN, offset + match.start(), offset + match.end())
    valid = phonenumbers.Leniency.VALID
    for candidate in PHONE_CANDIDATE.finditer(text):
        digits = sum(map(str.isdigit, candidate.group()))
        if (
            digits < PHONE_MIN_DIGITS
            or ISO_DATE.fullmatch(candidate.group())
            or any(start <= candidate.start() < end for start, end in cards)
        ):
            continue
        # The matcher reads the run of digits only: over a whole text it parses every
        # number in it, dates and prices included, at many times the cost.
        for found in phonenumbers.PhoneNumberMatcher(candidate.group(), region, leniency=valid):
            start = offset + candidate.start() + found.start
            yield _personal(PHONE, start, start + found.end - found.start)


def scan(text: str, *, region: str | None = None, skip_lines: Iterable[str] = ()) -> list[Finding]:
    """Every credential and piece of personal data in `text`, in order of where it starts.

    Lines in `skip_lines` (the text as it was before an edit) are not read again: an edit is
    judged by what it adds, and its cost follows the lines it changed, not the document.
    `region` is where a phone number written without its country code is read as dialled.
    """
    findings: list[Finding] = []
    for start, chunk in _new_runs(text, set(skip_lines)):
        for block in PRIVATE_KEY_BLOCK.finditer(chunk):
            findings.append(
                Finding(
                    Category.CREDENTIALS, "private key", start + block.start(), start + block.end()
                )
            )
        findings.extend(_credentials(chunk, start))
        findings.extend(_personal_data(chunk, start, region))
    return _without_overlaps(findings)


def _new_runs(text: str, known: set[str]) -> Iterator[tuple[int, str]]:
    """Each run of consecutive lines of `text` not in `known`, with where it starts: each is
    read as one string, so a document costs a pass of each pattern, not one per line."""
    run_start: int | None = None
    offset = 0
    for line in text.splitlines(keepends=True):
        if line in known:
            if run_start is not None:
                yield run_start, text[run_start:offset]
                run_start = None
        elif run_start is None:
            run_start = offset
        offset += len(line)
    if run_start is not None:
        yield run_start, text[run_start:offset]


def _without_overlaps(findings: list[Finding]) -> list[Finding]:
    """One finding where matches overlap: a credential before personal data (a URL's password
    before the address after it), then the widest (a private key's block over its header)."""
    kept: list[Finding] = []
    starts: list[int] = []
    ranked = sorted(
        findings, key=lambda f: (f.category != Category.CREDENTIALS, -(f.end - f.start), f.start)
    )
    for finding in ranked:
        # Kept findings never overlap, so only the neighbours on each side can clash.
        at = bisect.bisect_left(starts, finding.start)
        before = kept[at - 1] if at else None
        after = kept[at] if at < len(kept) else None
        if (before and before.end > finding.start) or (after and after.start < finding.end):
            continue
        starts.insert(at, finding.start)
        kept.insert(at, finding)
    return kept


def placeholder(finding: Finding) -> str:
    return f"[masked {finding.kind}]"


def masked(text: str, findings: list[Finding]) -> str:
    """`text` with each finding (from `scan` of this text) replaced by a placeholder."""
    pieces = []
    position = 0
    for finding in findings:
        pieces.append(text[position : finding.start])
        pieces.append(placeholder(finding))
        position = finding.end
    pieces.append(text[position:])
    return "".join(pieces)


def kinds(findings: Iterable[Finding]) -> list[str]:
    """The kinds found, each once, in order."""
    return list(dict.fromkeys(finding.kind for finding in findings))
