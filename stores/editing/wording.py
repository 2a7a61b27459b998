"""One wording for what people write many ways, so two memories compare by what they say.

`normalise(text)` rewrites, in this order (a typographer's apostrophe read as a keyboard's
first):

1. **Person**: "I", "me", "my", "mine", "I'm", "we", "us", "our" → "the user", "the user's": a
   memory written in the first person is about the user, as one written in the third; so
   are "i", "im" and "ive", as typed in a hurry.
2. **Numbers written as words**: "forty-five", "twenty seven", "a dozen", "one hundred and
   twenty", "twice", "six and a half percent", "four and a quarter", "type one", "nineteen
   ninety" → "45", "27", "12", "120", "2 times", "6.5%", "4.25", "type 1", "1990"; "2x
   daily" → "2 times a day"; ordinals, "fifteenth", "twenty-first" → "15th", "21st" (a lone
   "one" used as a pronoun, and "first", "second", "third" alone, stay); thousands,
   millions and billions, "2 million", "1.5bn", "half a million", "£1.2m" (money's "m", not
   metres) → "2000000", "1500000000", "500000", "£1200000".
3. **Times of day**: "7 pm", "7:30 p.m.", "half past eight in the evening", "noon", "7:42" →
   "19:00", "19:30", "20:30", "12:00", "07:42"; a range whose half of the day is said once,
   "6-7pm" → "18:00-19:00", and a dash or "to" between two clocks as that hyphen.
4. **Units and money**: a quantity in one unit of each measure ("188 cm", "1.88 metres",
   "6'2\"" → "1.88 metres"; "2 hours" → "120 minutes"; "2 weeks" → "14 days"; "30yr" → "30
   years"; "70 kilograms" → "70 kg"; "11 stone" → "69.9 kg"; "25 mcg" → "0.025 mg"; "half an
   hour", "three quarters of an hour", "2h 10m", "one week" → "30 minutes", "45 minutes",
   "130 minutes", "7 days"; "7lb 8oz" → "3.4 kg"; "21°C" → "21 celsius", and Fahrenheit as
   people convert it, "350°F" → "180 celsius", "98.6°F" → "37 celsius"; "500Mb", "500 meg",
   "0.5 GB" → "500 megabytes"; "130 over 80" → "130/80"), "/mo", "monthly", "per month",
   "every day" → "a month", "a day" (also hour, week, year, quarter), "fortnightly", "every
   other week" → "every 14 days", "semi-annually" → "2 times a year"; an age, "4yo", "4 y/o",
   "four-year-old" → "4 years old"; "15 dollars", "USD 15", "1,200 USD", "15 bucks" → "$15",
   "$1,200"; a phone number as dialled within its country ("+1 415 555 0192", "(415)
   555-0192" → "4155550192"; "020 7946 0011", "02079460011" → "2079460011"), and a card's or
   an account's digits in one run ("No. 884 112 907" → "number 884112907"); a version by its
   number ("v20" → "20").
5. **Abbreviations** people write for places, jobs, tools, days and doses ("NYC" → "New York
   City", "SWE" → "software engineer", "k8s" → "Kubernetes", "Mon" → "Monday", "BID" → "2
   times a day"), written as they are (case kept, so "US" is a country, while "us" is the
   user, step 1).
6. **Terse notes** to the statement they abbreviate: "editor: vim", "tz=Europe/Berlin",
   "diet - vegetarian" → "The user's editor is vim", "The user's time zone is
   Europe/Berlin", "The user's diet is vegetarian"; "pref: dark mode" and a note that opens
   on its verb ("prefers dark mode") → "The user prefers dark mode". Only a short note of
   one line: a key of at most three words, a value of at most six.
7. **Restrictions and addresses**: "gluten-free" → "avoids gluten"; "X rather than Y", "X
   instead of Y" → "X not Y", "would rather X than Y" → "prefers to X not Y"; "42 Elm St" →
   "42 Elm Street".
8. **Dates** to one form, "March 3" or "March 3 2015": "3 March", "the 3rd of March",
   "March 3rd, 2015", "2015-03-03", "3/14/2015", "14.03.2015", and "3/14" after a word that
   brings a date ("on", "due", "appointment", "Friday") or with a leading zero ("14/03"),
   so "1/2 cup" and "24/7" stay; a run of months, "Oct-Nov" → "October to November" (read
   first, so a note's "key - value" does not take its dash);
   "'18" → 2018; "03/2026" → "March 2026"; a month's short name beside a day or a year,
   "22nd nov", "jan 5th", "jan 2024"; "the third quarter" → "Q3"; a run of years with a dash of
   any kind, its end shortened or not ("2015 - 18") → "2015-2018".
9. **Converse relations** to one direction: "X reports to Y" → "X is managed by Y" (as "Y is
   X's manager" reads once its words are compared as a set); a spouse's parent or sibling
   as an in-law, "my wife's mum" → "my mother-in-law".
10. **The opening**: a memory that opens on "They", "She", "Customer" or "Client", or on its
    verb with no subject ("Lives in Oslo", "Currently pays for ..."), opens on "The user".

Each step is a few regular expressions over the text: linear in its length. Nothing here
decides anything; `stores.editing.likeness` reads the result.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal

import phonenumbers

# --- person ----------------------------------------------------------------------------

# "I" as people type it in a hurry too: "i", "im", "ive" (but not the "i" of "i.e.").
_I = r"(?<![\w.])[Ii]"
_PERSON = (
    (re.compile(rf"{_I}'?m\b|{_I} am\b"), "the user is"),
    (re.compile(rf"{_I}'ve\b|(?<![\w.])ive\b"), "the user has"),
    (re.compile(rf"{_I}'d\b"), "the user would"),
    (re.compile(rf"{_I}'ll\b"), "the user will"),
    (re.compile(rf"{_I} was\b"), "the user was"),
    (re.compile(rf"{_I}(?![\w'.]|\.\w)"), "the user"),
    (re.compile(r"\b[Mm]y\b"), "the user's"),
    (re.compile(r"\b[Mm]ine\b"), "the user's"),
    (re.compile(r"\b[Mm]yself\b"), "the user"),
    # What a person says of "us" they say of themselves ("our wedding", "we have 2 kids").
    (re.compile(r"\b[Ww]e're\b|\b[Ww]e are\b"), "the user is"),
    (re.compile(r"\b[Ww]e've\b"), "the user has"),
    (re.compile(r"\b[Ww]e were\b"), "the user was"),
    (re.compile(r"\b[Ww]e\b"), "the user"),
    (re.compile(r"\b[Oo]urs?\b"), "the user's"),
    (re.compile(r"\b[Mm]e\b"), "the user"),
    # Not "US", the United States, nor a part of a name ("us-east-1").
    (re.compile(r"(?<![\w-])[Uu]s(?![\w-])"), "the user"),
)
# Who a memory about its user opens with when it does not say "the user": a pronoun, the
# role a support agent writes ("Customer has 25 seats"), or nobody at all ("Lives in Oslo",
# "Is vegan"). Only the opening: further in, "she" may be anyone the text names.
_OPENING_SUBJECT = re.compile(
    r"^\s*(?:They|He|She|(?:[Tt]he )?(?:[Cc]ustomer|[Cc]lient))(?:(?='s\b)|\b(?!'))"
    r"(?:\s+(are|were|have|don't|do not|aren't|weren't|haven't)\b)?"
)
_OPENING_AGREEMENT = {
    "are": "is",
    "were": "was",
    "have": "has",
    "don't": "doesn't",
    "do not": "does not",
    "aren't": "isn't",
    "weren't": "wasn't",
    "haven't": "hasn't",
}
_OPENING_CONTRACTED = re.compile(r"^\s*(?:They|He|She)('re|'ve|'s)\s")
_CONTRACTED_VERBS = {"'re": "is", "'ve": "has", "'s": "is"}
# Verbs a memory opens on with its subject left out. Third-person forms only, and not
# those that are as often a plural noun opening a sentence ("Runs", "Plans", "Deploys",
# "Reads", "Writes").
_SUBJECTLESS_VERBS = (
    "Is|Has|Was|Isn't|Hasn't|Wasn't|Doesn't|Does not|Can't|Cannot|Lives|Works|Eats|Speaks|"
    "Owns|Drives|Enjoys|Studies|Follows|Attends|Earns|Commutes|Smokes|Goes|Takes|Walks|"
    "Swims|Wears|Keeps|Teaches|Avoids|Loves|Hates|Likes|Dislikes|Prefers|Uses|Wants|Needs|"
    "Rents|Pays|Travels|Volunteers|Sleeps|Wakes|Gets|Plays|Drinks"
)
# An adverb may come first: "Currently pays for ...", "Never drinks coffee" (an instruction
# would say "Never drink").
_SUBJECTLESS = re.compile(
    r"(?i)^\s*((?:currently|usually|always|never|still|now|also|often|rarely|sometimes|only)\s+)?"
    rf"({_SUBJECTLESS_VERBS})\b(?!')"
)


def _opening_subject(text: str) -> str:
    """`text` opening on "The user" where it opens on its user another way."""
    contracted = _OPENING_CONTRACTED.match(text)
    if contracted:
        verb = _CONTRACTED_VERBS[contracted.group(1)]
        return f"The user {verb} {text[contracted.end() :]}"
    subject = _OPENING_SUBJECT.match(text)
    if subject:
        verb = subject.group(1)
        agreed = f" {_OPENING_AGREEMENT[verb.casefold()]}" if verb else ""
        return f"The user{agreed}{text[subject.end() :]}"
    verb_first = _SUBJECTLESS.match(text)
    if verb_first:
        adverb, verb = verb_first.groups()
        opening = f"{adverb or ''}{verb}".casefold()
        return f"The user {opening}{text[verb_first.end() :]}"
    return text


# "the user do" after the rewrite: the verb agrees with the third person.
_THIRD = {"do": "does", "have": "has"}
_AGREEMENT = (
    (re.compile(r"\bthe user (do|have)\b"), lambda m: f"the user {_THIRD[m.group(1)]}"),
    (re.compile(r"\bthe user don't\b"), lambda m: "the user doesn't"),
)

# --- numbers ---------------------------------------------------------------------------

_UNITS_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS_WORDS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
# The first half of a year said in two ("nineteen ninety").
_CENTURIES = {"nineteen": 19, "twenty": 20}
_NUMBER_WORD = "|".join([*_UNITS_WORDS, *_TENS_WORDS, *_SCALES, "a dozen", "dozen", "and"])


def _number_of(words: list[str]) -> int | None:
    """The value of number words in order, or None when they are not one number."""
    total, current, seen = 0, 0, False
    for word in words:
        if word == "and":
            continue
        if word == "dozen":
            current = (current or 1) * 12
        elif word in _UNITS_WORDS:
            rest = current % 100
            if rest and not (rest >= 20 and rest % 10 == 0):
                return None  # "two three": two numbers, not one
            current += _UNITS_WORDS[word]
        elif word in _TENS_WORDS:
            if current % 100:
                return None
            current += _TENS_WORDS[word]
        elif word in _SCALES:
            scale = _SCALES[word]
            if scale == 100:
                current = (current or 1) * 100
            else:
                total += (current or 1) * scale
                current = 0
        seen = True
    return total + current if seen else None


# Ordinal words by the number word a run of number words would end on instead
# ("twenty-first" ends on "one"). "first", "second" and "third" alone stay words: "first
# time", "a second", "a third of".
_ORDINAL_ENDINGS = {
    "fifth": "five",
    "eighth": "eight",
    "ninth": "nine",
    "twelfth": "twelve",
    **{f"{word}th": word for word in ("four", "six", "seven", "ten", "eleven")},
    **{f"{word}th": word for word in _UNITS_WORDS if word.endswith("teen")},
    **{f"{word[:-1]}ieth": word for word in _TENS_WORDS},
    **{f"{word}th": word for word in _SCALES},
}
_AFTER_TENS = {"first": "one", "second": "two", "third": "three"}
# A run of number words joined by spaces or hyphens ("forty-five", "one hundred and two"),
# maybe ending on an ordinal ("twenty-first"), or an ordinal alone ("fifteenth"). One
# pattern, so that a run is matched once from its first word: a pattern of ordinals alone,
# tried again from each word of a long run of numbers, took 200 ms on 2,000 characters.
_ORDINAL = "|".join([*_ORDINAL_ENDINGS, *_AFTER_TENS])
# The letters a number word starts with: a word starting otherwise is passed at one look,
# not tried against each word (a quarter of the pattern's time over ordinary memories).
_NUMBER_INITIALS = "".join(
    sorted({word[0] for word in re.findall(r"[a-z]+", f"{_NUMBER_WORD}|{_ORDINAL}")})
)
_NUMBER_RUN = re.compile(
    rf"(?i)\b(?=[{_NUMBER_INITIALS}])(?:(?:{_NUMBER_WORD})(?:[\s-]+(?:{_NUMBER_WORD}))*"
    rf"(?:[\s-]+(?P<ordinal>{_ORDINAL}))?\b|(?:{'|'.join(_ORDINAL_ENDINGS)})\b)"
)


def _digits(match: re.Match[str]) -> str:
    """Number words as digits ("forty-five" → "45"), an ordinal with its suffix
    ("twenty-first" → "21st", "fifteenth" → "15th")."""
    text, ordinal = match.group(), match["ordinal"]
    if ordinal and not _ordinal_meant(match):
        ordinal_at = match.start("ordinal") - match.start()
        numbers = text[:ordinal_at].rstrip(" \t\n-")
        return _digits_of(numbers) + text[len(numbers) :]
    words = [word for word in re.split(r"[\s-]+", text.casefold()) if word not in {"a", ""}]
    if words[-1] not in _ORDINAL_ENDINGS and not ordinal:
        return _digits_of(text)
    words[-1] = _ORDINAL_ENDINGS.get(words[-1]) or _AFTER_TENS[words[-1]]
    number = _number_of(words)
    if number is None:
        return text  # "one fifth": a fraction, not an ordinal
    teens = number % 100 in (11, 12, 13)
    suffix = "th" if teens else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def _ordinal_meant(match: re.Match[str]) -> bool:
    """Whether a run of numbers ending on "first", "second" or "third" is one ordinal: "the
    twenty-first", "the twenty-second of May", but "one third" (a fraction) and "a twenty
    second delay" (seconds) are numbers and a word."""
    word = match["ordinal"].casefold()
    if word not in _AFTER_TENS:
        return True
    if not re.fullmatch(rf"(?i)(?:{'|'.join(_TENS_WORDS)})[\s-]+\w+", match.group()):
        return False
    if word != "second":
        return True
    before = match.string[: match.start()].casefold()
    months = tuple(f"{month.casefold()} " for month in _MONTH_NAMES)
    return before.endswith(("the ", *months)) or match.string.startswith(" of ", match.end())


