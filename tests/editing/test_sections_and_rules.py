from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from stores.editing import (
    Ambiguous,
    NoChange,
    NoMatch,
    TooLong,
    add_rule,
    append,
    delete_section,
    outline,
    parse_rules,
    remove_rule,
    replace_rule,
    replace_section,
)

SKILL = """# Deploy the site

Short intro.

## Prepare
Check the branch.

### Secrets
Load them from the vault.

## Release
Tag and push.
```sh
# not a heading
git push --tags
```
"""


def test_outline_lists_headings_outside_code_fences():
    assert [(s.title, s.level, s.line) for s in outline(SKILL)] == [
        ("Deploy the site", 1, 1),
        ("Prepare", 2, 5),
        ("Secrets", 3, 8),
        ("Release", 2, 11),
    ]


def test_replace_section_keeps_heading_and_following_sections():
    result = replace_section(SKILL, "Prepare", "Check the branch and the CI status.").text
    assert "## Prepare\nCheck the branch and the CI status.\n\n## Release" in result
    assert "Secrets" not in result
    assert result.endswith("git push --tags\n```\n")


def test_delete_section_removes_heading_and_subsections():
    result = delete_section(SKILL, "## Prepare")
    assert "Prepare" not in result and "Secrets" not in result
    assert "## Release\nTag and push." in result


def test_append_to_a_section_lands_at_its_end():
    result = append(SKILL, "Rotate them yearly.", heading="Secrets")
    assert "Load them from the vault.\nRotate them yearly.\n\n## Release" in result


def test_append_without_heading_adds_to_the_end_in_crlf():
    document = "# Title\r\nBody\r\n"
    assert append(document, "More\nlines") == "# Title\r\nBody\r\nMore\r\nlines\r\n"


def test_duplicate_headings_are_ambiguous():
    with pytest.raises(Ambiguous) as refused:
        replace_section("## Notes\na\n## Notes\nb\n", "Notes", "c")
    assert refused.value.lines == (1, 3)


def test_unknown_heading_suggests_the_closest():
    with pytest.raises(NoMatch) as refused:
        delete_section(SKILL, "Releas")
    assert refused.value.near_miss.text == "Release"


RULES = """# Behaviour rules
<!-- Hand-written; keep the order. -->

* Be brief.
* Never share a user's address.
  Not even with other users.

Plain line rule.

## Tone
1. Be kind.
2. Avoid jargon.
"""


def test_rules_are_parsed_with_their_markers_and_continuations():
    rules = parse_rules(RULES)
    assert [(r.marker, r.text) for r in rules] == [
        ("* ", "Be brief."),
        ("* ", "Never share a user's address.\nNot even with other users."),
        ("", "Plain line rule."),
        ("1. ", "Be kind."),
        ("2. ", "Avoid jargon."),
    ]


def test_add_rule_in_a_section_uses_its_numbering_and_leaves_the_rest():
    result = add_rule(RULES, "Answer in the user's language.", section="Tone").text
    assert result == RULES.replace(
        "2. Avoid jargon.\n", "2. Avoid jargon.\n3. Answer in the user's language.\n"
    )


def test_remove_rule_removes_its_continuation_lines_only():
    result = remove_rule(RULES, "Never share a user's address. Not even with other users.")
    assert result == RULES.replace(
        "* Never share a user's address.\n  Not even with other users.\n", ""
    )


def test_replace_rule_keeps_its_bullet():
    assert replace_rule(RULES, "Be brief.", "Be concise.") == RULES.replace(
        "* Be brief.", "* Be concise."
    )


def test_existing_rule_is_no_change_and_unknown_rule_no_match():
    with pytest.raises(NoChange):
        add_rule(RULES, "Be brief.")
    with pytest.raises(NoMatch) as refused:
        remove_rule(RULES, "Be brif.")
    assert refused.value.near_miss.text == "Be brief."


def test_rules_in_comments_and_code_are_not_rules():
    document = "<!--\n- hidden\n-->\n```\n- code\n```\n- real\n"
    assert [r.text for r in parse_rules(document)] == ["real"]


@pytest.mark.parametrize(
    "operation",
    [
        lambda limit: append(SKILL, "More steps.\n" * 5, max_length=limit),
        lambda limit: append(SKILL, "Rotate them yearly.", heading="Secrets", max_length=limit),
        lambda limit: (
            replace_section(SKILL, "Release", "Tag, push, announce.", max_length=limit).text
        ),
        lambda limit: add_rule(RULES, "Answer in\nthe user's language.", max_length=limit).text,
        lambda limit: replace_rule(RULES, "Be brief.", "Be brief\nand kind.", max_length=limit),
    ],
)
def test_section_and_rule_ops_check_the_length_they_build(operation):
    built = operation(None)
    assert operation(len(built)) == built
    with pytest.raises(TooLong) as refused:
        operation(len(built) - 1)
    assert (refused.value.limit, refused.value.length) == (len(built) - 1, len(built))


def test_a_wide_bullet_repeated_on_every_line_of_a_rule_is_refused_unbuilt():
    # The document's bullet may be followed by any run of spaces; a new rule's every line
    # break repeats that indent, so 2,000 line breaks under a 100,000-space bullet would
    # build 200 million characters.
    document = "-" + " " * 100_000 + "Be brief.\n"
    with pytest.raises(TooLong) as refused:
        add_rule(document, "x\n" * 2000 + "x", max_length=500_000)
    assert refused.value.length > 200_000_000
    with pytest.raises(TooLong):
        replace_rule(document, "Be brief.", "x\n" * 2000 + "x", max_length=500_000)


rule_words = st.text(alphabet="abcdefgh ", min_size=1, max_size=20).map(str.strip).filter(bool)
blocks = st.lists(
    st.one_of(
        rule_words.map(lambda w: f"- {w}"),
        rule_words.map(lambda w: f"* {w}"),
        rule_words.map(lambda w: f"# {w}"),
        rule_words.map(lambda w: f"<!-- {w} -->"),
        st.just(""),
    ),
    max_size=12,
)


@given(blocks, st.sampled_from(["\n", "\r\n"]), rule_words)
def test_add_then_remove_a_rule_restores_the_document_byte_for_byte(lines, ending, rule):
    document = ending.join(lines) + ending
    existing = parse_rules(document)
    assume(
        existing
        and all(
            " ".join(r.text.split()).casefold() != " ".join(rule.split()).casefold()
            for r in existing
        )
    )
    added = add_rule(document, rule).text
    assert [r.text for r in parse_rules(added)] == [r.text for r in existing] + [rule]
    assert remove_rule(added, rule) == document


@given(blocks, st.sampled_from(["\n", "\r\n"]))
def test_removing_one_rule_leaves_every_other_line_alone(lines, ending):
    document = ending.join(lines) + ending
    rules = parse_rules(document)
    texts = [r.text for r in rules]
    assume(rules and texts.count(rules[0].text) == 1)
    removed = remove_rule(document, rules[0].text)
    assert removed == document[: rules[0].start] + document[rules[0].end :]
