"""The duplicate / conflict rule on pairs of texts, one case per clause of the rule."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from stores.editing.likeness import (
    MAX_COMPARED_CHARS,
    STOPWORDS,
    UNSURE_CONFLICT,
    VALUE_WORDS,
    Kind,
    Likeness,
    Thresholds,
    ValueKind,
    by_meaning,
    compare,
    cut,
    differing_values,
    initials,
    kept_apart,
    may_be_alike,
    read,
    swapped,
)
from stores.editing.wording import ABBREVIATIONS
from tests.work import python_lines

PAIRS = Path(__file__).parent.parent / "fixtures" / "suggestions" / "pairs.json"

DUPLICATES = [
    ("The user lives in Berlin.", "the user lives in BERLIN"),
    ("On Fridays the user works from home.", "The user works from home on Fridays."),
    ("The user resides in Oslo.", "The user lives in Oslo."),
    ("The user ran a marathon.", "The user runs marathons."),
    ("The user has a cat.", "The user has a cat named Tom."),
    ("I'd rather get an email than a phone call.", "Prefers to get emails, not phone calls."),
    ("Takes vitamin D every day.", "User takes a daily vitamin D supplement."),
    ("Globex's ARR is $120k.", "Globex's ARR is 120,000 USD."),
]
CONFLICTS = [
    ("The user lives in Paris.", "The user lives in Lyon.", "'Paris' → 'Lyon'"),
    ("Standup is at 9:30.", "Standup is at 10:15.", "'09:30' → '10:15'"),
    ("The user is 30 years old.", "The user is 31 years old.", "'30' → '31'"),
    ("The user eats fish.", "The user doesn't eat fish.", "negates"),
    ("The user likes jazz.", "The user dislikes jazz.", "negates"),
    ("The user works as a pilot.", "The user works as a chef.", "'pilot' → 'chef'"),
]
FINE = [
    ("The user's aunt lives in Dublin.", "The user's uncle lives in Dublin."),
    ("Alice lives in Madrid.", "Bob lives in Madrid."),
    ("The user likes tea.", "The user likes coffee."),
    ("Project Atlas uses Django.", "Project Hermes uses Django."),
    ("The user drinks tea in the morning.", "The user drinks wine in the evening."),
    ("The user's car is red.", "The user's car is a Volvo."),
    ("The user works at a hospital.", "The user works as a nurse."),
    ("The user lives in Berlin.", "The user's grandmother lives in Berlin."),
    ("The user reads before bed.", "The user goes to bed at 23:00."),
]


@pytest.mark.parametrize(("first", "second"), DUPLICATES)
def test_duplicates(first, second):
    found = compare(first, second)
    assert found is not None and found.kind is Kind.DUPLICATE
    assert compare(second, first) is not None


@pytest.mark.parametrize(("first", "second", "said"), CONFLICTS)
def test_conflicts_say_what_differs(first, second, said):
    found = compare(first, second)
    assert found is not None and found.kind is Kind.CONFLICT
    assert said in found.reason


@pytest.mark.parametrize(("first", "second"), FINE)
def test_alike_but_compatible(first, second):
    assert compare(first, second) is None
    assert compare(second, first) is None


def test_the_same_text_is_a_duplicate_of_score_one():
    found = compare("Tea, no sugar.", "Tea, no sugar.")
    assert found is not None and found.score == 1.0 and found.reason == "the same text"


def test_a_paraphrase_scores_its_similarity():
    found = compare("The user resides in Oslo.", "The user lives in Oslo.", 0.912)
    assert found is not None and found.score == 0.91 and "0.91 alike" in found.reason


def test_only_the_start_of_a_long_text_is_read():
    tail = " filler" * MAX_COMPARED_CHARS
    assert compare("The user lives in Paris." + tail, "The user lives in Paris." + tail + " x")


def test_the_cheap_test_lets_through_every_pair_the_rule_finds():
    labelled = json.loads(PAIRS.read_text("utf-8"))["pairs"]
    texts = {text for pair in labelled for text in (pair["first"], pair["second"])}
    texts |= {text for case in (*DUPLICATES, *CONFLICTS, *FINE) for text in case[:2]}
    found = 0
    for first, second in itertools.permutations(sorted(texts), 2):
        if compare(first, second) is not None:
            found += 1
            assert may_be_alike(read(first), read(second)), (first, second)
    assert found >= len(labelled)


def test_the_cheap_test_turns_away_texts_with_nothing_in_common():
    first, second = "The user lives in Paris.", "Quarterly invoices are due on Mondays."
    assert not may_be_alike(read(first), read(second))
    assert compare(first, second) is None
    assert not may_be_alike(read("The the."), read("A a."))
    # They share a word, and each says five the other does not: more than one place differs.
    first, second = (
        "The user keeps bees, goats, hens and ducks.",
        "The user rides a red bike to work daily.",
    )
    assert not may_be_alike(read(first), read(second))
    assert compare(first, second) is None


def test_words_shared_only_through_an_opposite_still_reach_the_rule():
    # The rule reads "dislikes" as a negated "likes" and "disables" as a negated "enables":
    # these two share no word as written, and the rule still finds them alike.
    first, second = "dislike; disable.", "like; enable."
    assert read(first).canon.isdisjoint(read(second).canon)
    assert compare(first, second) is not None
    assert may_be_alike(read(first), read(second))


# --- read in one wording, and with the embeddings' meaning --------------------------------

# Thresholds as the embedded model's (settings SUGGEST_SIMILARITY), and a similarity past them.
TRUSTED = Thresholds(negation=0.8, value=0.85, reworded=0.93, same=0.88)
ALIKE = 0.95


def both_ways(first: str, second: str, similarity: float | None) -> list[Likeness | None]:
    """The verdict on the pair, and on the pair the other way round."""
    return [
        compare(one, other, similarity, thresholds=TRUSTED)
        for one, other in ((first, second), (second, first))
    ]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("I live in NYC.", "The user lives in New York City."),  # person, abbreviation
        ("The user is forty-five.", "The user is 45."),  # a number as words
        ("The user is 1.88 m tall.", "The user is 188 cm tall."),  # units
        ("Tom wrote the report.", "The report was written by Tom."),  # voice
        ("Sarah is the user's wife.", "The user is married to Sarah."),  # converse
        ("Hannah is Tom's manager.", "Tom reports to Hannah."),  # converse
        ("The user cannot have gluten.", "The user must avoid gluten."),  # a restriction
        ("The user is allergic to peanuts.", "The user does not eat peanuts: an allergy."),
        ("The user prefers brief answers.", "The user prefers concise answers."),  # one end
        ("Running a 10k in May.", "Running a 10 km race in May."),  # thousands
        # An aversion reads as a restriction; "instead of" as "not".
        ("I hate being called 'buddy'.", "Don't address the user as 'buddy': they dislike it."),
        ("The user dislikes cilantro.", "The user avoids cilantro."),
        ("Ana refuses to eat meat.", "Ana does not eat meat."),  # a refusal restricts
        ("Phones are forbidden in class.", "No phones in class."),  # so does a rule
        ("Meetings on Sundays are off-limits.", "No meetings on Sundays."),
        ("Floats are banned for money.", "Never use floats for money."),
        # An hour without its half of the day is the other's clock where it may be.
        ("A table at Dishoom for Saturday at 8.", "A Dishoom reservation on Saturday, 8pm."),
        ("Standup at 9:30.", "Standup at 9:30am."),
        ("Main app is plain JS, no TypeScript.", "The main app uses JS instead of TypeScript."),
        # A relative by a familiar name; a season last year told two ways.
        ("My gran lives with me.", "The user's grandmother lives with the user."),
        ("Ivo gave up judo last summer.", "Ivo stopped judo in the summer of last year."),
        # The same names, one opening its sentence where it is not read as a name.
        ("Marco is Priya's travel agent.", "Priya books her trips through her agent, Marco."),
        # A kind that heads those the text names is no one else.
        ("I've got two cats, Miso and Pepper.", "pets: 2 cats (Pepper, Miso)"),
        # One says all the other does, and more than as much again in other words.
        ("No calls on Fridays.", "The user doesn't take phone or video calls on Fridays."),
    ],
)
def test_duplicates_in_other_wordings(first, second):
    found = compare(first, second, ALIKE, thresholds=TRUSTED)
    assert found is not None and found.kind is Kind.DUPLICATE


@pytest.mark.parametrize(
    ("first", "second", "evidence"),
    [
        ("The user never eats breakfast.", "The user has porridge every morning.", "not to hold"),
        ("The user avoids alcohol.", "The user has wine with dinner.", "not to hold"),
        (
            "The user's Spotify costs $15.99 a month.",
            "The user pays $22.99 monthly for Spotify.",
            "'15.99' → '22.99'",
        ),
        ("Tom lives in Toronto.", "Tom's home is in Lisbon.", "'Toronto' → 'Lisbon'"),
        ("Tom's email is tom@a.org.", "Tom can be reached at tom@b.org.", "email address"),
        # A name ending on a number, a version given as a note's value.
        ("Account region: us-east-1", "The account's region is eu-central-1.", "'us-east-1'"),
        ("The project runs on Python 3.11.", "python: 3.12", "'3.11' → '3.12'"),
        ("The user goes to the gym at 6.", "The user goes to the gym at 7pm.", "'6' → '19:00'"),
    ],
)
def test_conflicts_in_other_wordings_name_their_evidence(first, second, evidence):
    found = compare(first, second, ALIKE, thresholds=TRUSTED)
    assert found is not None and found.kind is Kind.CONFLICT
    assert evidence in found.reason


def test_a_verdict_meaning_decided_is_unsure_and_one_the_words_decided_is_sure():
    meant = compare("Tom never drives.", "Tom takes his car to work.", ALIKE, thresholds=TRUSTED)
    worded = compare("Tom lives in Paris.", "Tom lives in Lyon.", ALIKE, thresholds=TRUSTED)
    assert meant is not None and not meant.sure  # a judge, when set, is asked about it
    assert worded is not None and worded.sure


def test_meaning_counts_only_past_its_threshold():
    pair = ("The user never eats breakfast.", "The user has porridge every morning.")
    assert compare(*pair, 0.79, thresholds=TRUSTED) is None
    assert compare(*pair, None, thresholds=TRUSTED) is None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # Time-qualified: both can be true.
        ("The user used to live in Oslo.", "The user lives in Rome now."),
        ("Before 2020 the user worked at Acme.", "The user has worked at Initech since 2021."),
        # Different subjects, told by their opening words.
        ("Fay Hale has a dog called Rex.", "Fay Cole has a dog called Juno."),
        ("Project Atlas is written in Go.", "Project Hermes is written in Rust."),
        # Who and when changed together: another meeting, not a moved one.
        ("The user meets Anna on Monday.", "The user meets Ben on Friday."),
        # A restriction gathers: allergic to one thing and to another.
        ("The user is allergic to peanuts.", "The user is allergic to cats."),
        # A second fact changed beside the value.
        ("The user drinks tea in the morning.", "The user drinks wine in the evening."),
        # A name both give, once opening a sentence: who manages whom, not a name changed.
        ("Dana is Sam's manager.", "Sam manages Priya."),
        # A childhood is another time.
        ("I had a rabbit called Flopsy growing up.", "The user has no pets now."),
        # An age, a time ended ("until last ..."), and a change after it ("before it was
        # ...") set another time too.
        ("I'm 1.80 m tall now.", "The user was 1.52 m tall at age 11."),
        ("Kai swims on Tuesdays.", "Kai swam on Thursdays until last spring."),
        ("The user's dose is 20 mg.", "The user took 40 mg before it was lowered."),
        # Two years' figures: a year changed beside the value.
        ("Lumen's 2026 cloud budget: $80k", "Lumen spent $65k on cloud hosting in 2025."),
        ("Team Kiwi wants 40 seats for the 2027 launch.", "Team Kiwi began with 12 seats in 2025."),
        # Numbers of different things: people of two kinds, two measures, a measure and a bus.
        ("The user has two daughters.", "The user has four grandchildren."),
        ("The user is 170 cm tall.", "The user weighs eleven stone."),
        ("The user's commute takes 40 min.", "The user takes the 73 bus to work."),
    ],
)
def test_fine_together_even_when_alike(first, second):
    assert compare(first, second, ALIKE, thresholds=TRUSTED) is None
    assert compare(second, first, ALIKE, thresholds=TRUSTED) is None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The user prefers concise replies.", "The user prefers detailed replies."),
        ("The user's repository is public.", "The user's repository is private."),
        ("The user prefers an aisle seat.", "The user prefers a window seat."),
        ("The user indents code with tabs.", "The user indents code with spaces."),
        ("The user's editor uses the dark theme.", "The user's editor uses light mode."),
        ("I'm left-handed.", "The user is right-handed."),
        ("The user is an introvert.", "The user is an extrovert."),
        ("The user wants temperatures in Celsius.", "The user wants temperatures in °F."),
        ("The user's garden faces south.", "The user's garden is north-facing."),
        ("The staging database is shared with dev.", "The staging database is isolated from dev."),
        ("The user books a single room.", "The user books a double room."),
    ],
)
def test_two_ends_of_one_scale_conflict(first, second):
    for found in both_ways(first, second, ALIKE):
        assert found is not None and found.kind is Kind.CONFLICT
        assert "two ends of one scale" in found.reason


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # A verb that gathers: both can be liked.
        ("The user likes light beer.", "The user likes dark beer."),
        # One text says both ends: a contrast, not a value.
        ("The user runs short on Tuesdays and long on Sundays.", "User prefers long runs."),
        # The ends of one scale said of two things.
        ("The user's kitchen is dark.", "The user's office is light."),
        # Time-qualified.
        ("The user used to prefer the light theme.", "The user prefers dark mode now."),
    ],
)
def test_ends_of_a_scale_in_pairs_fine_together(first, second):
    assert compare(first, second, ALIKE, thresholds=TRUSTED) is None
    assert compare(second, first, ALIKE, thresholds=TRUSTED) is None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("editor: vim", "The user's editor is Neovim."),
        ("browser: firefox", "The user's browser is Chrome."),
    ],
)
def test_a_name_written_lower_case_as_an_attribute_value_is_still_a_value(first, second):
    found = compare(first, second, ALIKE, thresholds=TRUSTED)
    assert found is not None and found.kind is Kind.CONFLICT
    # Elsewhere a plain word is not taken for a name: working at home is no employer.
    assert compare("The user works at Google.", "The user works at home.", ALIKE) is None


@pytest.mark.parametrize("name", ["iPhone", "1Password", "macOS", "eBay"])
def test_a_capital_inside_a_word_makes_it_a_name(name):
    assert differing_values(
        read(f"The user keeps passwords in {name}."), read("The user keeps passwords in KeePass.")
    )


def test_an_allergy_and_what_it_keeps_away_are_never_a_conflict():
    for similarity in (None, 0.5, 0.85, 0.99):
        found = compare(
            "The user is allergic to peanuts.",
            "The user does not eat peanuts because of an allergy.",
            similarity,
            thresholds=TRUSTED,
        )
        assert found is None or found.kind is Kind.DUPLICATE


@given(st.text(max_size=200), st.text(max_size=200), st.floats(0, 1))
def test_any_pair_gets_a_verdict_or_none(first, second, similarity):
    found = compare(first, second, similarity, thresholds=TRUSTED)
    assert found is None or (found.kind in Kind and 0 <= found.score <= 1 and found.reason)


@given(st.text(alphabet=st.characters(categories=["L", "N", "Zs"]), max_size=120))
def test_a_text_is_a_duplicate_of_itself(text):
    assert read(text).words or compare(text, text) is not None or not text.strip()
    found = compare(text, text)
    assert found is not None and found.kind is Kind.DUPLICATE


# --- the same meaning in other words, and what tells two alike texts apart -----------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("User is learning Japanese on Duolingo.", "The user studies Japanese with Duolingo."),
        (
            "User is paid monthly, on the last working day.",
            "Salary lands at the end of each month (last business day).",
        ),
        ("Biscuit gets walked twice a day.", "The user walks Biscuit two times daily."),
        ("User's laptop is a 14-inch MBP.", "The user works on a 14-inch MacBook Pro."),
        # A relative named on both sides is one subject.
        (
            "The user's daughter Mia is allergic to eggs.",
            "Mia is allergic to eggs, so we carry antihistamines.",
        ),
    ],
)
def test_texts_reworded_throughout_are_duplicates_when_their_meaning_is_one(first, second):
    found = compare(first, second, 0.9, thresholds=TRUSTED)
    assert found is not None and found.kind is Kind.DUPLICATE and not found.sure
    assert "other words (0.90 alike)" in found.reason
    assert compare(first, second, 0.87, thresholds=TRUSTED) is None  # below SAME: nothing


def test_what_one_says_is_so_now_is_never_its_duplicate():
    found = compare(
        "The user's daughter Ada has ballet on Tuesday evenings.",
        "Ada's ballet class only meets on Fridays now, five till six, so Tuesdays are free.",
        0.93,
        thresholds=TRUSTED,
    )
    assert found is None or found.kind is Kind.CONFLICT


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            "The user is saving for a trip to Japan.",
            "The user is putting money aside for a trip to Japan.",
        ),
        (
            "The user is training for the Berlin half marathon.",
            "The user is getting ready to run the Berlin half marathon.",
        ),
    ],
)
def test_a_phrase_reworded_inside_at_another_length_is_a_duplicate_once_meant_alike(first, second):
    found = compare(first, second, 0.95, thresholds=TRUSTED)
    assert found is not None and found.kind is Kind.DUPLICATE and not found.sure
    # Below the rewording's threshold one part swapped is another thing said.
    assert compare(first, second, 0.9, thresholds=TRUSTED) is None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # One sentence, one part swapped: its subject, its last words, or a phrase.
        ("The user's laptop runs Linux.", "The user's server runs Linux."),
        ("The kitchen light is smart.", "The bedroom light is smart."),
        ("User likes jazz.", "User likes classical music."),
        (
            "Remind the user to water the plants on Sunday.",
            "Remind the user to call the bank on Sunday.",
        ),
        # Two people, named as a sentence opens, with different jobs.
        ("Ivo Dorsey works as a designer.", "Emil Dorsey works as a chef."),
        # A number or date on one side only: a specific beside a general.
        ("User speaks at conferences.", "User gave a talk at PyCon 2023."),
        ("The user reads science fiction before bed.", "The user goes to bed at 23:00."),
        # A relative opens one of them.
        ("User has asthma.", "User's daughter has asthma."),
        # Time words on one side only.
        (
            "User went to the office party last year.",
            "User is skipping the office party this year.",
        ),
    ],
)
def test_fine_together_however_alike_their_meaning(first, second):
    assert compare(first, second, 0.97, thresholds=TRUSTED) is None
    assert compare(second, first, 0.97, thresholds=TRUSTED) is None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The passport expires in March 2026.", "The passport expires in March 2031."),
        ("Swims on Monday evenings.", "Swims on Monday mornings."),
    ],
)
def test_a_date_given_differently_in_one_part_differs_whatever_parts_it_shares(first, second):
    assert differing_values(read(first), read(second)) == [ValueKind.DATE]


@pytest.mark.parametrize(
    ("first", "second", "kind"),
    [
        # A year's shape before a unit, or after a word that numbers things, is a number.
        ("Rows 2 km before work.", "Rows 1500 metres before work.", ValueKind.NUMBER),
        ("The VPN listens on port 2019.", "The VPN listens on port 443.", ValueKind.NUMBER),
        # A word after "called" or "named" is a name, however it is written.
        ("Their only dog is called biscuit.", "Their only dog is named Rolo.", ValueKind.NAME),
    ],
)
def test_a_value_is_told_by_its_neighbours_where_its_form_says_another(first, second, kind):
    assert kind in differing_values(read(first), read(second))


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Their suitcase weighs about 23 kg.", "Their suitcase weighs roughly 51 lb."),
        ("The gym is 8 km from home.", "The gym is five miles from home."),
    ],
)
def test_one_measure_in_two_systems_is_one_value_however_rounded(first, second):
    assert all(found.kind is Kind.DUPLICATE for found in both_ways(first, second, ALIKE))


def test_two_measures_a_little_further_apart_than_rounding_differ():
    found = compare("The user is 1.75 m tall.", "The user is 178 cm tall.")
    assert found and found.kind is Kind.CONFLICT


@pytest.mark.parametrize(
    "written",
    [
        "Won't eat mushrooms; can't stand them.",
        "Neither smokes nor drinks.",
        "Not X, not Y.",
        "Not eligible for an HSA - her plan isn't high-deductible.",
        "User doesn't eat meat - not even fish.",
    ],
)
def test_a_negation_in_each_of_two_clauses_still_negates(written):
    assert read(written).negative


@pytest.mark.parametrize(
    "written",
    [
        "Quit smoking in 2019.",
        "Gave up coffee.",
        "Her sertraline was stopped.",
        # A negation typed without its apostrophe, or with a typographer's.
        "cant stand country music",
        "doesnt eat meat",
        "Doesn\u2019t eat meat.",
    ],
)
def test_what_was_stopped_given_up_or_typed_without_an_apostrophe_is_negated(written):
    assert read(written).negative


def test_two_negations_in_one_clause_cancel():
    assert not read("It is not that they do not care.").negative


def test_a_titles_full_stop_ends_no_sentence():
    words = read("Their form tutor is Mr. Adeyemi.").words
    assert [word.value for word in words][-1] is ValueKind.NAME


def test_an_incidents_number_is_no_year():
    assert read("Incident 2087 lasted an hour.").words[1].value is ValueKind.NUMBER


def test_a_year_alone_is_still_a_date():
    assert [word.value for word in read("Born in 2000.").words] == [None, ValueKind.DATE]


@pytest.mark.parametrize("word", ["mornings", "meetings", "buildings", "evenings"])
def test_a_plural_cuts_as_its_singular(word):
    assert cut(word) == cut(word.removesuffix("s"))


def test_an_ordinal_in_digits_reads_as_in_words():
    found = compare("1st of every month: rent reminder", "Rent reminder on the first of each month")
    assert found and found.kind is Kind.DUPLICATE


@pytest.mark.parametrize(
    ("first", "second", "evidence"),
    [
        (
            "User is hosting 8 people for Christmas.",
            "User expects 12 guests for Christmas dinner.",
            "the number differs: '8' → '12'",
        ),
        ("User's best friend is Kemi.", "User's best friend is Laura.", "'Kemi' → 'Laura'"),
        ("User graduated in 2012.", "User finished university in 2015.", "'2012' → '2015'"),
        # A year is a date, told apart from the month beside it; so is "mid-June".
        (
            "The user's passport expires in March 2026.",
            "The user's passport is valid until March 2031.",
            "the date differs: '2026' → '2031'",
        ),
        (
            "The v2 release is due on May 3.",
            "Management moved the v2 release to mid-June.",
            "'May' → 'mid-June'",
        ),
        ("User drives a 2015 Golf diesel.", "User's Golf is a 2019 petrol.", "'2015' → '2019'"),
    ],
)
def test_a_value_given_differently_in_reworded_text_is_a_conflict(first, second, evidence):
    found = compare(first, second, 0.9, thresholds=TRUSTED)
    assert found is not None and found.kind is Kind.CONFLICT
    assert evidence in found.reason


def test_a_name_gathered_by_its_verb_needs_an_attribute_to_hold_one_value():
    # "likes" gathers names; "X's best friend is" names the one value an attribute has.
    assert compare("User likes Kemi.", "User likes Laura.", 0.9) is None
    found = compare("User's best friend is Kemi.", "User's best friend is Laura.", 0.9)
    assert found is not None and found.kind is Kind.CONFLICT


def test_a_year_in_a_sentence_is_no_time_qualifier():
    found = compare(
        "User is doing a part-time MBA, graduating 2026.",
        "The user's MBA is part-time and finishes in 2026.",
        0.97,
        thresholds=TRUSTED,
    )
    assert found is not None and found.kind is Kind.DUPLICATE


_NAME = st.from_regex(r"[A-Z][a-z]{3,8}", fullmatch=True).filter(
    lambda name: (
        name.casefold() not in STOPWORDS
        and name.casefold() not in VALUE_WORDS
        and name.casefold().removesuffix("s") not in VALUE_WORDS
    )
)


@given(st.lists(_NAME, min_size=2, max_size=4))
def test_an_abbreviation_of_a_name_is_never_a_differing_name(names):
    written = " ".join(names)
    short = "".join(name[0] for name in names)
    assume(short not in ABBREVIATIONS)  # "LA" is written out before it is compared
    assert short.casefold() in initials(read(f"The user met {written} today."))
    assert differing_values(read(f"The user met {written}."), read(f"The user met {short}.")) == []


def test_an_abbreviation_spelling_a_word_is_still_an_abbreviation():
    # "SAW" is read as the verb "see", yet spells the capitals of the three names.
    written, short = read("The user met Sven Anke Wolff."), read("The user met SAW.")
    assert differing_values(written, short) == []


@given(st.integers(1000, 10**9))
def test_a_number_with_or_without_its_thousands_commas_is_one_value(number):
    assert differing_values(read(f"It has {number:,} rows."), read(f"It has {number} rows.")) == []


@given(st.text(max_size=200))
def test_a_text_has_no_value_differing_from_itself_and_no_part_swapped(text):
    reading = read(text)
    assert differing_values(reading, reading) == []
    assert not swapped(reading, reading)


@given(st.lists(_NAME, min_size=3, max_size=6, unique_by=str.casefold), st.integers(0, 5), _NAME)
def test_one_word_swapped_at_either_end_is_a_swap(words, at, other):
    if other.casefold() in {word.casefold() for word in words}:
        return
    at = 0 if at % 2 == 0 else len(words) - 1
    changed = [*words[:at], other, *words[at + 1 :]]
    first, second = (
        read(" ".join(w.lower() for w in words)),
        read(" ".join(w.lower() for w in changed)),
    )
    if len(first.words) == len(words) and len(second.words) == len(words):
        assert swapped(first, second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # A support agent's "Customer" and a note's key are the user and their attribute.
        ("Customer has twenty-five seats on their subscription.", "seats: 25"),
        ("Our wedding anniversary is March 3.", "anniv = 3rd of March"),
        ("Lives at 42 Elm Street, Portland.", "Home address: 42 Elm St, Portland"),
        ("The user has type 1 diabetes.", "I'm a type one diabetic."),
    ],
)
def test_a_note_and_the_sentence_it_abbreviates_are_duplicates_by_their_words(first, second):
    for found in both_ways(first, second, None):
        assert found is not None and found.kind is Kind.DUPLICATE


def test_values_alone_differing_in_another_order_conflict_without_the_embeddings():
    found = compare("kids: 2", "The user has three children.", None, thresholds=TRUSTED)
    assert found is not None and found.kind is Kind.CONFLICT
    assert "'2' → '3'" in found.reason
    # Words beside the values on both sides: another fact may have changed with them.
    grown = ("kids: 2 at home", "The user has three grown children.")
    assert compare(*grown, 0.5, thresholds=TRUSTED) is None


@pytest.mark.parametrize(
    ("first", "second", "similarity"),
    [
        # A negated restriction says the thing may be had.
        ("Allergic to shellfish.", "Has no food allergies whatsoever.", 0.86),
        ("I'm allergic to penicillin.", "The user has no known drug allergies.", 0.86),
        ("I'm lactose intolerant.", "The user is not intolerant to anything.", 0.86),
        # None of a kind against one of that kind.
        ("User doesn't have any pets.", "User feeds their parrot every morning.", 0.85),
        ("They don't have any siblings.", "User's brother is coming to stay for Christmas.", 0.85),
        # "now" beside no time word: the same fact, changed.
        ("The user lives in Oslo.", "The user lives in Rome now.", None),
        ("Is on the Free plan.", "Currently pays for the Team plan.", 0.87),
        # A number of one thing, whatever else either text says.
        ("The user has two dogs.", "We've got three dogs, all rescues, so walks take ages.", None),
        ("The user is 180 cm tall.", "I'm 1.65 m tall, so I need a stool for top shelves.", None),
    ],
)
def test_conflicts_told_by_a_restriction_a_kind_or_now(first, second, similarity):
    found = compare(first, second, similarity, thresholds=TRUSTED)
    assert found is not None and found.kind is Kind.CONFLICT


def test_what_the_users_relative_has_is_not_what_the_user_has():
    pair = ("The user's son is allergic to peanuts.", "I'm not allergic to anything.")
    assert compare(*pair, ALIKE, thresholds=TRUSTED) is None


@pytest.mark.parametrize(
    ("first", "second", "differ"),
    [
        ("Backs up daily.", "Backs up weekly.", True),
        ("Water bill paid quarterly.", "water charge: monthly DD", True),
        ("Pays £50 a month.", "Pays £50 monthly.", False),
        # A period that is how long, or when, is no frequency.
        ("Stayed in Rome for a month.", "Pays rent a week.", False),
        ("Moved house a year ago.", "Pays rent a month.", False),
    ],
)
def test_how_often_is_a_value(first, second, differ):
    differing = differing_values(read(first), read(second))
    assert (ValueKind.FREQUENCY in differing) is differ


def test_a_frequency_changed_in_reworded_text_conflicts():
    found = compare(
        "Water bill paid quarterly.", "water charge: monthly DD", 0.91, thresholds=TRUSTED
    )
    assert found is not None and found.kind is Kind.CONFLICT
    assert "the frequency differs: 'quarter' → 'month'" in found.reason


def test_a_name_held_one_at_a_time_differing_in_reworded_text_conflicts():
    found = compare(
        "Main contact at Globex is Mark Chen.",
        "Globex's primary contact person is Sofia Reyes.",
        0.9,
        thresholds=TRUSTED,
    )
    assert found is not None and found.kind is Kind.CONFLICT
    assert "'Mark Chen' → 'Sofia Reyes'" in found.reason


def test_a_name_alone_differing_in_reworded_text_is_another_thing_unless_held_one_at_a_time():
    # Both can hold: a person has more than one usual contact.
    pair = ("Usual contact at Globex is Mark Chen.", "Globex's contact lately is Sofia Reyes.")
    assert compare(*pair, 0.9, thresholds=TRUSTED) is None


def test_one_saying_more_beside_a_changed_value_conflicts_without_the_embeddings():
    found = compare("seats: 40", "They have 25 licensed seats in total.", thresholds=TRUSTED)
    assert found is not None and found.kind is Kind.CONFLICT
    assert "'40' → '25'" in found.reason


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # A plan beside the present.
        ("Plans to migrate CI from Jenkins to GitHub Actions next quarter.", "CI runs on Jenkins."),
        ("The user plans to move to Lisbon.", "The user lives in Porto."),
        ("Dad's next dentist visit is 6 June.", "Dad went to the dentist on 6 May."),
        # A rule and an exception allowed within it.
        ("Don't use markdown in emails.", "Markdown is fine in chat responses here."),
        ("No feature deploys on Fridays.", "friday hotfixes are allowed if the IC signs off"),
        # A liking and a dislike, each of another thing.
        ("Doesn't like horror films", "Loves Stephen King novels."),
        ("Rosa doesn't like flying.", "Rosa is happy to take long train journeys."),
        # One more fact beside the other.
        ("Weekly 1:1 with my manager on Tuesdays.", "Monthly skip-level, also on a Tuesday."),
    ],
)
def test_a_plan_an_exception_another_liking_or_one_more_fact_is_fine_together(first, second):
    assert all(found is None for found in both_ways(first, second, ALIKE))


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Markdown is fine in emails.", "Don't use markdown in emails."),
        ("Loves musicals, sees one a month", "User can't bear musicals of any kind."),
    ],
)
def test_an_unqualified_allowance_or_a_liking_of_one_thing_still_meets_its_negation(first, second):
    assert all(found and found.kind is Kind.CONFLICT for found in both_ways(first, second, ALIKE))


def test_an_acronym_as_a_notes_key_is_written_out():
    note, sentence = "CI: GitHub Actions", "They use GitHub Actions for continuous integration."
    assert all(found and found.kind is Kind.DUPLICATE for found in both_ways(note, sentence, None))


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # Two people, named where each text opens, however alike the rest.
        ("Tara Nair's favourite colour is blue.", "Dana Nair's favourite colour is red."),
        ("Lena Ueda has a dog called Juno.", "Lena Lund has a dog called Juno."),
        # A relative one names and the other does not, with a word of age or size too.
        ("The user's son is allergic to peanuts.", "The user is not allergic to peanuts."),
        ("The user's little brother is allergic to eggs.", "The user is allergic to eggs."),
        ("Ava is in Grade 4.", "Ava's best friend Leo is in Grade 3."),
        # Another time on one side.
        ("The user used to live in Oslo.", "The user lives in Rome."),
        ("Before 2020 the user worked at a bank.", "The user works at a school."),
        # One year, told as the start of now by one and the end of a past by the other.
        ("Has coached the team since 2022.", "Before 2022 Ana coached the team."),
        # Two ends of a scale, each with a value of its own: where each value holds.
        ("Sleeps about 7 hours on weeknights.", "On weekends I get around nine hours of sleep."),
        ("Gateway runs 8 replicas in prod.", "in staging, gateway has 2 replicas"),
        ("Work email: j.kim@acme.io", "Personal email: jiwoo.kim@gmail.com"),
        ("mob: 07700 900321", "Landline at home is 020 7946 0018."),
        # Each year's figure.
        ("Onyx Home's 2025 CRM budget: $200k", "Onyx Home spent just $90k on CRM tools in 2024."),
        # One tells a fact beside another.
        ("The user takes metformin twice a day.", "I also take vitamin D every morning."),
        ("Hazel is allergic to eggs.", "Hazel's friend Jim has an egg allergy too."),
        ("Allotment rent £45/yr", "There's an £8 a year water charge on top of the rent."),
        # Two scales apart at once: one end of each where the other's end holds.
        ("Prefers aisle seats on long-haul flights.", "On short hops I like the window."),
        # A dose until a month, and the dose since.
        (
            "Harold's metformin was 500 mg until March.",
            "Since March, Harold takes 1000 mg metformin daily.",
        ),
        # A past told by an age of life, a school, or a start.
        ("Smoked a pack a day in his twenties.", "User is a non-smoker."),
        ("I was vegan for three years in my twenties.", "I eat fish twice a week."),
        ("User was close to Tom in school.", "User rarely talks to Tom."),
        ("Her title was Data Analyst when she joined.", "Her title is Senior Data Scientist."),
        # A job before this one.
        ("Prior job: Deloitte, audit.", "Works at Deloitte as an auditor."),
        # A negation of another thing than the other says: an exception, another liking.
        ("No meetings on Fridays.", "Friday is fine for async updates by email."),
        ("Rosa doesn't like flying.", "Rosa is happy to take long train journeys."),
        # Numbers each counting what the other's never does: two figures side by side.
        ("Annual bonus up to 10% of base.", "Base salary $95k."),
        ("Mortgage: 25-year term.", "mortgage: monthly payment £1,120"),
        ("Bread recipe: 500 g flour.", "bread recipe: 350 ml water"),
        # A name both say, beside no relative, or owning the one the other does not name.
        ("The user lives in Berlin.", "The user's grandmother lives in Berlin."),
        ("Ben is in Year 6.", "Ben's best friend Kofi is in Year 5."),
        # A temperature beside a humidity; a weight at one age beside a weight at another.
        ("Keeps the nursery around 45% humidity.", "Nursery thermostat set to 20°C."),
        ("Mia weighed 7.9 kg at her 6-month check.", "Mia: 9.4 kg at 12 months."),
    ],
)
def test_structure_keeps_apart_what_meaning_alone_would_join(first, second):
    assert kept_apart(read(first), read(second)) and kept_apart(read(second), read(first))


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("T-shirt size M", "The user wears medium in tops."),
        ("The user never eats breakfast.", "The user has porridge every morning."),
        # "now" beside no time word says the same fact changed.
        ("The user lives in Rome now.", "The user lives in Oslo."),
        # One capitalised word may be any word opening a sentence.
        ("Coriander tastes like soap to me.", "Hates coriander."),
        # A name that is the value, not the subject.
        ("Aisha owns the mobile release.", "Mobile release owner: Kenji."),
        # A name only one text opens with, about what the other opens with.
        ("Priya Shah leads the billing team.", "The billing team is led by Priya."),
        ("Mateo's piano teacher is Ms Grant.", "Piano: Mateo, with Ms Grant on Mondays"),
        # One year told by both, one saying it is past, and one run of years.
        ("The flat was bought in 2019.", "We bought the flat back in 2019."),
        ("I lived in Lisbon from 2015 until 2018.", "spent 3 yrs in lisbon (2015\u201318)"),
        # Another time told beside now: the change, and what holds since.
        (
            "Joan lives alone in her flat.",
            "Joan moved into a care home last month, lives there now.",
        ),
        ("Ola drinks coffee every morning.", "Ola gave up coffee years ago, hasn't had one since."),
        # An age beside what holds now is no other time.
        ("Ada has a severe egg allergy (a reaction at age 2).", "Ada is allergic to eggs."),
        # A year told as the start of now, beside another value.
        ("Manager: Ines Duarte (since 2023)", "Has had the same manager, Rob Patel, since 2021."),
        # What holds until a date, said in the present.
        ("The lease runs until December 2025.", "Tenancy ends 30/06/2025."),
        # Where someone sits, what comes before a time, and a year up to now.
        ("Matilda sits next to Jonah in class.", "Jonah is Matilda's desk neighbour."),
        ("Do not call before 10am.", "No phone calls prior to ten in the morning."),
        ("Has stopped eating red meat over the last year.", "No longer eats red meat."),
        # A liking of the very thing the other dislikes.
        ("Favourite city: Kyoto.", "No city beats Barcelona for me, my all-time favourite."),
        # A period to come is no other time than now.
        ("Wants to be a manager within 2 years.", "Aims to manage a team in the next two years."),
        # A scale that is a number's unit is one value said in two units.
        ("Bakes the sponge at 180°C.", "The sponge goes in the oven at 350°F."),
        # Two ends of a scale with no value beside them: the scale is what differs.
        ("I only go to the gym on weekends.", "gym: weekdays only, before work"),
        # A pet or a relative by name in one, by what they are in the other.
        ("Pepper weighs 19 kg", "dog's weight: roughly 42 lbs"),
        ("Pepper's food: salmon kibble", "The dog eats salmon kibble."),
        # A relative named in one, by the name the other calls them.
        ("kids: Ella (9), Finn (6)", "I have a nine-year-old girl called Ella and a boy, Finn."),
        ("Best friend: Ollie (since kindergarten).", "known ollie since kindergarten, my bff"),
        # Numbers in one measure, or one of them in none, count one thing.
        ("Rent is £1,450 a month.", "The user pays 1650 in rent monthly."),
        ("Alder Media contract: 12-month term", "Alder locked in a three-year agreement."),
        # A kind of relative in one, one of that kind in the other.
        ("kids: none", "I pick my daughter up from school."),
        ("User's only sibling is a sister, Mel.", "I have an older brother, Dan."),
        # One age in two units, beside two weights: one time, one weight changed.
        ("1-year review weight: 9.6 kg", "At his 12-month check Theo weighed 10.4kg."),
    ],
)
def test_structure_leaves_to_meaning_what_it_cannot_tell(first, second):
    assert not kept_apart(read(first), read(second))


def test_a_verdict_read_by_meaning_is_unsure_and_names_the_words_evidence():
    first, second = read("Black line length is 100."), read("Our formatter caps lines at 88 chars.")

    found = by_meaning(Kind.CONFLICT, 0.83, 0.86, first, second)

    assert found == Likeness(
        Kind.CONFLICT,
        0.83,
        "cannot both hold (the number differs), read by their meaning: 0.86 alike, the pair "
        "model 83% sure",
        sure=False,
        by_model=True,
    )


def test_a_conflict_the_pair_model_barely_reads_and_the_words_do_not_show_is_a_duplicate():
    note, sentence = read("db is pg 15"), read("We're running PostgreSQL, major version 15.")
    unsure = UNSURE_CONFLICT - 0.05

    found = by_meaning(Kind.CONFLICT, unsure, 0.91, note, sentence)

    assert found and found.kind is Kind.DUPLICATE and not found.sure
    assert "only 38% sure they cannot both hold" in found.reason
    # Surer, or with a value the words show differing, it stays a conflict.
    surer = by_meaning(Kind.CONFLICT, UNSURE_CONFLICT, 0.91, note, sentence)
    assert surer and surer.kind is Kind.CONFLICT
    valued = by_meaning(Kind.CONFLICT, unsure, 0.91, note, read("We run PostgreSQL 16."))
    assert valued and valued.kind is Kind.CONFLICT and "the number differs" in valued.reason


def test_a_duplicate_read_by_meaning_says_so():
    found = by_meaning(Kind.DUPLICATE, 0.9, 0.91, read("T-shirt size M"), read("Wears medium tops"))

    assert found and found.reason.startswith("say the same thing in other words, read by their")
    assert not found.sure


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The user likes tea.", "The user likes coffee."),
        ("The kitchen light is smart.", "The bedroom light is smart."),
    ],
)
def test_one_word_swapped_in_one_sentence_is_no_duplicate_whatever_its_meaning(first, second):
    assert by_meaning(Kind.DUPLICATE, 0.9, 0.96, read(first), read(second)) is None
    assert by_meaning(Kind.CONFLICT, UNSURE_CONFLICT - 0.1, 0.96, read(first), read(second)) is None


def test_one_word_swapped_is_read_in_step_in_the_longest_texts():
    # A thousand words alike but one: an alignment of the two ran five million lines.
    first = read("i " * (MAX_COMPARED_CHARS // 2))
    second = read("i " * (MAX_COMPARED_CHARS // 2 - 1) + "x")
    with python_lines(20_000):
        assert by_meaning(Kind.DUPLICATE, 0.9, 0.96, first, second) is None


def test_numbers_are_aligned_by_measure_in_one_pass_over_the_longest_texts():
    # Hundreds of numbers a side: read each beside each, they ran the product of their counts.
    first = read(" ".join(f"£{number}" for number in range(100, 100 + MAX_COMPARED_CHARS // 5)))
    second = read(" ".join(str(number) for number in range(600, 600 + MAX_COMPARED_CHARS // 4)))
    with python_lines(20_000):
        assert ValueKind.NUMBER in differing_values(first, second)


@pytest.mark.parametrize(
    ("first", "second", "apart"),
    [
        # One measure, or one of them in none: one thing counted, given differently.
        ("Rent is £1,450 a month.", "The user pays 1650 in rent monthly.", True),
        ("Alder Media contract: 12-month term", "Alder locked in a three-year agreement.", True),
        ("Takes 500 mg of metformin.", "metformin: 1,000 mg daily", True),
        ("Takes 500 mg of metformin.", "metformin, 500mg, with breakfast", False),
        ("Resting heart rate 58 bpm.", "Resting heart rate is 64 bpm.", True),
        # One measure in two units: one number in each is two amounts.
        ("Log retention: 15 days", "Logs are kept for 15 months.", True),
        # Measures neither gives the other: two figures, none changed.
        ("Annual bonus up to 10% of base.", "Base salary $95k.", False),
        ("Mortgage: 25-year term.", "mortgage: monthly payment £1,120", False),
        ("Nursery humidity: 45%.", "Nursery thermostat: 20°C.", False),
    ],
)
def test_numbers_differ_only_where_they_may_count_one_thing(first, second, apart):
    assert (ValueKind.NUMBER in differing_values(read(first), read(second))) is apart


# Few words, often repeated, numbers and negations among them: what makes an alignment of two
# long texts do the most work.
_REPEATED = ("tea", "coffee", "not", "never", "12", "15", "£5", "Paris", "Berlin", "the", "user")


@settings(max_examples=25, deadline=None)
@given(
    st.integers(1, MAX_COMPARED_CHARS // 4),
    st.integers(0, 8),
    st.integers(0, MAX_COMPARED_CHARS // 4),
    st.randoms(use_true_random=False),
)
def test_comparing_any_two_texts_within_the_limit_does_bounded_work(size, changed, added, rng):
    # The other text: the first with a few words changed, then more added.
    first = [rng.choice(_REPEATED) for _ in range(size)]
    second = list(first)
    for _ in range(changed):
        second[rng.randrange(size)] = rng.choice(_REPEATED)
    second += [rng.choice(_REPEATED) for _ in range(added)]
    first_text, second_text = " ".join(first), " ".join(second)
    readings = (read(first_text), read(second_text))
    # difflib's alignment is itself near the product of the two lengths here: the dearest of
    # 300 draws of this shape (about 420 words beside 900) ran about 103,000 lines, 4 ms.
    # The bound holds compare to that and fails on work of a higher order.
    with python_lines(400_000):
        compare(first_text, second_text, 0.95, readings)