# "One" after a word that numbers a kind is the number ("type one diabetes", "level one").
_NUMBERED_ONE = re.compile(
    r"(?i)\b(type|level|grade|stage|phase|class|category|size|step|version|number|tier)"
    r"[\s-]+one\b(?![\s-]+(?:hundred|thousand|million))"
)
# "One" before a unit is the number ("one week", "one hour"); "one day" is as often "some day".
_ONE_MEASURED = re.compile(
    r"(?i)\bone(?=[\s-](?:week|month|year|hour|minute|mile|kilo(?:metre|gram)?|litre|metre)s?\b)"
)
# "6 and a half", "two-and-a-half", "four and a quarter" once its words are digits.
_AND_A_FRACTION = re.compile(r"(?i)\b(\d+)(?:\s+|-)and(?:\s+|-)(a|3)(?:\s+|-)(half|quarters?)\b")
_FRACTIONS = {"half": 0.5, "quarter": 0.25, "quarters": 0.25}
# Half or quarters of a unit said in words ("half an hour", "a quarter of an hour", "three
# quarters of an hour" once "three" is "3"): a quantity in digits.
_UNIT_SAID = r"(hour|mile|kilo|litre|liter|day)"
_HALF_A = re.compile(rf"(?i)\bhalf an? {_UNIT_SAID}\b")
_QUARTERS_OF = re.compile(rf"(?i)\b(a|3) quarters? of an? {_UNIT_SAID}\b")


