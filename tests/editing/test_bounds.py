"""Every edit op of the engine, fed random texts and edits up to the size limits, stays bounded.

The bound is counted, not timed: the memory the op allocates (tracemalloc's peak) stays within
a small multiple of the limit plus what was sent, however large the unbounded result would
be, and a refusal names the exact length the result would have had.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stores.editing import (
    PhraseEdit,
    TextEditError,
    TooLong,
    add_rule,
    append,
    apply_edit,
    apply_edits,
    delete_section,
    insert_after_section,
    insert_before_section,
    insert_lines,
    line_count,
    outline,
    parse_rules,
    prepend,
    remove_rule,
    replace_rule,
    replace_section,
    undo_change,
)

# The limits of the surfaces (memory and working memory; skills and rules).
LIMITS = st.sampled_from([100_000, 500_000])
# Bytes the engine may allocate per character of limit and input: copies of the text, the
# list of pieces it joins, the offsets of CRLFs. A character takes up to 4 bytes.
BYTES_PER_CHARACTER = 64
FIXED_BYTES = 256 * 1024

units = st.text(alphabet="ab é-*#1. \t\n", min_size=1, max_size=12)


@st.composite
def repeated(draw: st.DrawFn, most: int) -> str:
    """A text of up to `most` characters: a short unit repeated, so sizes reach the limits."""
    unit = draw(units)
    return (unit * draw(st.integers(0, most // len(unit))))[:most]


@st.composite
def documents(draw: st.DrawFn, limit: int) -> str:
    """A markdown text within `limit`: headings, bullets (some very wide) and plain runs."""
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    blocks = draw(
        st.lists(
            st.one_of(
                st.builds(lambda word: f"## {word}", st.sampled_from(["Steps", "Notes", "Tone"])),
                st.builds(
                    lambda gap, word: "-" + " " * gap + word,
                    st.integers(1, limit // 4),
                    st.sampled_from(["Be brief.", "Be kind.", "Cite sources."]),
                ),
                repeated(limit // 2),
            ),
            min_size=1,
            max_size=6,
        )
    )
    return ending.join(block.replace("\n", ending) for block in blocks)[:limit]


@dataclass(frozen=True)
class Call:
    name: str
    run: Callable[[int | None], str]
    sent: int  # characters the caller sent besides the current text


@st.composite
def calls(draw: st.DrawFn, text: str, limit: int) -> Call:
    """One engine op with arguments drawn to hit the text: quoted phrases, real headings, rules."""
    folded = text.replace("\r\n", "\n")
    start = draw(st.integers(0, max(0, len(folded) - 1)))
    phrase = folded[start : start + draw(st.integers(1, 40))] or "x"
    new = draw(st.one_of(st.text(max_size=20), repeated(limit)))
    headings = [section.title for section in outline(text)] or ["Steps"]
    heading = draw(st.sampled_from(headings))
    insert_at = draw(st.integers(0, line_count(text)))
    rules = [rule.text for rule in parse_rules(text)] or ["Be brief."]
    rule = draw(st.sampled_from(rules))
    new_rule = draw(st.one_of(st.text(min_size=1, max_size=20), repeated(limit)))
    edits = draw(
        st.lists(
            st.builds(
                PhraseEdit, st.sampled_from([phrase, phrase[:1]]), st.just(new), st.booleans()
            ),
            min_size=1,
            max_size=10,
        )
    )
    choices = [
        Call(
            "apply_edit",
            lambda most: apply_edit(text, phrase, new, replace_all=True, max_length=most).text,
            len(phrase) + len(new),
        ),
        Call(
            "apply_edits",
            lambda most: apply_edits(text, edits, max_length=most).text,
            sum(len(e.old_string) + len(e.new_string) for e in edits),
        ),
        Call("append", lambda most: append(text, new, max_length=most), len(new)),
        Call(
            "append under a heading",
            lambda most: append(text, new, heading, max_length=most),
            len(new),
        ),
        Call(
            "replace_section",
            lambda most: replace_section(text, heading, new, max_length=most).text,
            len(new),
        ),
        Call(
            "replace_section keeping subsections",
            lambda most: (
                replace_section(text, heading, new, keep_subsections=True, max_length=most).text
            ),
            len(new),
        ),
        Call(
            "insert_before_section",
            lambda most: insert_before_section(text, heading, new, max_length=most),
            len(new),
        ),
        Call(
            "insert_after_section",
            lambda most: insert_after_section(text, heading, new, max_length=most),
            len(new),
        ),
        Call(
            "insert_lines",
            lambda most: insert_lines(text, insert_at, new, max_length=most),
            len(new),
        ),
        Call("prepend", lambda most: prepend(text, new, max_length=most), len(new)),
        # Undoing a change that wrote `text` over `new`, in today's text `text`: back to `new`.
        Call("undo_change", lambda most: undo_change(new, text, text, max_length=most), len(new)),
        Call("delete_section", lambda most: delete_section(text, heading), 0),
        Call(
            "add_rule",
            lambda most: add_rule(text, new_rule, max_length=most).text,
            len(new_rule),
        ),
        Call("remove_rule", lambda most: remove_rule(text, rule), len(rule)),
        Call(
            "replace_rule",
            lambda most: replace_rule(text, rule, new_rule, max_length=most),
            len(rule) + len(new_rule),
        ),
    ]
    return draw(st.sampled_from(choices))


def measured(run: Callable[[], str]) -> tuple[str | TextEditError, int]:
    """The op's result (or refusal) and the peak of memory it allocated, in bytes."""
    tracemalloc.start()
    try:
        outcome: str | TextEditError = run()
    except TextEditError as refused:
        outcome = refused
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return outcome, peak


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_no_op_allocates_more_than_a_multiple_of_the_limit_and_its_input(data):
    limit = data.draw(LIMITS)
    text = data.draw(documents(limit))
    call = data.draw(calls(text, limit))
    outcome, peak = measured(lambda: call.run(limit))
    budget = BYTES_PER_CHARACTER * (limit + len(text) + call.sent) + FIXED_BYTES
    assert peak <= budget, (call.name, peak, budget)
    if isinstance(outcome, TooLong):
        assert outcome.limit == limit and outcome.length > limit
    elif isinstance(outcome, str):
        assert len(outcome) <= limit, call.name


