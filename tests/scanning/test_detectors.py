"""The door's detectors: each kind found where it is, masked without a trace, and ordinary
text (the corpus of 1,000 ordinary memories) left alone."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stores.scanning import Category, masked, scan
from tests.fixtures.ordinary_memories import ordinary_memories

PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "-----END RSA PRIVATE KEY-----"
)
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" + "k1L2m3N4o5P6q7R8"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)

# (text around the value, the value, the kind the scan names, its category)
CASES = [
    ("The deploy key is {} for now.", "AKIAQ7XJ2L5N8P3R6T9V", "AWS Access Key", "credentials"),
    ("Server key:\n{}\nkeep it safe.", PRIVATE_KEY, "private key", "credentials"),
    ("Token {} for the bot.", GITHUB, "GitHub Token", "credentials"),
    ("Slack: {} works.", "xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx",
     "Slack Token", "credentials"),
    ("Billing with {} today.", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "Stripe Access Key",
     "credentials"),
    ("Session {} expires soon.", JWT, "JSON web token", "credentials"),
    ("Connect with postgres://admin:{}@db.internal:5432/app please.", "Wint3r-is-c0ming",
     "password in a URL", "credentials"),
    ("Write to {} about the invoice.", "jane.doe+billing@example.org", "email address",
     "personal_data"),
    ("Call her on {} after six.", "+44 20 7946 0958", "phone number", "personal_data"),
    ("The office line is {}.", "(415) 555-2671", "phone number", "personal_data"),
    ("Card {} expires in May.", "4111 1111 1111 1111", "card number", "personal_data"),
    ("Amex {} is the backup.", "3782-822463-10005", "card number", "personal_data"),
    ("Salary goes to {} monthly.", "GB82 WEST 1234 5698 7654 32", "IBAN", "personal_data"),
    ("Rent to {} monthly.", "DE89370400440532013000", "IBAN", "personal_data"),
]  # fmt: skip


@pytest.mark.parametrize(("around", "value", "kind", "category"), CASES)
def test_each_kind_is_found_where_it_is_and_masked_without_a_trace(around, value, kind, category):
    text = around.format(value)

    found = scan(text, region="US")

    assert [(f.kind, str(f.category)) for f in found] == [(kind, category)]
    start = text.index(value)
    # The whole value, or (for a password in a URL) the value alone, not its context.
    assert (found[0].start, found[0].end) == (start, start + len(value))
    hidden = masked(text, found)
    assert hidden == around.format(f"[masked {kind}]")
    assert scan(hidden, region="US") == []


@pytest.mark.parametrize(
    "text",
    [
        "Card 4111 1111 1111 1112 is a typo: its Luhn digit is wrong.",
        "Account GB82 WEST 1234 5698 7654 33 has a wrong checksum.",
        "Read ISBN 978-1-4028-9462-6 and order #48213977.",
        "Released on 2024-05-01 at 10:30, version 3.11.2, 1,234,567 downloads.",
        "Commit 3f1c2b9e8d7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e deployed; request "
        "6fa459ea-ee8a-3ca4-894e-db77e160355e retried.",
        "The AWS region is eu-west-1 and the password manager is 1Password.",
        "See https://docs.example.org/setup/ and ssh://git@example.org/repo.git.",
        "Keep the API key in the vault: never write it here.",
        "Phone number 555 is not a number; nor is 12345 or 2024.",
    ],
)
def test_near_misses_are_not_findings(text):
    assert scan(text, region="US") == []


def test_a_number_without_its_country_code_is_read_in_the_configured_region():
    assert [f.kind for f in scan("Ring 020 7946 0958 tonight.", region="GB")] == ["phone number"]
    assert scan("Ring 020 7946 0958 tonight.", region=None) == []


def test_a_credential_wins_over_the_address_it_is_written_in():
    text = "Use https://deploy:Hunter2Hunter2@ci.example.com/hooks for the hook."

    found = scan(text, region="US")

    assert [f.kind for f in found] == ["password in a URL"]
    assert "Hunter2Hunter2" not in masked(text, found)


def test_an_edit_is_judged_by_the_lines_it_adds():
    before = "Email: old@example.org\nLikes tea.\n"
    after = before + "Token " + GITHUB + "\n"

    found = scan(after, region="US", skip_lines=before.splitlines(keepends=True))

    assert [f.kind for f in found] == ["GitHub Token"]
    assert after[found[0].start : found[0].end] == GITHUB


def test_the_corpus_of_ordinary_memories_holds_nothing_to_hold_or_refuse():
    corpus = ordinary_memories()

    assert len(corpus) == 1000 and corpus == ordinary_memories()
    flagged = {text: scan(text, region="US") for text in corpus}
    assert {text: found for text, found in flagged.items() if found} == {}


@given(st.text(max_size=400))
def test_any_text_scans_to_ordered_disjoint_findings_that_mask_away(text):
    found = scan(text, region="US")

    for finding in found:
        assert 0 <= finding.start < finding.end <= len(text)
        assert finding.category in (Category.CREDENTIALS, Category.PERSONAL_DATA)
    for first, second in itertools.pairwise(found):
        assert first.end <= second.start
    hidden = masked(text, found)
    assert all(text[f.start : f.end] not in hidden for f in found if len(text[f.start : f.end]) > 8)


@given(
    st.lists(st.sampled_from([around.format(value) for around, value, *_ in CASES]), max_size=5),
    st.lists(st.sampled_from(ordinary_memories(50)), max_size=5),
)
def test_values_mixed_into_ordinary_text_are_each_found_and_masked(values, ordinary):
    text = "\n".join(values + ordinary)

    found = scan(text, region="US")

    assert len(found) == len(values)
    assert scan(masked(text, found), region="US") == []