def _and_a_fraction(match: re.Match[str]) -> str:
    whole, count, fraction = match.groups()
    share = _FRACTIONS[fraction.casefold()] * (3 if count == "3" else 1)
    if (count == "3") != fraction.casefold().endswith("s"):
        return match.group()  # "and a quarters", "and 3 quarter": not a number said
    return f"{int(whole) + share:g}"


def _quarters_of(match: re.Match[str]) -> str:
    count, unit = match.groups()
    return f"{0.75 if count == '3' else 0.25} {unit}"


_PERCENT = re.compile(r"(?i)(\d)\s?(?:percent|per cent|pct)\b")

# Thousands, millions and billions of a number in digits ("2 million", "1.5bn"), of an amount
# of money ("£1.2m": never metres), or a share of one said in words ("half a million").
_SCALE_WORDS = {**_SCALES, "mn": 1_000_000, "bn": 1_000_000_000}
_SCALED = re.compile(r"(?i)(?<![\w.,])(\d+(?:\.\d+)?)\s?(thousand|million|billion|mn|bn)\b")
_MONEY_IN_MILLIONS = re.compile(r"(?i)(?<=[£$€])(\d+(?:\.\d+)?)\s?m\b")
_SHARE_OF_A_SCALE = re.compile(
    r"(?i)\b(?:a |one )?(half|quarter of|three quarters of) an? (thousand|million|billion)\b"
)
_SHARES = {
    "half": Decimal("0.5"),
    "quarter of": Decimal("0.25"),
    "three quarters of": Decimal("0.75"),
}


def _scaled(amount: Decimal, scale: str) -> str:
    text = f"{amount * _SCALE_WORDS[scale.casefold()]:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


# How many times, said in one word ("twice a day" is "2 times a day"); "once" is left, being
# as often "formerly" as "one time".
_TIMES_WORDS = {"twice": "2 times", "thrice": "3 times"}
_TIMES_WORD = re.compile(r"(?i)\b(twice|thrice)\b")
# "2x a day", "3x/week": how many times, once the period reads "a day", "a week".
_TIMES_X = re.compile(r"(?i)\b(\d+)\s?x(?=\s(?:a|an)\s(?:day|week|month|year)\b)")


def _digits_of(text: str) -> str:
    words = [word for word in re.split(r"[\s-]+", text.casefold()) if word not in {"a", ""}]
    if words[0] == "and":
        return text  # "and" joins numbers only between them
    if words[-1] == "and":  # "six and a half": the number, then the rest as written
        head = re.match(r"(?i)(.*?)([\s-]+and)$", text)
        return _digits_of(head.group(1)) + head.group(2) if head else text
    if words == ["one"]:
        return text  # "the one closest": a pronoun as often as a number
    number = _year_of(words) or _number_of(words)
    return text if number is None else str(number)


def _year_of(words: list[str]) -> int | None:
    """A year said as its two halves ("nineteen ninety", "twenty twenty-four"), or None."""
    if len(words) < 2 or words[0] not in _CENTURIES or "and" in words:
        return None
    rest = _number_of(words[1:])
    return _CENTURIES[words[0]] * 100 + rest if rest is not None and 10 <= rest <= 99 else None


# --- times of day ----------------------------------------------------------------------

_HALF = re.compile(
    r"(?i)\b(half|quarter) (past|to) (\d{1,2})(?: o'clock)?(?: in the (morning|afternoon|evening)"
    r"| at night)?"
)
_CLOCK = re.compile(
    r"(?i)(?<![\d:.])\b(\d{1,2})(?:[:.](\d{2}))?\s*(a\.m\.|p\.m\.|am|pm|o'clock)(?![\w])"
    r"(?: in the (morning|afternoon|evening)| at night)?"
)
# An hour told by its part of the day alone ("6 in the morning", "10 at night").
_DAYPART = re.compile(
    r"(?i)(?<![\d:.])\b(\d{1,2})(?:[:.](\d{2}))?\s+"
    r"(?:in the (morning|afternoon|evening)|at night)\b"
)
_NOON = re.compile(r"(?i)\b(noon|midday|midnight)\b")
# A range of hours whose half of the day is said once, after its end ("6-7pm").
_HOUR_RANGE = re.compile(
    r"(?i)(?<![\d:.])\b(\d{1,2})((?:[:.]\d{2})?)(\s?(?:-|\u2013|\u2014|to)\s?)"
    r"(\d{1,2})((?:[:.]\d{2})?)\s*(a\.m\.|p\.m\.|am|pm)(?![\w])"
)
_AFTERNOON_WORDS = {"afternoon", "evening", "night"}


def _clock(hour: int, minute: int, afternoon: bool) -> str:
    if afternoon and hour < 12:
        hour += 12
    return f"{hour % 24:02d}:{minute:02d}" if hour <= 24 and minute < 60 else ""


def _half_past(match: re.Match[str]) -> str:
    part, way, hour_text, when = match.groups()
    minutes = 30 if part.casefold() == "half" else 15
    hour = int(hour_text)
    minute = minutes if way.casefold() == "past" else 60 - minutes
    if way.casefold() == "to":
        hour -= 1
    afternoon = (when or "").casefold() in _AFTERNOON_WORDS or "night" in match.group().casefold()
    return _clock(hour, minute, afternoon) or match.group()


def _o_clock(match: re.Match[str]) -> str:
    hour_text, minute_text, marker, when = match.groups()
    hour, minute = int(hour_text), int(minute_text or 0)
    marker = marker.casefold().replace(".", "")
    if marker == "am" and hour == 12:
        hour = 0
    afternoon = marker == "pm" or (when or "").casefold() in _AFTERNOON_WORDS
    afternoon = afternoon or "night" in match.group().casefold()
    return _clock(hour, minute, afternoon and hour != 12) or match.group()