small_units = st.text(alphabet="ab é-#\n", min_size=1, max_size=6)


@st.composite
def small_documents(draw: st.DrawFn) -> str:
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    lines = draw(
        st.lists(
            st.one_of(
                st.sampled_from(["## Steps", "## Notes", "-   Be brief.", "1. Be kind."]),
                st.builds(lambda unit, times: unit * times, small_units, st.integers(0, 8)),
            ),
            min_size=1,
            max_size=8,
        )
    )
    return ending.join(line.replace("\n", ending) for line in lines)


@given(st.data())
def test_a_refusal_names_the_exact_length_and_nothing_within_the_limit_is_refused(data):
    text = data.draw(small_documents())
    call = data.draw(calls(text, 200))
    try:
        unbounded = call.run(None)
    except TextEditError:
        return
    limit = data.draw(st.integers(0, 2 * len(unbounded) + 1))
    try:
        bounded = call.run(limit)
    except TooLong as refused:
        if call.name == "apply_edits":
            # A batch is checked step by step (apply_edits): the refusal names the step that
            # crosses the limit, which a later edit of the batch may have shrunk again.
            assert refused.length > limit
        else:
            assert len(unbounded) > limit
            assert refused.length == len(unbounded), call.name
    else:
        assert bounded == unbounded
        # delete and remove only shrink what is stored; the stored text's own check applies.
        if call.name not in ("delete_section", "remove_rule"):
            assert len(bounded) <= limit
