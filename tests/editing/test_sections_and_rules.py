from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from stores.editing import (
    Ambiguous,
    InvalidEdit,
    NoChange,
    NoMatch,
    TooLong,
    add_rule,
    append,
    delete_section,
    insert_after_section,
    insert_before_section,
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


# --- insert before / after a section, replace keeping subsections ----


def test_replace_section_can_keep_its_subsections():
    result = replace_section(SKILL, "Prepare", "Check the CI too.", keep_subsections=True).text
    assert result == SKILL.replace("Check the branch.\n", "Check the CI too.\n")
    assert "### Secrets\nLoad them from the vault." in result


def test_keeping_subsections_of_a_section_without_any_replaces_its_whole_body():
    assert replace_section(SKILL, "Release", "Tag it.", keep_subsections=True) == replace_section(
        SKILL, "Release", "Tag it."
    )


def test_a_section_whose_text_starts_with_a_subheading_gains_its_own_text_before_it():
    document = "## Steps\n### First\nGo.\n"
    result = replace_section(document, "Steps", "Overview.", keep_subsections=True).text
    assert result == "## Steps\nOverview.\n### First\nGo.\n"


def test_insert_before_a_section_lands_just_above_its_heading():
    result = insert_before_section(SKILL, "Release", "## Review\nAsk a colleague.\n\n")
    assert result == SKILL.replace("## Release", "## Review\nAsk a colleague.\n\n## Release")


def test_insert_after_a_section_lands_just_below_its_heading_as_a_block_of_its_own():
    result = insert_after_section(SKILL, "Prepare", "Read the runbook.")
    assert result == SKILL.replace("## Prepare\n", "## Prepare\nRead the runbook.\n\n")
    assert insert_after_section("## Section\nExisting paragraph text", "Section", "Inserted") == (
        "## Section\nInserted\n\nExisting paragraph text"
    )


def test_a_section_insert_adds_no_blank_line_where_one_or_a_heading_sets_it_apart():
    assert insert_after_section("## A\n## B\n", "A", "x") == "## A\nx\n## B\n"
    assert insert_after_section("## A\n\nText\n", "A", "x") == "## A\nx\n\nText\n"
    assert insert_before_section("## A\n\n## B\n", "B", "x") == "## A\n\nx\n## B\n"
    assert insert_before_section("Text\n## B\n", "B", "x") == "Text\n\nx\n## B\n"


def test_section_inserts_keep_crlf_and_a_last_heading_without_line_ending():
    document = "# Title\r\nBody\r\n## End"
    assert insert_before_section(document, "End", "One\ntwo") == (
        "# Title\r\nBody\r\n\r\nOne\r\ntwo\r\n## End"
    )
    assert insert_after_section(document, "End", "Tail.\n") == "# Title\r\nBody\r\n## End\r\nTail."


def test_section_inserts_refuse_empty_content_and_unknown_headings():
    with pytest.raises(InvalidEdit):
        insert_before_section(SKILL, "Release", " \n")
    with pytest.raises(NoMatch) as refused:
        insert_after_section(SKILL, "Relase", "x")
    assert refused.value.near_miss.text == "Release"
    with pytest.raises(Ambiguous):
        insert_after_section("## Notes\na\n## Notes\nb\n", "Notes", "c")


section_lines = st.lists(
    st.one_of(
        st.sampled_from(["## Steps", "## Notes", "### Detail", "# Top"]),
        st.text(alphabet="ab ", max_size=6),
    ),
    max_size=10,
)


@given(section_lines, st.sampled_from(["\n", "\r\n"]))
def test_each_section_ends_where_the_next_heading_of_its_level_or_higher_starts(lines, ending):
    document = ending.join(lines) + ending
    sections = outline(document)
    for index, section in enumerate(sections):
        closing = [later.start for later in sections[index + 1 :] if later.level <= section.level]
        assert section.end == (closing[0] if closing else len(document))


@given(
    section_lines,
    st.sampled_from(["\n", "\r\n"]),
    st.sampled_from(["Steps", "Notes"]),
    st.integers(0, 10),
)
def test_a_section_insert_adds_its_lines_and_nothing_else(lines, ending, heading, place):
    # The heading stands once, at `place` among the other lines: drawn so, not filtered for,
    # which left too few examples to the health check in some runs.
    lines = [line for line in lines if line != f"## {heading}"]
    lines.insert(place, f"## {heading}")
    document = ending.join(lines) + ending
    [section] = [s for s in outline(document) if s.title == heading]
    added = "new line" + ending
    for insert, at in [
        (insert_before_section, section.start),
        (insert_after_section, section.body_start),
    ]:
        result = insert(document, heading, "new line")
        head, tail = document[:at], document[at:]
        assert result.startswith(head) and result.endswith(tail)
        middle = result[len(head) : len(result) - len(tail)]
        # The line itself, and at most a blank line either side to set it apart.
        assert middle in {added, ending + added, added + ending, ending + added + ending}
        lines = result.split(ending)
        index = lines.index("new line", head.count(ending))
        for neighbour in lines[index - 1 : index] + lines[index + 1 : index + 2]:
            assert neighbour.strip() == "" or neighbour.lstrip().startswith("#")


@given(section_lines, st.sampled_from(["\n", "\r\n"]))
def test_keeping_subsections_leaves_every_subsection_byte_for_byte(lines, ending):
    document = ending.join(lines) + ending
    sections = outline(document)
    assume(sections and [s.title for s in sections].count(sections[0].title) == 1)
    first = sections[0]
    subsections = document[
        next((s.start for s in sections[1:] if s.start < first.end), first.end) : first.end
    ]
    try:
        result = replace_section(document, first.title, "fresh", keep_subsections=True).text
    except NoChange:
        return
    assert subsections in result
    assert result.startswith(document[: first.body_start] + "fresh")
    assert result.endswith(subsections + document[first.end :])


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
        lambda limit: (
            replace_section(
                SKILL, "Prepare", "Check it all.", keep_subsections=True, max_length=limit
            ).text
        ),
        lambda limit: insert_before_section(SKILL, "Release", "Wait.\n", max_length=limit),
        lambda limit: insert_after_section(SKILL, "Secrets", "Never log.", max_length=limit),
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


# --- deleting a section leaves no blank lines behind -----------------

_body_line = st.text(alphabet="abc xyz-.", min_size=1, max_size=12).filter(
    lambda line: line.strip() and not line.lstrip().startswith(("-", "#"))
)


@given(
    intro=st.lists(_body_line, max_size=3),
    bodies=st.lists(st.lists(_body_line, max_size=3), min_size=1, max_size=5),
    ending=st.sampled_from(["\n", "\r\n"]),
    data=st.data(),
)
def test_deleting_a_section_reads_as_if_it_was_never_written(intro, bodies, ending, data):
    def document(sections: list[tuple[int, list[str]]]) -> str:
        blocks = ["# Title" + "".join(ending + ending + line for line in intro)]
        for number, body in sections:
            block = f"## Part {number}"
            if body:
                block += ending + ending + ending.join(body)
            blocks.append(block)
        return (ending + ending).join(blocks) + ending

    sections = list(enumerate(bodies))
    gone = data.draw(st.integers(0, len(sections) - 1))
    result = delete_section(document(sections), f"Part {gone}")
    assert result == document([part for part in sections if part[0] != gone])


def test_deleting_the_last_section_takes_the_blank_line_above_it():
    document = "# Deploy\n\nIntro.\n\n## Notes\n\nTemporary.\n"
    assert delete_section(document, "Notes") == "# Deploy\n\nIntro.\n"


def test_deleting_a_section_keeps_the_spaces_ending_the_line_above():
    document = "Intro.  \r\n\r\n## Notes\r\nTemporary.\r\n\r\n"
    assert delete_section(document, "Notes") == "Intro.  \r\n"