def _daypart(match: re.Match[str]) -> str:
    hour_text, minute_text, when = match.groups()
    hour, minute = int(hour_text), int(minute_text or 0)
    if not 1 <= hour <= 12:
        return match.group()
    when = (when or "night").casefold()
    if when == "morning" and hour == 12:
        hour = 0
    return _clock(hour, minute, when in _AFTERNOON_WORDS and hour != 12) or match.group()


def _hour_range(match: re.Match[str]) -> str:
    """Both ends of the range in the half of the day said once: "6-7pm" → "6pm-7pm". Not
    when the start is the later hour, as in "11-1pm", which crosses noon."""
    start, start_minutes, between, end, end_minutes, marker = match.groups()
    if int(start) % 12 > int(end) % 12:
        return match.group()
    return f"{start}{start_minutes}{marker}{between}{end}{end_minutes}{marker}"


def _noon(match: re.Match[str]) -> str:
    return "00:00" if match.group().casefold() == "midnight" else "12:00"


# A clock written with a one-digit hour ("the 7:42 train") as the two-digit one above gives.
_ONE_DIGIT_HOUR = re.compile(r"(?<![\d:.,])(\d):([0-5]\d)(?![\d:])")
# A dash or a "to" between two clocks ("09:00 \u2013 17:30", "22:00 to 06:00") as the hyphen
# of a range.
_DASH_BETWEEN_CLOCKS = re.compile(
    r"(?<=\d:\d\d)(?:\s?[\u2013\u2014-]\s?|\s(?:to|till|until)\s)(?=\d{1,2}:\d\d)"
)


# --- units -----------------------------------------------------------------------------

# Each unit's word forms → (the measure's one unit, how many of that unit one is).
_UNIT_FORMS: dict[str, tuple[str, float]] = {
    **dict.fromkeys(
        ("mm", "millimetre", "millimetres", "millimeter", "millimeters"), ("metres", 0.001)
    ),
    **dict.fromkeys(
        ("cm", "centimetre", "centimetres", "centimeter", "centimeters"), ("metres", 0.01)
    ),
    **dict.fromkeys(("m", "metre", "metres", "meter", "meters"), ("metres", 1.0)),
    **dict.fromkeys(
        ("km", "kms", "kilometre", "kilometres", "kilometer", "kilometers"), ("metres", 1000.0)
    ),
    **dict.fromkeys(("mi", "mile", "miles"), ("metres", 1609.344)),
    **dict.fromkeys(("ft", "foot", "feet"), ("metres", 0.3048)),
    **dict.fromkeys(("in", "inch", "inches"), ("metres", 0.0254)),
    **dict.fromkeys(("mcg", "\u00b5g", "\u03bcg", "microgram", "micrograms"), ("mg", 0.001)),
    **dict.fromkeys(("mg", "milligram", "milligrams"), ("mg", 1.0)),
    **dict.fromkeys(("g", "gram", "grams", "gramme", "grammes"), ("kg", 0.001)),
    **dict.fromkeys(("kg", "kgs", "kilo", "kilos", "kilogram", "kilograms"), ("kg", 1.0)),
    **dict.fromkeys(("lb", "lbs"), ("kg", 0.45359237)),
    **dict.fromkeys(("stone", "stones"), ("kg", 6.35029318)),
    **dict.fromkeys(
        ("ml", "millilitre", "millilitres", "milliliter", "milliliters"), ("litres", 0.001)
    ),
    **dict.fromkeys(("l", "litre", "litres", "liter", "liters"), ("litres", 1.0)),
    **dict.fromkeys(("sec", "secs", "seconds"), ("minutes", 1 / 60)),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), ("minutes", 1.0)),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), ("minutes", 60.0)),
    **dict.fromkeys(("day", "days"), ("days", 1.0)),
    **dict.fromkeys(("wk", "wks", "week", "weeks"), ("days", 7.0)),
    **dict.fromkeys(("month", "months"), ("months", 1.0)),
    **dict.fromkeys(("yr", "yrs", "year", "years"), ("years", 1.0)),
    # Data as people say it, a broadband's bits and a disk's bytes alike ("500Mb", "500 meg").
    **dict.fromkeys(("kb", "kbps", "kilobyte", "kilobytes"), ("megabytes", 0.001)),
    **dict.fromkeys(
        ("mb", "mbps", "meg", "megs", "megabit", "megabits", "megabyte", "megabytes"),
        ("megabytes", 1.0),
    ),
    **dict.fromkeys(
        ("gb", "gbps", "gig", "gigs", "gigabit", "gigabits", "gigabyte", "gigabytes"),
        ("megabytes", 1000.0),
    ),
    **dict.fromkeys(("tb", "terabyte", "terabytes"), ("megabytes", 1_000_000.0)),
}
# The one unit of each measure a quantity is written in once read: "metres", "kg", ...
UNITS = frozenset(unit for unit, _ in _UNIT_FORMS.values())
# A unit right after a number ("1.88 m", "5,000 metres", "2hrs").
_QUANTITY = re.compile(
    r"(?i)(?<![\w.,:/-])(\d{1,3}(?:,\d{3})+|\d+(?:[.,]\d+)?)(?:\s|-)?("
    + "|".join(sorted(map(re.escape, _UNIT_FORMS), key=len, reverse=True))
    + r")\b"
)
# A temperature's scale by its symbol ("21°C", "temps in °F") as its name reads.
_DEGREES = re.compile(r"(?i)\s?(?:°|\u00ba|degrees?\s)\s?([CF])\b")
_DEGREE_SCALES = {"c": " celsius", "f": " fahrenheit"}
_FAHRENHEIT = re.compile(r"(?i)(?<![\w.])(-?\d{1,3}(?:\.\d)?)\s?fahrenheit\b")


def _in_celsius(match: re.Match[str]) -> str:
    """A Fahrenheit temperature in Celsius as people convert it: an oven's to the nearest ten
    ("350°F" is "180°C"), a body's or the weather's to the degree ("98.6°F" is "37°C")."""
    celsius = (float(match.group(1)) - 32) * 5 / 9
    return f"{round(celsius, -1 if celsius >= 100 else 0):g} celsius"


# A height in feet and inches ("5'4\"", "5 ft 4 in", "5 feet 4 inches"): one length.
_FEET_INCHES = re.compile(
    r"(?i)(?<![\w.])(\d)\s?(?:'|\u2019|ft|feet|foot)\s?(\d{1,2})\s?(?:\"|\u201d|''|in\b|inch(?:es)?\b)?"
    r"(?!\d)"
)


# A weight in pounds and ounces ("7lb 8oz", a newborn's as often as not): one mass.
_POUNDS_OUNCES = re.compile(r"(?i)(?<![\w.])(\d{1,3})\s?lbs?\s?(\d{1,2})\s?oz\b")


# A duration in hours and minutes ("2h 10m", "1 hr 30 mins"): one quantity, where "m" alone
# would read as metres.
_HOURS_MINUTES = re.compile(
    r"(?i)(?<![\w.])(\d{1,3})\s?(?:h|hrs?|hours?)\s?(?:and\s)?(\d{1,2})\s?(?:m|mins?|minutes?)\b"
)
# Two readings said "over" one another ("130 over 80"), as a blood pressure is written "130/80".
_OVER = re.compile(r"(?<![\w.])(\d{2,3}) over (\d{2,3})(?!\w|\.\d)")


def _said_in_two_units(per: int, size: float, unit: str) -> Callable[[re.Match[str]], str]:
    """The rewrite of a quantity said in a large unit and a small one ("5 ft 4", "7lb 8oz")
    to one amount of `unit`: `per` small ones to a large one, each `size` of `unit`. A small
    count past `per` ("5'14") is no such quantity."""

    def one_amount(match: re.Match[str]) -> str:
        large, small = int(match.group(1)), int(match.group(2))
        if small >= per:
            return match.group()
        return f"{_amount((large * per + small) * size)} {unit}"

    return one_amount


_feet_inches = _said_in_two_units(12, 0.0254, "metres")
_pounds_ounces = _said_in_two_units(16, 0.028349523125, "kg")


_CURRENCY_WORDS = {
    "dollar": "$",
    "dollars": "$",
    "usd": "$",
    "euro": "€",
    "euros": "€",
    "eur": "€",
    "gbp": "£",
    "quid": "£",
    "buck": "$",
    "bucks": "$",
}
# An amount with or without its thousands commas ("120,000 USD", "USD 1,200.50").
_AMOUNT = r"(\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d+(?:\.\d{1,2})?)"
_MONEY_AFTER = re.compile(
    rf"(?i)(?<![\d,.]){_AMOUNT}\s?(dollars?|usd|euros?|eur|gbp|quid|bucks?)\b"
)
_MONEY_BEFORE = re.compile(rf"(?i)\b(usd|eur|gbp)\s?{_AMOUNT}(?![\d,])")
_PER = (
    (re.compile(r"(?i)(?:\s?/\s?|\s+per\s+|\s+(?:each|every)\s+)(mo|mth|month)\b"), " a month"),
    (re.compile(r"(?i)\b(?:an?\s)?monthly\b"), "a month"),
    (re.compile(r"(?i)(?:\s?/\s?|\s+per\s+|\s+(?:each|every)\s+)(hr|hour)\b"), " an hour"),
    (re.compile(r"(?i)\b(?:an?\s)?hourly\b"), "an hour"),
    (re.compile(r"(?i)(?:\s?/\s?|\s+per\s+|\s+(?:each|every)\s+)(day)\b"), " a day"),
    (re.compile(r"(?i)\b(?:an?\s)?daily\b"), "a day"),
    (re.compile(r"(?i)(?:\s?/\s?|\s+per\s+|\s+(?:each|every)\s+)(wk|week)\b"), " a week"),
    (re.compile(r"(?i)\b(?:an?\s)?weekly\b"), "a week"),
    (re.compile(r"(?i)(?:\s?/\s?|\s+per\s+|\s+(?:each|every)\s+)(yr|year)\b"), " a year"),
    (re.compile(r"(?i)\b(?:semi-?annually|bi-?annually|twice yearly)\b"), "2 times a year"),
    (re.compile(r"(?i)\b(?:(?:an?\s)?yearly|annually)\b"), "a year"),
    (re.compile(r"(?i)\b(?:per|each|every)\s+quarter\b"), "a quarter"),
    (re.compile(r"(?i)\b(?:an?\s)?quarterly\b"), "a quarter"),
    (re.compile(r"(?i)\b(?:fortnightly|bi-?weekly|every other week)\b"), "every 14 days"),
    (re.compile(r"(?i)\b(\d+)(?:\s?(?:yo|y/o)|[\s-](?:yrs?|years?)[\s-]old)\b"), r"\1 years old"),
    (re.compile(r"(?i)\baged (\d+)\b"), r"\1 years old"),
)


# "10k", "$80k", "2.5k": a number in thousands, as people write a salary, a run or a count.
_THOUSANDS_K = re.compile(r"(?<![\w.,])(\d+(?:\.\d+)?)[kK]\b")


def _thousands_k(match: re.Match[str]) -> str:
    return _amount(float(match.group(1)) * 1000)


# A blood group with its sign written any way ("A+", "O neg", "AB positive") → one word.
_BLOOD = re.compile(
    r"(?<!\w)(AB|A|B|O)(?:([+\u2212-])(?![\w+-])|\s?(pos(?:itive)?|neg(?:ative)?)\b)"
)


def _blood(match: re.Match[str]) -> str:
    positive = match.group(2) == "+" or (match.group(3) or "").startswith("pos")
    return f"{match.group(1)}-{'positive' if positive else 'negative'}"


def _amount(value: float) -> str:
    """Three significant figures: "6 ft" and "183 cm" are one height, as people round."""
    text = f"{float(f'{value:.3g}'):.4f}".rstrip("0").rstrip(".")
    return text or "0"


def _quantity(match: re.Match[str]) -> str:
    number_text, unit = match.groups()
    unit_form = unit.casefold()
    if unit_form == "in" and not match.group().endswith(number_text + unit):
        return match.group()  # "born 1990 in Paris": "in" apart from a number is a word
    measure, factor = _UNIT_FORMS[unit_form]
    thousands = re.fullmatch(r"\d{1,3}(?:,\d{3})+", number_text)
    number = number_text.replace(",", "" if thousands else ".")
    value = float(number) * factor
    return f"{_amount(value)} {measure}"


def _money_after(match: re.Match[str]) -> str:
    return f"{_CURRENCY_WORDS[match.group(2).casefold()]}{match.group(1)}"


def _money_before(match: re.Match[str]) -> str:
    return f"{_CURRENCY_WORDS[match.group(1).casefold()]}{match.group(2)}"


# A year as people write one in full: "2018", "1985".
FULL_YEAR = re.compile(r"(?:19|20)\d\d")

# --- phone numbers and versions --------------------------------------------------------

# Digits grouped as a phone number is written: "+1 415 555 0192", "(415) 555-0192", "07700
# 900123", "415 555 0192", "1-800-555-0100". Read as the number dialled within its country,
# so each way of writing one number is one word: the country code after "+" dropped
# (phonenumbers knows how long it is), or a trunk prefix ("0" in most of Europe, "1" before
# ten digits in North America).
_PHONE = re.compile(
    r"(?<![\w+.,/:-])(\+\s?)?\(?\d{1,5}\)?(?:[ -]?\(?\d{1,6}\)?){1,5}(?![\w,/:-]|\.\d)"
)
_PHONE_DIGITS = range(7, 16)
_NORTH_AMERICAN = re.compile(r"\d{3} \d{3} \d{4}")
# A national number written in one run, its trunk "0" first ("02079460011").
_TRUNK_RUN = re.compile(r"0[1-9]\d{8,9}")
# A number written in groups of digits as a card, an account or a membership number is
# ("884 112 907", "4111 1111 1111 1111"): one number, however it is grouped.
_DIGIT_GROUPS = re.compile(r"[1-9]\d{2,3}(?: \d{2,4}){2,}")
# "No. 4417", "#4417": the number sign, which is no "no".
_NUMBER_SIGN = re.compile(r"(?:\b[Nn]o\.|#)\s?(?=\d)")


def _phone(match: re.Match[str]) -> str:
    written = match.group()
    digits = re.sub(r"\D", "", written)
    groups = re.findall(r"\d+", written)
    years = [group for group in groups if FULL_YEAR.fullmatch(group)]
    if _TRUNK_RUN.fullmatch(written):
        return digits[1:]
    if _DIGIT_GROUPS.fullmatch(written) and not years:
        return digits
    if len(digits) not in _PHONE_DIGITS or len(groups) < 2 or len(years) == len(groups):
        return written  # one run of digits, or years in a row ("in 2024 2025")
    if years and len(groups) == 3:
        return written  # a date: "2015-06-12", "12 06 2015"
    if not (
        match.group(1)
        or written.startswith(("(", "0"))
        or "-" in written
        or _NORTH_AMERICAN.fullmatch(written)
    ):
        return written  # numbers side by side ("10000 5000 metres"), not a number to dial
    if match.group(1):
        try:
            number = phonenumbers.parse(written, None)
        except phonenumbers.NumberParseException:
            return written
        return str(number.national_number)
    if digits.startswith("0"):
        return digits[1:]
    return digits[1:] if len(digits) == 11 and digits.startswith("1") else digits


# "v20", "v3.12": a version by its number alone, as "Node 20" writes it.
_VERSION = re.compile(r"(?<![\w.])[vV](\d+(?:\.\d+)*)\b")

# --- abbreviations ---------------------------------------------------------------------

# Written as people write them; matched with their case, whole words only.
ABBREVIATIONS = {
    "NYC": "New York City",
    "NY": "New York",
    "LA": "Los Angeles",
    "SF": "San Francisco",
    "UK": "United Kingdom",
    "U.K.": "United Kingdom",
    "US": "United States",
    "U.S.": "United States",
    "USA": "United States",
    "UAE": "United Arab Emirates",
    "NZ": "New Zealand",
    "DC": "Washington",
    "SWE": "software engineer",
    "SDE": "software engineer",
    "PM": "product manager",
    "QA": "quality assurance",
    "CTO": "chief technology officer",
    "CEO": "chief executive officer",
    "CFO": "chief financial officer",
    "RN": "registered nurse",
    "GP": "doctor",
    "Dr.": "doctor",
    "Dr": "doctor",
    "JS": "JavaScript",
    "TS": "TypeScript",
    "k8s": "Kubernetes",
    "GH": "GitHub",
    "F1": "Formula 1",
    "TL": "team lead",
    "CI": "continuous integration",
    "nvim": "Neovim",
    "vscode": "VS Code",
    "VSCode": "VS Code",
    "repo": "repository",
    "repos": "repositories",
    "PR": "pull request",
    "PRs": "pull requests",
    "prod": "production",
    "db": "database",
    "DB": "database",
    "config": "configuration",
    "Postgres": "PostgreSQL",
    "postgres": "PostgreSQL",
    "py": "Python",
    "appt": "appointment",
    "PST": "Pacific time",
    "PDT": "Pacific time",
    "PT": "Pacific time",
    "EST": "Eastern time",
    "EDT": "Eastern time",
    "ET": "Eastern time",
    "CST": "Central time",
    "CDT": "Central time",
    "MST": "Mountain time",
    "CET": "Central European time",
    "CEST": "Central European time",
    "2FA": "2-factor authentication",
    "MFA": "multi-factor authentication",
    "auth": "authentication",
    "WFH": "works from home",
    "PTO": "paid time off",
    "OOO": "out of office",
    "ETA": "estimated arrival",
    "DOB": "date of birth",
    "ASAP": "as soon as possible",
    "BF": "boyfriend",
    "GF": "girlfriend",
    "MIL": "mother-in-law",
    "FIL": "father-in-law",
    "uni": "university",
    "BSc": "bachelor's degree",
    "MSc": "master's degree",
    "wknd": "weekend",
    "tmrw": "tomorrow",
    "ppl": "people",
    "HQ": "headquarters",
    "info": "information",
    "bro": "brother",
    "sis": "sister",
    "mgr": "manager",
    "dept": "department",
    "bday": "birthday",
    "b-day": "birthday",
    "hubby": "husband",
    "w/o": "without",
    "w/": "with",
    "b/c": "because",
    "bc": "because",
    "approx.": "about",
    "approx": "about",
    # How often a dose is taken, as prescriptions and care notes write it.
    **dict.fromkeys(("BID", "bd", "BD", "b.d."), "2 times a day"),
    **dict.fromkeys(("TID", "tds", "TDS", "t.d.s."), "3 times a day"),
    **dict.fromkeys(("QID", "qds", "QDS", "q.d.s."), "4 times a day"),
    **dict.fromkeys(("QD", "qd"), "once a day"),
    **dict.fromkeys(("PRN", "prn"), "as needed"),
    "Mon": "Monday",
    **dict.fromkeys(("Tue", "Tues", "tue", "tues"), "Tuesday"),
    "Wed": "Wednesday",
    **dict.fromkeys(("Thu", "Thurs", "thu", "thurs"), "Thursday"),
    **dict.fromkeys(("Fri", "fri"), "Friday"),
    "Sat": "Saturday",
    "Sun": "Sunday",
    "Jan": "January",
    "Feb": "February",
    "Mar": "March",
    "Apr": "April",
    "Jun": "June",
    "Jul": "July",
    "Aug": "August",
    "Sep": "September",
    "Sept": "September",
    "Oct": "October",
    "Nov": "November",
    "Dec": "December",
}
_ABBREVIATION = re.compile(
    r"(?<![\w./])("
    + "|".join(sorted(map(re.escape, ABBREVIATIONS), key=len, reverse=True))
    + r")(?![\w/])(?!\.\w)"
)

# A street address's abbreviated kind after its name ("42 Elm St").
_STREET_KINDS = {"St": "Street", "Ave": "Avenue", "Rd": "Road", "Blvd": "Boulevard", "Ln": "Lane"}
_STREET = re.compile(r"(?<=\d )([A-Z][a-z]+(?: [A-Z][a-z]+)?) (St|Ave|Rd|Blvd|Ln)\b\.?")

# "gluten-free", "sugar-free": without it, as a restriction reads ("avoids gluten").
_FREE_OF = re.compile(r"(?i)\b([a-z]{3,})-free\b")
# Words before "free" that say something else than going without a thing.
_NOT_FREE_OF = frozenset({"hands", "hassle", "stress", "worry", "care", "fancy", "scot"})


def _free_of(match: re.Match[str]) -> str:
    thing = match.group(1)
    return match.group() if thing.casefold() in _NOT_FREE_OF else f"avoids {thing}"


# "X rather than Y", "X instead of Y": Y is what is not, as "not Y" says.
_RATHER_THAN = re.compile(r"(?i)\b(?:rather than|instead of)\b")
# "would rather X than Y": X is preferred, and Y is what is not, as "prefers to X not Y" says.
_WOULD_RATHER = re.compile(r"(?i)\bwould rather\b(?P<chosen>[^.;!?]*?)\bthan\b")

# --- dates -----------------------------------------------------------------------------

# A year shortened to its last two digits after an apostrophe ("a '18 Civic", "the '90s").
_SHORT_YEAR = re.compile(r"(?<![\w'\u2019])['\u2019](\d\d)(?=s?\b)(?!['\u2019])")


# A run of years with a dash, its end maybe shortened ("2015\u201318", "2016 - 2020"), as
# one form: "2015-2018"; not the year and month of a date ("2010-12-25").
_YEAR_RANGE = re.compile(
    r"(?<![\w.])((?:19|20)\d\d)\s?[\u2013\u2014-]\s?((?:19|20)?\d\d)(?![\w.:/]|-\d)"
)


def _year_range(match: re.Match[str]) -> str:
    start, end = match.groups()
    if len(end) == 2:
        end = start[:2] + end
    return f"{start}-{end}" if end > start else match.group()


def _short_year_of(two_digits: int) -> str:
    """The year a person means by its last two digits: the last century's past 40."""
    return f"{19 if two_digits > 40 else 20}{two_digits:02d}"


_MONTH_NAMES = [
    *("January", "February", "March", "April", "May", "June"),
    *("July", "August", "September", "October", "November", "December"),
]
# Each way a month is written beside a day → its number. A short name reads as the month
# only there ("22nd nov", "jan 5th"): alone, "mar" and "dec" may be other words.
_MONTH_NUMBERS = {
    **{name.casefold(): number for number, name in enumerate(_MONTH_NAMES, 1)},
    "sept": 9,
    **{name[:3].casefold(): number for number, name in enumerate(_MONTH_NAMES, 1)},
}
# Longest first: an alternation takes the first spelling that fits.
_MONTH = "|".join(sorted(_MONTH_NUMBERS, key=len, reverse=True))
# The ordinal words a day may still be written in once `_digits` has read the others as
# digits ("the fifteenth" → "15th").
_DAY_WORDS = {"first": 1, "second": 2, "third": 3}
_DAY = rf"(?P<day>\d{{1,2}}(?:st|nd|rd|th)?|{'|'.join(_DAY_WORDS)})"
_YEAR = r"(?:,?\s(?P<year>(?:19|20)\d\d)\b)?"
# "3 March", "the 3rd of March 2015", "March 3rd, 2015", "2015-03-03", "3/14/2015", and
# "3/14" after a word that brings a date ("on", "due", "appointment", a day of the week) or
# with a leading zero ("14/03"), so "1/2 cup" and "24/7" stay as written.
_DAY_MONTH = re.compile(rf"(?i)\b(?:the\s)?{_DAY}(?:\sof)?\s(?P<month>{_MONTH})\b{_YEAR}")
_MONTH_DAY = re.compile(rf"(?i)\b(?P<month>{_MONTH})\s(?:the\s)?{_DAY}\b(?![:.]?\d){_YEAR}")
_ISO_DATE = re.compile(r"(?<![\w/.-])((?:19|20)\d\d)-(\d{1,2})-(\d{1,2})(?![\w/-])")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_SLASH_DATE = re.compile(
    r"(?<![\w/.])(?:(?<=\bon )|(?<=\bby )|(?<=\bdue )|(?<=\buntil )|(?<=\bbefore )"
    r"|(?<=\bafter )|(?<=\bappointment )|(?<=\bdate )|(?<=\bis )|(?<=: )|(?<=\bstarting )"
    r"|(?<=\bfrom )|(?<=\bsince )|(?=0\d/\d\d|\d\d/0\d)|"
    + "|".join(f"(?<={day} )" for day in _WEEKDAYS)
    + r")(\d{1,2})/(\d{1,2})(?![\w/]|\.\d)"
    r"|(?<![\w/.])(?:(\d{1,2})/(\d{1,2})/((?:19|20)?\d\d)|(\d\d)\.(\d\d)\.((?:19|20)\d\d))"
    r"(?![\w/]|\.\d)"
)


# A quarter of the year by its number: "the third quarter" and "3rd quarter" are "Q3"
# ("fourth" is "4th" by then, as `_digits` writes every ordinal but the day words).
_QUARTER = re.compile(
    rf"(?i)\b(?:the\s)?([1-4](?:st|nd|rd|th)|{'|'.join(_DAY_WORDS)})\squarter\b(?!-)"
)

# A month and its year ("exp 03/2026", "since 9/2019"), as a card's or passport's expiry is.
_MONTH_YEAR = re.compile(r"(?<![\w/.])(\d{1,2})/((?:19|20)\d\d)(?![\w/]|\.\d)")


# A month by its name, short or long, before its year ("jan 2024", "Sept 2019"): beside a
# year a short name is the month too.
_NAMED_MONTH_YEAR = re.compile(rf"(?i)\b({_MONTH})\.?\s((?:19|20)\d\d)\b")


# A run of months ("Oct-Nov", "Apr - Sept"): short names are months beside one another too.
_MONTH_RANGE = re.compile(rf"(?i)\b({_MONTH})\.?\s?[\u2013\u2014-]\s?({_MONTH})\b")


def _month_named(written: str) -> str:
    return _MONTH_NAMES[_MONTH_NUMBERS[written.casefold()] - 1]


def _month_year(match: re.Match[str]) -> str:
    month = int(match.group(1))
    return f"{_MONTH_NAMES[month - 1]} {match.group(2)}" if 1 <= month <= 12 else match.group()


def _day_number(written: str) -> int:
    word = written.casefold()
    return int(word.rstrip("stndrh")) if word[:1].isdigit() else _DAY_WORDS[word]


def _date(month: int, day: int, year: str | None, written: str) -> str:
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return written
    return f"{_MONTH_NAMES[month - 1]} {day}{f' {year}' if year else ''}"


def _spelled_date(match: re.Match[str]) -> str:
    """A date whose month is written as its name, the day before or after it."""
    month = match["month"]
    if month == "may":
        return match.group()  # the verb, not the month
    return _date(
        _MONTH_NUMBERS[month.casefold()], _day_number(match["day"]), match["year"], match.group()
    )


def _iso_date(match: re.Match[str]) -> str:
    year, month, day = match.groups()
    return _date(int(month), int(day), year, match.group())


def _slash_date(match: re.Match[str]) -> str:
    """Month first, as in the US, unless the first number cannot be a month; a date written
    with dots is day first, as in Europe."""
    groups = match.groups()
    dotted = bool(groups[5])
    if groups[0]:
        first, second, year = int(groups[0]), int(groups[1]), None
    else:
        first, second, year = (
            (int(groups[5]), int(groups[6]), groups[7])
            if dotted
            else (int(groups[2]), int(groups[3]), groups[4])
        )
        if len(year) == 2:  # "3/14/85" is 1985, "3/14/24" 2024
            year = _short_year_of(int(year))
    month, day = (second, first) if dotted or first > 12 else (first, second)
    return _date(month, day, year, match.group())


# --- terse notes -----------------------------------------------------------------------

# Keys people shorten in a note → the word they stand for.
TERSE_KEYS = {
    "tz": "time zone",
    "timezone": "time zone",
    "fav": "favourite",
    "fave": "favourite",
    "lang": "language",
    "loc": "location",
    "dob": "date of birth",
    "addr": "address",
    "ph": "phone",
    "tel": "phone",
    "occ": "occupation",
    "bday": "birthday",
    "anniv": "anniversary",
}
# Keys that are a verb of the user's: "pref: X" says "the user prefers X".
TERSE_VERB_KEYS = {
    "pref": "prefers",
    "prefs": "prefers",
    "preference": "prefers",
    "preferences": "prefers",
    "prefers": "prefers",
    "likes": "likes",
    "dislikes": "dislikes",
    "loves": "loves",
    "hates": "hates",
    "uses": "uses",
    "allergy": "is allergic to",
    "allergies": "is allergic to",
    "allergic to": "is allergic to",
    "avoids": "avoids",
}
_TERSE_NOTE = re.compile(
    r"\s*(?:(?:the )?user(?:'s)?\s+)?([A-Za-z][A-Za-z']*(?: [A-Za-z][A-Za-z']*){0,2})"
    r"\s*(?::|=|\s[-\u2013\u2014]\s)\s*([^\s:=.!?;][^\n:=!?;]{0,80}?)\s*\.?\s*",
    re.IGNORECASE,
)
_SHORT_VALUE_WORDS = 6
# A key that negates is a statement, the dash after it a pause ("doesn't eat meat - not even
# fish"), not a note's "key - value".
_NEGATED_KEY = re.compile(r"(?i)n't\b|\b(?:not|never)\b")


def _terse(text: str) -> str:
    """The statement a one-line note abbreviates, or `text` when it is not one."""
    note = _TERSE_NOTE.fullmatch(text)
    if (
        note
        and len(note.group(2).split()) <= _SHORT_VALUE_WORDS
        and not _NEGATED_KEY.search(note.group(1))
    ):
        key, value = note.group(1).casefold(), note.group(2)
        if key in TERSE_VERB_KEYS:
            return f"The user {TERSE_VERB_KEYS[key]} {value}."
        # An acronym keeps its capitals, so it is written out as any other ("CI: ...").
        written = note.group(1) if note.group(1).isupper() else key
        return f"The user's {TERSE_KEYS.get(key, written)} is {value}."
    return text


# --- converse relations ----------------------------------------------------------------

# A spouse's parent or sibling is an in-law ("my wife's mum" is "my mother-in-law").
_IN_LAW = re.compile(
    r"(?i)\b(?:wife|husband|partner|spouse)'s (mum|mom|mother|dad|father|sister|brother)\b"
)
_IN_LAW_OF = {"mum": "mother", "mom": "mother", "dad": "father"}


def _in_law(match: re.Match[str]) -> str:
    relative = match[1].casefold()
    return f"{_IN_LAW_OF.get(relative, relative)}-in-law"


_CONVERSE = (
    (re.compile(r"(?i)\breports? to\b"), "is managed by"),
    (re.compile(r"(?i)\bworks? (?:for|under)\b"), "is managed by"),
)


def _rewrite(
    text: str, steps: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...]
) -> str:
    for pattern, replacement in steps:
        text = pattern.sub(replacement, text)
    return text


# Whether a group of rewrites can apply at all: one search instead of each of its patterns.
_ANY_PERSON = re.compile(
    r"\b(?:[Ii]|[Ii]m|[Ii]ve|[Mm]y|[Mm]e|[Mm]ine|[Mm]yself|[Ww]e|[Oo]urs?|[Uu]s)\b"
)
_ANY_PER = re.compile(r"(?i)/|\b(?:per|each|every|yrs?|aged|old)\b|\d\s?yo\b|ly\b")


# A typographer's apostrophe (U+2019, "doesn\u2019t"), and its opening twin, as a keyboard's.
_CURLY_APOSTROPHE = re.compile("[\u2018\u2019]")


def normalise(text: str) -> str:
    """`text` in one wording (this module's docstring says which)."""
    text = _CURLY_APOSTROPHE.sub("'", text)
    # Before a note's "key - value" is read: the dash of "Apr - Sept" joins two months.
    text = _MONTH_RANGE.sub(lambda m: f"{_month_named(m[1])} to {_month_named(m[2])}", text)
    text = _terse(text)
    if _ANY_PERSON.search(text):
        text = _rewrite(text, _PERSON)
        text = _rewrite(text, _AGREEMENT)
    text = _SCALED.sub(lambda m: _scaled(Decimal(m[1]), m[2]), text)
    text = _MONEY_IN_MILLIONS.sub(lambda m: _scaled(Decimal(m[1]), "million"), text)
    text = _SHARE_OF_A_SCALE.sub(lambda m: _scaled(_SHARES[m[1].casefold()], m[2]), text)
    text = _NUMBERED_ONE.sub(lambda m: f"{m.group(1)} 1", text)
    text = _ONE_MEASURED.sub("1", text)
    text = _NUMBER_RUN.sub(_digits, text)
    text = _AND_A_FRACTION.sub(_and_a_fraction, text)
    text = _HALF_A.sub(lambda m: f"0.5 {m.group(1)}", text)
    text = _QUARTERS_OF.sub(_quarters_of, text)
    text = _PERCENT.sub(r"\1%", text)
    text = _TIMES_WORD.sub(lambda m: _TIMES_WORDS[m.group(1).casefold()], text)
    text = _HALF.sub(_half_past, text)
    text = _HOUR_RANGE.sub(_hour_range, text)
    text = _CLOCK.sub(_o_clock, text)
    text = _DAYPART.sub(_daypart, text)
    text = _NOON.sub(_noon, text)
    text = _ONE_DIGIT_HOUR.sub(r"0\1:\2", text)
    text = _DASH_BETWEEN_CLOCKS.sub("-", text)
    text = _THOUSANDS_K.sub(_thousands_k, text)
    text = _BLOOD.sub(_blood, text)
    text = _MONEY_AFTER.sub(_money_after, text)
    text = _MONEY_BEFORE.sub(_money_before, text)
    if _ANY_PER.search(text):
        text = _rewrite(text, _PER)
    text = _TIMES_X.sub(r"\1 times", text)
    text = _FEET_INCHES.sub(_feet_inches, text)
    text = _POUNDS_OUNCES.sub(_pounds_ounces, text)
    text = _HOURS_MINUTES.sub(lambda m: f"{int(m[1]) * 60 + int(m[2])} minutes", text)
    text = _OVER.sub(r"\1/\2", text)
    text = _DEGREES.sub(lambda m: _DEGREE_SCALES[m.group(1).casefold()], text)
    text = _FAHRENHEIT.sub(_in_celsius, text)
    text = _QUANTITY.sub(_quantity, text)
    # After every rewrite above that gives digits ("forty-five", "10k"), so that a number
    # they leave beside another is read as a phone number at once, not in a second reading.
    text = _NUMBER_SIGN.sub("number ", text)
    text = _PHONE.sub(_phone, text)
    text = _FREE_OF.sub(_free_of, text)
    text = _STREET.sub(lambda m: f"{m.group(1)} {_STREET_KINDS[m.group(2)]}", text)
    text = _ABBREVIATION.sub(lambda m: ABBREVIATIONS[m.group(1)], text)
    text = _VERSION.sub(r"\1", text)
    text = _WOULD_RATHER.sub(lambda m: f"prefers to{m.group('chosen')}not", text)
    text = _RATHER_THAN.sub("not", text)
    text = _YEAR_RANGE.sub(_year_range, text)
    text = _SHORT_YEAR.sub(lambda m: _short_year_of(int(m.group(1))), text)
    text = _ISO_DATE.sub(_iso_date, text)
    text = _SLASH_DATE.sub(_slash_date, text)
    text = _MONTH_YEAR.sub(_month_year, text)
    text = _NAMED_MONTH_YEAR.sub(lambda m: f"{_month_named(m[1])} {m[2]}", text)
    text = _DAY_MONTH.sub(_spelled_date, text)
    text = _MONTH_DAY.sub(_spelled_date, text)
    text = _QUARTER.sub(lambda m: f"Q{_day_number(m.group(1))}", text)
    text = _rewrite(text, _CONVERSE)
    text = _IN_LAW.sub(_in_law, text)
    # Last, so an opening written out above ("WFH" → "works from home") is read too.
    return _opening_subject(text)
