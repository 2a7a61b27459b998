"""Whether two memories say the same thing, say different things about one subject, or neither.

The rule, applied to a pair of texts (no model, no network). The embeddings' similarity of
the pair, when known, is the evidence of meaning; the texts' structure decides the kind and
vetoes:

1. Each text is read as its content words, once `stores.editing.wording` has put it in one
   wording: lower-cased, punctuation and stopwords dropped, word endings cut ("lives",
   "lived", "living" are one word), and a small table of words that mean the same for a
   memory ("resides", "is based" → "lives"; "job" → "works") mapped to one. A negation
   ("not", "never", "n't", "dislikes") is counted, not kept; one right before a restriction
   lifts it ("no food allergies" may have anything), and an aversion ("hates", "dislikes")
   restricts as "avoids" does. Values are told by their form: a number (with its unit), a
   date or time ("at 8" is the other's "20:00" where it may be; a year, "mid-July"; one part
   given differently, its year, month, weekday or part of the day, tells two dates apart
   whatever others they share), an email address, a colour,
   a name (a capitalised word, or words ending on a number such as "eu-west-1"; an
   abbreviation matches the capitals of the name it shortens).
2. **Duplicate** when the two carry the same content words (exact, or differing in case,
   punctuation, word order, word endings, stopwords or table synonyms), or when one says all
   the other says and adds at most as much again, naming nobody else ("the user has
   a dog" / "the user has a dog named Rex"). Where the words differ throughout, a pair the
   embeddings find alike past `Thresholds.same` is a duplicate when nothing tells the two
   apart: no value of one kind given differently, no negation on one side only, one
   subject, no time words on one side only, and not one sentence with one part swapped
   (past `Thresholds.reworded` a phrase swapped inside for one of another length is a
   rewording: "is training for" / "is preparing to run").
3. **Conflict** when, about one subject, they differ in one place and what differs there is
   a value on both sides, of one kind (or, in any order, values of one kind are all that
   tell them apart, one saying at most as much again: "kids: 2" / "The user has three
   children"; or numbers of one thing, whatever else is said: "two children" / "three kids,
   all under ten, so ..."); a number or date may differ anywhere, a name only last, where a
   sentence puts its value, or as the value of an owned attribute ("The user's best friend is
   Kemi"). Or when one negates what the other says ("eats meat" / "does not eat meat",
   "likes" / "dislikes", "enabled" / "disabled"; a text negates when one of its clauses does:
   "won't eat olives; can't stand them"). A single last word swapped for another after the
   same preposition, under a verb that holds one value ("works as a teacher" / "works as a
   nurse"), is a conflict too. Past the thresholds of meaning, a negation in other words
   ("never eats breakfast" / "has porridge every morning") and a value of one kind given
   differently in reworded text ("hosting 8 people" / "expects 12 guests") are conflicts. So
   is a pair each of which takes the other end of one scale ("left-handed" / "right-handed",
   "dark" / "light" theme) and which, read with one word moved to the other's end, would be
   a duplicate; two ends of a scale are never a duplicate.
4. **Nothing** (alike but compatible) when what differs names a different person, relative
   or animal ("the user's aunt" / "the user's uncle", "the user's son is allergic" / "I'm
   not allergic"): the texts are about different subjects, unless one speaks of their whole
   kind ("no siblings" / "her brother"); when the verb gathers values rather than replacing
   them ("likes tea" / "likes coffee", "visited Rome" / "visited Oslo"); when a differing
   name opens the text, before anything shared, or inside the text rather than last (it is
   the subject: "Alice lives in Paris" / "Bob lives in Paris", "Project Atlas uses Django" /
   "Project Hermes uses Django"); when a value changed beside other words ("tea in the
   morning" / "wine in the evening"); when the numbers that differ measure different things
   ("two kids" / "three grandchildren", "35 min" / "the 25 bus"); when their time words
   differ ("used to" / "now", "last year" / "this year", "growing up"); when they differ in
   more than one place; and when they share too little (a number or date needs one shared
   content word beside it, anything else two).

Work is bounded by the texts' lengths: each text is read once, then compared as sets and one
token alignment (difflib, over content words only).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from enum import StrEnum
from functools import cached_property
from itertools import pairwise

from stores.editing.wording import FULL_YEAR, UNITS, normalise
from stores.editing.words import ENGLISH_STOPWORDS

# An email address, a word, a number with its separators (3:30, 2024-05-01, 4.5, 1,200) or
# a word with a hyphen kept whole; apostrophes split ("user's" → "user", "s").
_TOKEN = re.compile(
    r"[^\W_]+(?:[.+-][^\W_]+)*@[^\W_]+(?:[.-][^\W_]+)+|[^\W_]+(?:[:./,-][^\W_]+)*", re.UNICODE
)
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
# "can't", "doesn't", and as typed in a hurry, "cant", "doesnt".
_NOT_CONTRACTION = re.compile(
    r"(?i)\b(can|won|shan)'?t\b|n't\b|\b(do|does|did|is|are|was|were|has|have|had)nt\b"
)
# Only a text's first characters are compared: a memory's subject and values are there, and
# a long text must not make a pass slow.
MAX_COMPARED_CHARS = 2000

# Recall's stopwords, but for the words a negation or an owner is made of, and with the
# fillers memories are written with.
STOPWORDS = (ENGLISH_STOPWORDS - {"no", "nor", "not", "own"}) | frozenset(
    {"also", "currently", "still", "usually", "really", "actually", "would", "could"}
    | {"might", "must", "shall"}
)

_ARTICLES = frozenset({"a", "an", "the"})
# "stopped" and "quit" say a thing holds no longer: "quit smoking" negates "smokes". So does
# "gave up", read as "quit".
_GIVING_UP = re.compile(r"(?i)\b(?:gave|give|gives|given|giving) up\b")
NEGATORS = frozenset(
    {"not", "no", "never", "nobody", "nothing", "neither", "nor", "none", "cannot"}
    | {"stopped", "quit"}
)
# What ends a clause: punctuation between two words (a dash with a space each side among
# it), or a word joining two clauses.
_CLAUSE_BREAK = re.compile(r"[,;:.!?()\u2013\u2014]|\s-\s")
_CLAUSE_WORDS = frozenset({"and", "but", "or", "nor", "so", "because", "while", "whereas"})
# "no longer" and "not anymore" negate once, whatever the second word says.
_NEGATION_FILLER = frozenset({"longer", "anymore", "any", "known"})

# Words that mean the same in a memory, by their cut form → one canonical form.
_SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("liv", "resid", "bas", "hom", "locat"),
    ("lik", "enjoy", "lov", "fond", "fan", "keen"),
    ("prefer", "favourit", "favorit", "best"),
    ("work", "employ", "employer", "job"),
    ("nam", "call"),
    ("born", "birth", "birthday", "birthplac"),
    ("cost", "pay", "price", "charg", "fee"),
    ("earn", "salary", "income", "wage"),
    ("main", "primary", "principal"),
    ("marri", "husband", "wif", "spous", "partner"),
    ("manag", "manager", "boss", "supervis"),
    ("child", "children", "kid"),
    ("mother", "mom", "mum", "mam"),
    ("father", "dad"),
    ("grandmother", "grandma", "gran", "granny", "nan", "nana"),
    ("grandfather", "grandpa", "grandad", "granddad", "gramp"),
    ("car", "vehicl", "auto"),
    ("apartment", "flat"),
    ("start", "begin", "began", "commenc"),
    ("end", "finish", "stop"),
    ("buy", "purchas", "bought"),
    ("speak", "talk"),
    ("allerg", "allergy", "allergic"),
    ("want", "wish"),
    ("need", "requir"),
    ("hat", "detest"),
    ("use", "used", "utiliz", "utilis", "rely", "reli"),
    ("colour", "color"),
    ("mod", "them"),
    ("phon", "telephon", "mobil", "cell"),
    ("email", "mail"),
    ("doctor", "physician"),
    ("movi", "film"),
    # The ordinals the wording leaves as words, as their digits: "the first" is "the 1st".
    ("1st", "first"),
    ("2nd", "second"),
    ("3rd", "third"),
)
SYNONYMS: dict[str, str] = {word: group[0] for group in _SYNONYM_GROUPS for word in group}

# Irregular forms the endings rule cannot reach, to the form it makes of the plain verb.
IRREGULAR = {
    "ran": "run",
    "went": "go",
    "gone": "go",
    "ate": "eat",
    "eaten": "eat",
    "drank": "drink",
    "spoke": "speak",
    "wrote": "writ",
    "written": "writ",
    "met": "meet",
    "made": "mak",
    "took": "tak",
    "left": "leav",
    "got": "get",
    "saw": "see",
    "seen": "see",
    "sent": "send",
    "taught": "teach",
    "thought": "think",
    "felt": "feel",
    "kept": "keep",
    "grew": "grow",
    "knew": "know",
    "flew": "fly",
    "drove": "driv",
    "paid": "pay",
    "sold": "sell",
    "told": "tell",
    "moved": "mov",
}

# A negation conflicts only when the two share this many content words at least, and this
# share of all their words; one text saying all the other says and more is a duplicate
# sharing as many at least.
MIN_SHARED = 2
NEGATION_SHARE = 0.6
# Texts differing in one place: at most this many words on either side of it, and at most
# this many words said by one side only elsewhere.
MAX_CHANGED_WORDS = 3
MAX_LOOSE_WORDS = 1

# A prefix that turns a word into its opposite, when the rest is a word of the other text.
_OPPOSITE_PREFIXES = ("dis", "un", "non", "in")
# Opposites no prefix makes, by canonical form: the first negates the second.
OPPOSITES = {
    "disabl": "enabl",
    "forbid": "allow",
    "reject": "accept",
    "exclud": "includ",
    "hat": "lik",
    "fals": "tru",
    "off": "on",
    "singl": "marri",
}

# The two ends of one scale, by canonical form: of one thing, a word of one end and a word
# of the other cannot both hold ("prefers dark mode" / "prefers the light theme", "left-handed"
# / "right-handed"), while two words of one end say the same ("brief" / "concise"). Only
# scales whose ends exclude each other whatever the thing is ("hot" and "cold" coffee may
# both be liked; a verb that gathers, as "likes", is never read so).
_SCALES_TEXT = (
    (
        "short brief concis succinct ters short-haul",
        "long detail lengthy verbos thorough in-depth long-haul",
    ),
    ("dark", "light"),
    ("left-handed lefty", "right-handed righty"),
    ("junior", "senior"),
    ("celsiu centigrad", "fahrenheit"),
    ("metric", "imperial"),
    ("introvert", "extrovert extravert"),
    ("formal", "casual"),
    ("aisl", "window"),
    ("tab", "spac"),
    ("full-tim", "part-tim"),
    ("public", "privat"),
    ("spicy", "mild bland"),
    ("north northern north-facing", "south southern south-facing"),
    ("singl", "doubl"),
    ("shar", "separat isolat dedicat"),
    ("weekday weeknight", "weekend"),
    ("production", "stag development"),
    ("personal", "work business"),
    ("mob", "landlin"),  # "mobile" reads as "phone"
)
# A scale's word → (the scale's number, its end).
SCALE_ENDS: dict[str, tuple[int, int]] = {
    word: (number, end)
    for number, ends in enumerate(_SCALES_TEXT)
    for end, words in enumerate(ends)
    for word in words.split()
}

# Words that say a thing is kept away from (by their cut form's start).
RESTRICTIONS = (
    "avoid",
    "allerg",
    "intoler",
    "abstain",
    "refrain",
    "refus",
    "forbid",
    "prohibit",
    "off-limit",
)
# Words of aversion, and a ban, as written ("hat" is also a hat, "ban" the start of a bank):
# "hates being called 'buddy'" and "don't call the user 'buddy'" say one thing.
AVERSIONS = ("hate", "hating", "detest", "dislik", "loath", "banned")
# How many content words may stand between a negation and the restriction it lifts ("no
# food allergies"; "does not eat peanuts: an allergy" restricts).
_NEGATED_RESTRICTION_REACH = 1
# Time words that set a statement at another time than now: in the past, or planned ("the
# next visit", not "in the next two years", which runs from now), or an age of life ("in
# his twenties"). An age, "until", a school or a start do so only after a verb in the past
# ("was 170 cm at age 14", "was 500 mg until March", "was close to Tom in school", "was an
# analyst when she joined"): "a peanut allergy (anaphylaxis at age 3)" and "the lease runs
# until May" say what holds now.
_ANOTHER_TIME = re.compile(
    r"\b(?:used to|previously|formerly|former|prior(?! to)|in the past|back in|growing up"
    r"|as a (?:child|kid|teenager|teen)|when the user was (?:young|younger|little|small|a kid)"
    r"|(?:before|until|till) (?:19|20)\d\d|years ago|(?:until|till) last"
    r"|(?<!the )last (?:year|month|week|spring|summer|autumn|fall|winter)"
    r"|(?:was|were)\b[^;!?]{0,40}\b(?:at (?:the )?age (?:of )?\d+|until|till"
    r"|in (?:high )?(?:school|college|university)|when (?:i|he|she|they|we|the user) \w+ed)"
    r"|in (?:his|her|their|the user s) (?:teens|twenties|thirties|forties|fifties|sixties)"
    r"|before (?:i|he|she|they|we|it|the user) (?:was|were)"
    r"|plans? to|planning to|intends? to|planned for|upcoming"
    r"|next(?! (?:to|door|\d+|two|three|four|five|six|few|several|couple)\b))\b"
)
# Time words that set it now, against another time.
_PRESENT = re.compile(
    r"\b(?:now|currently|nowadays|these days|since|as of|at the moment"
    r"|this (?:year|month|week))\b"
)

# Words that say a text tells one more fact beside another ("I also take vitamin D", "has an
# egg allergy too"): not the other said again, nor the other changed.
_ADDS_TO_ANOTHER = re.compile(r"\b(?:also|as well|on top of|in addition to)\b|\btoo$")

# Words that say a thing is so now, and so may not have been: said by one text only, the two
# are not one fact said twice.
_NOW = re.compile(r"\b(?:now|nowadays|these days|any ?more|no longer)\b")

# People, relatives and animals: a text about one is not about another.
_ENTITY_NOUNS_TEXT = """
    mother father sister brother sibl aunt uncl cousin son daughter wif husband spous
    grandmother grandfather grandma grandpa grandson granddaughter niec nephew friend boyfriend
    girlfriend partner boss colleagu coworker manager neighbor neighbour roommat parent
    child baby cat dog bird fish hamster rabbit hors parrot pet team marri manag grandchild
    grandchildren grandkid
    """
ENTITY_NOUNS = frozenset(_ENTITY_NOUNS_TEXT.split())
# The word a memory's owner reads as once `stores.editing.wording` has written "I", "they",
# "Customer" and the like as "the user".
_OWNER = "user"
# Words of age, size or standing a relative is named with ("little brother", "eldest
# daughter", "best friend": "best" reads as "prefer", as "favourite" does).
_RELATIVE_MODIFIERS = frozenset(
    {
        "littl",
        "big",
        "older",
        "oldest",
        "younger",
        "youngest",
        "elder",
        "eldest",
        "baby",
        "twin",
        "prefer",
    }
)
# Those that name a kind the others belong to: "no pets" speaks of the parrot too.
_MEMBERS_OF_KIND = {
    "pet": frozenset({"cat", "dog", "bird", "fish", "hamster", "rabbit", "hors", "parrot"}),
    "sibl": frozenset({"sister", "brother"}),
    "parent": frozenset({"mother", "father"}),
    "child": frozenset({"son", "daughter", "baby"}),
}
_KINDS_OF_OTHERS = frozenset(_MEMBERS_OF_KIND)

# Verbs under which a new value adds to the old rather than replacing it.
_GATHERING_TEXT = """
    lik visit travel speak know play read watch collect own friend eat ate drink tri listen
    learn study studi attend follow support allerg avoid
    """
GATHERING = frozenset(_GATHERING_TEXT.split())

_MONTHS = "january february march april may june july august september october november december"
_DAYS = "monday tuesday wednesday thursday friday saturday sunday"
_TIMES = "today tomorrow yesterday morning afternoon evening night noon midnight am pm weekend"
_NUMBERS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy "
    "eighty ninety hundred thousand million first second third fourth fifth half dozen"
)
_COLOURS = "red blue green yellow black white grey gray purple orange pink brown silver gold"
_SEASONS = "spring summer autumn fall winter"


class ValueKind(StrEnum):
    NUMBER = "number"
    DATE = "date"
    NAME = "name"
    COLOUR = "colour"
    EMAIL = "email address"
    FREQUENCY = "frequency"


VALUE_WORDS: dict[str, ValueKind] = {
    **dict.fromkeys(f"{_MONTHS} {_DAYS} {_TIMES} {_SEASONS}".split(), ValueKind.DATE),
    **dict.fromkeys(_NUMBERS.split(), ValueKind.NUMBER),
    **dict.fromkeys(_COLOURS.split(), ValueKind.COLOUR),
}


class Kind(StrEnum):
    DUPLICATE = "duplicate"
    CONFLICT = "conflict"


@dataclass(frozen=True)
class Likeness:
    """What the rule found of a pair: its kind, a score in 0..1, and a reason in one line."""

    kind: Kind
    score: float
    reason: str
    # False where the embeddings' meaning decided it, not the words: a model judge, when
    # one is set, is asked about such a pair.
    sure: bool = True
    # True where the pair model read its kind from the two embeddings (the words only say
    # what shows for it).
    by_model: bool = False


@dataclass(frozen=True)
class Word:
    """A content word: its canonical form, as written, and the value it carries if any."""

    canon: str
    written: str
    value: ValueKind | None
    # The function words just before it, articles left out ("as" in "works as a teacher").
    lead: str = ""
    # What a number counts, where the text says: its currency, "%" or its unit.
    measure: str = ""


@dataclass(frozen=True)
class Reading:
    """A text as the rule reads it: its content words in order and how often it negates."""

    words: tuple[Word, ...]
    negations: int
    normalised: str
    # Says a thing is avoided or cannot be had ("allergic to", "avoids"): a restriction
    # reads as a negation of having it, and two restrictions of one thing agree.
    restricted: bool = False
    # Its time words, of another time than now ("used to", "before 2020", "plans to") and of
    # now ("now", "since"): a pair one of which speaks of another time can both be true,
    # while "now" beside no time word says the same fact changed. A text that tells another
    # time beside now ("moved last month and lives there now", "quit years ago, none since")
    # speaks of now: the other time is when it changed.
    when: tuple[bool, bool] = (False, False)

    @property
    def negative(self) -> bool:
        return self.negations % 2 == 1 or self.restricted

    @cached_property
    def canon(self) -> frozenset[str]:
        return frozenset(word.canon for word in self.words)

    @cached_property
    def stems(self) -> frozenset[str]:
        """The plain word of each content word that may be an opposite ("dislik" → "lik"):
        `_opposites` reads one as a negation only when its plain word is in either text."""
        plain = {OPPOSITES[word] for word in self.canon if word in OPPOSITES}
        plain |= {
            word[len(prefix) :]
            for word in self.canon
            for prefix in _OPPOSITE_PREFIXES
            if word.startswith(prefix)
        }
        return frozenset(plain)

    @cached_property
    def frequencies(self) -> frozenset[str]:
        """The periods it says a thing happens once in ("a month", "2 times a day")."""
        return frozenset(_HOW_OFTEN.findall(self.normalised))

    @cached_property
    def numbers(self) -> dict[str, frozenset[str]]:
        """Its numbers by what each counts ("" where the text does not say), read once however
        often a pass compares it."""
        measures: dict[str, set[str]] = {}
        for word in self.words:
            if word.value is ValueKind.NUMBER:
                measures.setdefault(word.measure, set()).add(word.canon)
        return {measure: frozenset(canons) for measure, canons in measures.items()}

    @cached_property
    def reachable(self) -> frozenset[str]:
        """Every word it can share with another text once `_opposites` has read them."""
        return self.canon | self.stems


def cut(word: str) -> str:
    """A word without its common English endings, so its forms compare equal."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if len(word) >= 7 and word.endswith("ic"):
        return word[:-2]  # "diabetic" / "diabetes", "athletic" / "athlete"
    plural = False
    for ending in ("ing", "ed", "ly", "es", "s"):
        if word.endswith(ending) and not word.endswith("ss") and len(word) - len(ending) >= 3:
            word = word[: -len(ending)]
            plural = ending in ("es", "s")
            break
    # A plural of a word with its own ending ("mornings", "meetings"): as its singular cuts.
    if plural and word.endswith("ing") and len(word) >= 6:
        word = word[:-3]
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


# Words joined by hyphens ending on a number: a region, a model, a release.
_IDENTIFIER = re.compile(r"[a-z]+(?:-[a-z]+)*-\d+(?:\.\d+)*[a-z]?")


# The units a quantity is read in, as `read` gives their words.
_UNIT_WORDS = frozenset(cut(unit) for unit in UNITS)
# Words a number after them labels rather than counts or dates ("port 2022", "room 1984").
_NUMBERING_WORDS = frozenset(
    cut(word)
    for word in (
        *("port", "room", "number", "extension", "ext", "flat", "unit", "pin"),
        *("incident", "ticket", "case", "order", "invoice", "issue", "flight", "bus", "route"),
        *("gate", "platform", "policy", "claim", "ref"),
    )
)
# A person's title, written with its full stop.
_TITLES = frozenset({"mr", "mrs", "ms", "dr", "prof"})
# How often a thing happens, as `stores.editing.wording` writes it ("monthly", "/mo" and
# "every month" are "a month"): not "for a month", "in a year" or "a year ago".
_HOW_OFTEN = re.compile(
    r"(?<!for )(?<!in )(?<!within )(?<!after )(?<!over )(?<!than )"
    r"\b(?:a|an|per|every|each) (day|week|month|quarter|year)\b(?! ago| old| or)"
)
# "named" and "called", as `read` gives them.
_NAMED = "nam"
# The parts a date is told by, as `read` gives their words, one or many ("Mondays"); a
# year is told by its form.
_DATE_PARTS = {
    SYNONYMS.get(cut(form), cut(form)): part
    for part, words in (
        ("month", _MONTHS),
        ("weekday", _DAYS),
        ("daypart", "morning afternoon evening night"),
        ("season", _SEASONS),
    )
    for word in words.split()
    for form in (word, f"{word}s")
}


def value_of(written: str, *, opens_sentence: bool) -> ValueKind | None:
    lower = written.casefold()
    if "@" in written:
        return ValueKind.EMAIL
    if FULL_YEAR.fullmatch(written):
        return ValueKind.DATE  # "2018": a year is a date, not a count
    # A letter is never a digit: most words are all letters, and need no look at each. A
    # number comes with at most a unit or an ordinal ("50mg", "10k", "5th", "3:45"); a word
    # that merely holds a digit ("2-factor", "k8s-cluster") is not one.
    if (
        not written.isalpha()
        and any(character.isdigit() for character in written)
        and sum(character.isalpha() for character in written) <= 3
    ):
        return ValueKind.NUMBER
    for form in (lower, lower.removesuffix("s"), lower.rpartition("-")[2]):
        if form in VALUE_WORDS:
            return VALUE_WORDS[form]  # "mid-July" is a date as "July" is
    if _IDENTIFIER.fullmatch(lower):
        return ValueKind.NAME  # "eu-west-1", "gpt-4", "ubuntu-22.04": a thing's name
    if written[:1].isupper() and not opens_sentence and lower not in STOPWORDS:
        return ValueKind.NAME
    if not written.isupper() and any(character.isupper() for character in written[1:]):
        return ValueKind.NAME  # a capital inside a word names a thing: iPhone, 1Password
    if written[:1].isupper() and opens_sentence and written[1:2].isupper():
        return ValueKind.NAME  # an acronym opening a sentence is still a name
    return None


def read(text: str) -> Reading:
    """The content words of `text` (its first MAX_COMPARED_CHARS characters), once
    `stores.editing.wording` has put it in one wording."""
    text = normalise(text[:MAX_COMPARED_CHARS])
    text = _NOT_CONTRACTION.sub(lambda m: f"{m.group(1) or m.group(2) or ''} not", text)
    text = _GIVING_UP.sub("quit", text)
    words: list[Word] = []
    # Negations are counted clause by clause: two in one clause cancel ("not unlike"), one in
    # each of two ("won't eat olives; can't stand them") still negates.
    negations = 0
    negative_clause = False
    clause_from = 0
    opens_sentence = True
    previous_negator = False
    lead: list[str] = []
    # Where the last negation stood, counted in content words: a restriction right after
    # one is what it negates ("has no food allergies", "is not allergic"), so the text
    # says the thing may be had.
    negated_at: int | None = None
    lifted = False
    for match in _TOKEN.finditer(text):
        written = match.group()
        lower = written.casefold()
        if lower in _CLAUSE_WORDS or _CLAUSE_BREAK.search(text, clause_from, match.start()):
            negative_clause = negative_clause or negations % 2 == 1
            negations = 0
        clause_from = match.end()
        starts = opens_sentence
        end = match.end()
        opens_sentence = (
            end < len(text)
            and text[end : end + 2].strip()[:1] in {".", "!", "?"}
            and lower not in _TITLES  # "Mr. Osei": the name after it opens no sentence
        )
        if lower in NEGATORS:
            negations += 1
            previous_negator = True
            negated_at = len(words)
            continue
        if previous_negator and lower in _NEGATION_FILLER:
            continue
        previous_negator = False
        if lower in STOPWORDS:
            if lower not in _ARTICLES:
                lead.append(lower)
            continue
        canon = IRREGULAR.get(lower) or cut(lower)
        if _THOUSANDS.fullmatch(canon):
            canon = canon.replace(",", "")  # "10,000" and "10000" are one number
        value = value_of(written, opens_sentence=starts)
        if not (len(written) > 1 and written.isupper()):  # "MAM" is an acronym, not "mam"
            canon = SYNONYMS.get(canon, canon)
        if (
            canon.startswith(RESTRICTIONS)
            and negated_at is not None
            and len(words) - negated_at <= _NEGATED_RESTRICTION_REACH
        ):
            negations -= 1
            negated_at = None
            lifted = True
        words.append(Word(canon, written, value, " ".join(lead), _measure_beside(text, match)))
        lead = []
    negations = int(negative_clause or negations % 2 == 1)
    words = _values_by_their_neighbours(words)
    normalised = " ".join(token.casefold() for token in _TOKEN.findall(text))
    restricted = not lifted and any(
        word.canon.startswith(RESTRICTIONS) or word.written.casefold().startswith(AVERSIONS)
        for word in words
    )
    present = bool(_PRESENT.search(normalised))
    when = (bool(_ANOTHER_TIME.search(normalised)) and not present, present)
    return Reading(tuple(words), negations, normalised, restricted, when)


# What a number counts, where the text says: the currency sign before it, "%" after it, or
# the word right after it when that is a unit.
_CURRENCY_SIGNS = frozenset("£$€¥₹")
_UNIT_AFTER = re.compile(r"[\s-]?([^\W\d_]+)")
# Units of one measure, whose numbers `wording` leaves unconverted: a dose in mg and a weight
# in kg are both a mass, "a 12-month term" and "a three-year agreement" both a length of
# time. Numbers in two such units may count one thing, but are never one amount.
_MEASURE_OF = {"mg": "kg", "day": "year", "month": "year", "minut": "year"}
# The units a number counts in: those `wording` converts, and those it leaves as written
# (a temperature, a heart rate, a speed, energy, a blood test's units).
_MEASURE_WORDS = _UNIT_WORDS | frozenset(
    cut(unit) for unit in ("celsius", "bpm", "mph", "rpm", "kcal", "calories", "mmhg", "mmol")
)


def _measure_beside(text: str, token: re.Match[str]) -> str:
    """What a number counts, as the text beside it says: the currency sign before it, "%"
    or the unit right after it ("25 years", not "110k a year": that is how often)."""
    if not token.group()[:1].isdigit():
        return ""
    before = text[token.start() - 1 : token.start()]
    if before in _CURRENCY_SIGNS:
        return before
    if text[token.end() : token.end() + 1] == "%":
        return "%"
    after = _UNIT_AFTER.match(text, token.end())
    unit = cut(after.group(1).casefold()) if after else ""
    return unit if unit in _MEASURE_WORDS else ""


def _values_by_their_neighbours(words: list[Word]) -> list[Word]:
    """`words` with the values only their neighbours tell: a year's shape before a unit or
    after a word that numbers things is a number ("2000 metres", "port 2022"), and a word
    after "called" or "named" is a name however it is written ("a cat called mochi")."""
    for at, word in enumerate(words):
        before = words[at - 1].canon if at else ""
        after = words[at + 1].canon if at + 1 < len(words) else ""
        if word.value is ValueKind.DATE and FULL_YEAR.fullmatch(word.canon):
            if after in _UNIT_WORDS or before in _NUMBERING_WORDS:
                words[at] = replace(word, value=ValueKind.NUMBER)
        elif word.value is None and before == _NAMED and word.written.isalpha():
            words[at] = replace(word, value=ValueKind.NAME)
    return words


def _opposites(first: Reading, second: Reading) -> tuple[Reading, Reading, int]:
    """Both readings with a prefixed opposite ("dislikes" beside "likes") read as a negation
    of the plain word; the third value counts the opposites found."""
    plain = first.canon | second.canon
    if plain.isdisjoint(first.stems) and plain.isdisjoint(second.stems):
        return first, second, 0  # no word of either has its plain word in them
    found = 0

    def unprefixed(reading: Reading) -> Reading:
        nonlocal found
        words = []
        negations = reading.negations
        for word in reading.words:
            stem = OPPOSITES.get(word.canon) if OPPOSITES.get(word.canon) in plain else None
            stem = stem or next(
                (
                    word.canon[len(prefix) :]
                    for prefix in _OPPOSITE_PREFIXES
                    if word.canon.startswith(prefix) and word.canon[len(prefix) :] in plain
                ),
                None,
            )
            if stem is None:
                words.append(word)
                continue
            found += 1
            negations += 1
            words.append(replace(word, canon=SYNONYMS.get(stem, stem)))
        return replace(reading, words=tuple(words), negations=negations)

    return unprefixed(first), unprefixed(second), found


def _quote(words: Iterable[Word]) -> str:
    return " ".join(word.written for word in words)


def _shared_share(first: Reading, second: Reading) -> float:
    union = first.canon | second.canon
    return len(first.canon & second.canon) / len(union) if union else 1.0


def may_be_alike(first: Reading, second: Reading) -> bool:
    """False only when `compare` of the two texts is None for certain, told from their word
    sets and counts alone (no alignment): the pass asks this first, and the full rule only of
    the pairs it lets through.

    Every kind the rule finds needs a word the two share once opposites are read as
    negations. Where no opposite is read the readings are what the rule compares, and its
    bounds apply as they are: a negation shares MIN_SHARED words and NEGATION_SHARE of them;
    otherwise one side says nothing the other does not (alike, or one saying more), or each
    says at most MAX_CHANGED_WORDS + MAX_LOOSE_WORDS words the other does not (one place
    differing, and a loose word).
    """
    if first.normalised == second.normalised:
        return True
    if not first.words or not second.words or first.reachable.isdisjoint(second.reachable):
        return False
    plain = first.canon | second.canon
    if not (plain.isdisjoint(first.stems) and plain.isdisjoint(second.stems)):
        return True  # an opposite may be read as a negation: the rule sees to it
    shared = first.canon & second.canon
    if not shared:
        return False
    if first.negations % 2 != second.negations % 2:
        return len(shared) >= MIN_SHARED and _shared_share(first, second) >= NEGATION_SHARE
    only_first = sum(word.canon not in shared for word in first.words)
    only_second = sum(word.canon not in shared for word in second.words)
    return (
        min(only_first, only_second) == 0
        or max(only_first, only_second) <= MAX_CHANGED_WORDS + MAX_LOOSE_WORDS
    )


@dataclass(frozen=True)
class Thresholds:
    """How alike two texts' embeddings must be (their cosine, per embedding model: settings
    SUGGESTIONS) before the rule trusts meaning where the words differ."""

    # A pair one of which negates, where the two share no word but their subject ("never
    # eats breakfast" / "has porridge every morning").
    negation: float = 1.0
    # A pair whose values of one kind differ with other words around them ("costs $15.99 a
    # month" / "pays $22.99 monthly").
    value: float = 1.0
    # The same, where a word or two changed on both sides as well ("Tom's email is a@x.org" /
    # "Tom can be reached at b@y.org").
    reworded: float = 1.0
    # A pair reworded throughout, with nothing to tell them apart (no value of one kind
    # differing, no negation on one side only, one subject, no time words on one side only):
    # past this the two say the same thing ("User is learning Japanese on Duolingo" / "The
    # user studies Japanese with Duolingo").
    same: float = 1.0


def compare(
    first_text: str,
    second_text: str,
    similarity: float | None = None,
    readings: tuple[Reading, Reading] | None = None,
    thresholds: Thresholds | None = None,
) -> Likeness | None:
    """The kind of the pair under the rule of this module, or None when it is fine as it is.

    `similarity` (0..1, the embeddings' cosine) is reported as a paraphrase's score, and,
    past `thresholds`, lets a negation or a changed value count where the words around it
    differ. `readings` are the two texts as `read` reads them, when the caller has them
    already (a pass comparing one memory with several).
    """
    first, second = readings or (read(first_text), read(second_text))
    if first.normalised == second.normalised:
        reason = (
            "the same text"
            if first_text.strip() == second_text.strip()
            else "the same words once written one way (case, punctuation, spacing, numbers, "
            "units, abbreviations, person)"
        )
        return Likeness(Kind.DUPLICATE, 1.0, reason)
    if not first.words or not second.words:
        return None
    first, second, opposites = _opposites(first, second)
    first, second = _hours_as_clocks(first, second), _hours_as_clocks(second, first)
    second = _measures_as_the_others(second, first)
    trusted = thresholds or Thresholds()
    apart = _scales_apart(first, second)
    if _side_by_side(first, second, apart):
        return None
    if apart:  # two ends of one scale never say the same thing
        return _ends_conflict(first, second, apart, similarity, trusted)
    return _compare_read(first, second, similarity, trusted, opposites)


def kept_apart(first: Reading, second: Reading) -> bool:
    """Whether the two texts' structure says they cannot be one fact, whatever they mean:
    they speak of different times ("used to" / "now"), or of different people, named where
    each opens ("Tara Nair's favourite colour" / "Dana Nair's favourite colour") or a
    relative one names and the other does not. A meaning read from embeddings alone never
    tells these apart: their vectors sit as close as a paraphrase's."""
    if not first.words or not second.words:
        return False
    # Another time only: "now" beside no time word is one fact changed, a conflict.
    if first.when[0] != second.when[0] and not _one_year(first, second):
        return True
    apart = _scales_apart(first, second)
    if _side_by_side(first, second, apart):
        return True
    if _scopes_apart(first, second, apart) and differing_values(first, second):
        return True  # "7 hours on weeknights" / "9 hours at weekends": one value at each end
    if _years_apart_with_values(first, second):
        return True  # "the 2025 budget: $200k" / "spent $90k in 2024": two years' figures
    first, second, _ = _opposites(first, second)
    shared, only_first, only_second = _shared_and_only(first, second)
    return (
        _negated_of_another_thing(first, second, shared)
        or (_opens_on_another(first, second) and _opens_on_another(second, first))
        or _someone_else(first, second, only_first, only_second)
        or _someone_else(second, first, only_second, only_first)
        or _names_apart(first, second)
    )


def _side_by_side(first: Reading, second: Reading, apart: dict[int, tuple[Word, Word]]) -> bool:
    """Whether the two tell two facts side by side, whatever they mean: one tells one more
    fact ("I also take vitamin D"), or they are `apart` (`_scales_apart`) on two scales at
    once, each end saying where the other holds ("aisle seats on long-haul" / "the window on
    short hops"), or each counts in a measure the other never gives ("a bonus of 10%" /
    "a salary of $95k"), or their figures differ in two measures at once ("9.1 kg at 9
    months" / "8.2 kg at 6 months")."""
    return (
        len(apart) > 1
        or any(_ADDS_TO_ANOTHER.search(reading.normalised) for reading in (first, second))
        or _numbers_of_other_measures(first, second)
        or _apart_in_two_measures(first, second)
    )


def _scopes_apart(first: Reading, second: Reading, apart: dict[int, tuple[Word, Word]]) -> bool:
    """Whether the two take the two ends of a scale (of those `apart`) that is not a number's
    unit: where each also gives a value of its own, the scale tells where each value holds
    ("prod" / "staging"), while "180 celsius" / "350 fahrenheit" is one value in two units."""

    def unit(reading: Reading, word: Word) -> bool:
        at = next(number for number, said in enumerate(reading.words) if said is word)
        return at > 0 and not word.lead and reading.words[at - 1].value is ValueKind.NUMBER

    return any(
        not unit(first, ours) and not unit(second, theirs) for ours, theirs in apart.values()
    )


def _years_apart_with_values(first: Reading, second: Reading) -> bool:
    """Whether each names a year the other does not, beside a value of another kind that
    differs too: each gives that year's figure. A year told as the start of now ("since
    2021") is no other year's figure."""
    if first.when[1] or second.when[1]:
        return False
    ours, theirs = _years(first), _years(second)
    if not (ours and theirs) or ours & theirs:
        return False
    return any(kind is not ValueKind.DATE for kind in differing_values(first, second))


def _apart_in_two_measures(first: Reading, second: Reading) -> bool:
    """Whether the numbers of two units both give differ at once: each figure tells where or
    when the other holds."""
    ours, theirs = first.numbers, second.numbers
    apart = [
        unit for unit in (ours.keys() & theirs.keys()) - {""} if ours[unit].isdisjoint(theirs[unit])
    ]
    return len(apart) > 1


_YEARS = re.compile(rf"{FULL_YEAR.pattern}(?:-{FULL_YEAR.pattern})?")


def _years(reading: Reading) -> set[str]:
    """The years a text names, alone or as a run ("2015-2018")."""
    return {
        year
        for word in reading.words
        if _YEARS.fullmatch(word.canon)
        for year in word.canon.split("-")
    }


def _one_year(first: Reading, second: Reading) -> bool:
    """Whether the two name one year and neither says "now": "bought in 2016" and "bought
    back in 2016" tell one time, the time word only saying it is past."""
    if first.when[1] or second.when[1]:
        return False
    return bool(_years(first) & _years(second))


# Below this sureness a conflict the pair model reads, with no value or negation in the words
# to show for it, is read as a duplicate: an alike pair the model cannot place was more
# often one thing said twice. (Chosen with the model fitted on all sets but one and read on
# the one left out, on the tuning halves: 8 more of 842 found pairs of the right kind, none
# fewer in any set.)
UNSURE_CONFLICT = 0.43


def by_meaning(
    kind: Kind, sureness: float, similarity: float, first: Reading, second: Reading
) -> Likeness | None:
    """The verdict a reading of the pair's meaning gave (the pair model of
    stores.embeddings.pairs, `sureness` its probability) where the words decided nothing,
    worded with what the words show for it; None where it reads a duplicate the words cannot
    be, one word swapped for another."""
    evidence: list[str] = []
    unsure = False
    if kind is Kind.CONFLICT:
        evidence = [f"the {value} differs" for value in differing_values(first, second)]
        if first.negative != second.negative:
            negated = first if first.negative else second
            evidence.append(f"{_quote(negated.words[:8])!r} is said not to hold")
        unsure = not evidence and sureness < UNSURE_CONFLICT
    if (kind is Kind.DUPLICATE or unsure) and _one_word_swapped(first, second):
        return None
    if unsure:
        return Likeness(
            Kind.DUPLICATE,
            round(similarity, 2),
            f"say the same thing in other words, read by their meaning: {similarity:.2f} "
            f"alike, the pair model only {sureness:.0%} sure they cannot both hold and "
            "no value or negation differing",
            sure=False,
            by_model=True,
        )
    if kind is Kind.DUPLICATE:
        said = "say the same thing in other words"
    else:
        said = "cannot both hold" + (f" ({', '.join(evidence)})" if evidence else "")
    return Likeness(
        kind,
        round(sureness, 2),
        f"{said}, read by their meaning: {similarity:.2f} alike, the pair model "
        f"{sureness:.0%} sure",
        sure=False,
        by_model=True,
    )


def _one_word_swapped(first: Reading, second: Reading) -> bool:
    """Whether the two are one sentence, of two words or more beside it, with one word
    swapped for another ("The user likes tea" / "The user likes coffee", "The kitchen light
    is smart" / "The bedroom light is smart"): two things of one shape, never one thing said
    twice, however alike their embeddings."""
    first, second, _ = _opposites(first, second)
    # One word for one word, the rest alike: the two stand word for word but in one place
    # (read in step, so two long texts cost their length, not an alignment's product).
    if len(first.words) != len(second.words) or len(first.words) <= 2:
        return False
    pairs = zip(first.words, second.words, strict=True)
    return sum(ours.canon != theirs.canon for ours, theirs in pairs) == 1


def _shared_and_only(
    first: Reading, second: Reading
) -> tuple[frozenset[str], list[Word], list[Word]]:
    """The words both texts hold, and each text's words the other does not."""
    shared = first.canon & second.canon
    only_first = [word for word in first.words if word.canon not in shared]
    only_second = [word for word in second.words if word.canon not in shared]
    return shared, only_first, only_second


def _names_apart(first: Reading, second: Reading) -> bool:
    """Whether each text opens on a person's name the other never says."""
    named_first, named_second = _name_opening(first), _name_opening(second)
    return bool(named_first - second.reachable) and bool(named_second - first.reachable)


def _name_opening(reading: Reading) -> frozenset[str]:
    """The capitalised words a text opens with when they are a name: two or more ("Tara
    Nair works ..."), or one that owns what follows ("Ravi's laptop"). One capitalised word
    alone may be any word opening a sentence ("Coriander tastes ...")."""
    run: list[Word] = []
    for word in reading.words:
        if run and word.lead:
            break
        if not word.written[:1].isupper() or word.canon == _OWNER:
            break
        run.append(word)
    owns = len(run) < len(reading.words) and reading.words[len(run)].lead == "s"
    if len(run) > 1 or (run and owns):
        return frozenset(word.canon for word in run)
    return frozenset()


# An hour said without its half of the day ("at 8", "at 9:30"), and a clock ("20:00").
_BARE_HOUR = re.compile(r"(\d{1,2})(?::(\d\d))?")
_CLOCK_TIME = re.compile(r"\d\d:\d\d")


def _hours_as_clocks(reading: Reading, other: Reading) -> Reading:
    """`reading` with each hour it gives "at" without saying morning or evening read as the
    clock of the other text that hour may be: "a table for Saturday at 8" and "Saturday,
    8pm" give one time."""
    clocks = [word.canon for word in other.words if _CLOCK_TIME.fullmatch(word.canon)]
    if not clocks:
        return reading
    words = list(reading.words)
    for at, word in enumerate(words):
        bare = _BARE_HOUR.fullmatch(word.canon)
        if not bare or word.lead.split()[-1:] != ["at"] or not 1 <= int(bare[1]) <= 12:
            continue
        hour, minute = int(bare[1]) % 12, bare[2] or "00"
        clock = next((c for c in clocks if int(c[:2]) % 12 == hour and c[3:] == minute), None)
        if clock is not None:
            words[at] = replace(word, canon=clock)
    return replace(reading, words=tuple(words)) if words != list(reading.words) else reading


# Two measures of one unit this close (relative to the larger) are one measure written in
# two systems and rounded: "58 kg" / "128 lb" (58.1 kg), "12 km" / "7.5 miles" (12.1 km).
_ROUNDING = 0.01
# A quantity's amount as `read` gives it once its unit is read.
_DECIMAL = re.compile(r"\d+(?:\.\d+)?")


def _measures_as_the_others(reading: Reading, other: Reading) -> Reading:
    """`reading` with each quantity that is, but for rounding, one `other` gives in the
    same unit read as the other's: "about 220 lb" and "100 kg" give one weight."""
    measures = {
        (after.canon, float(word.canon)): word.canon
        for word, after in pairwise(other.words)
        if after.canon in _UNIT_WORDS and _DECIMAL.fullmatch(word.canon)
    }
    if not measures:
        return reading
    words = list(reading.words)
    for at, (word, after) in enumerate(pairwise(reading.words)):
        if after.canon not in _UNIT_WORDS or not _DECIMAL.fullmatch(word.canon):
            continue
        amount = float(word.canon)
        close = next(
            (
                canon
                for (unit, theirs), canon in measures.items()
                if unit == after.canon and abs(amount - theirs) <= _ROUNDING * max(amount, theirs)
            ),
            None,
        )
        if close is not None:
            words[at] = replace(word, canon=close)
    return replace(reading, words=tuple(words)) if words != list(reading.words) else reading


def _scales_apart(first: Reading, second: Reading) -> dict[int, tuple[Word, Word]]:
    """Each scale the two texts take opposite ends of → the word each takes it by."""
    first_ends, second_ends = _scale_words(first), _scale_words(second)
    return {
        scale: (first_ends[scale], second_ends[scale])
        for scale in first_ends.keys() & second_ends.keys()
        if SCALE_ENDS[first_ends[scale].canon][1] != SCALE_ENDS[second_ends[scale].canon][1]
    }


def _ends_conflict(
    first: Reading,
    second: Reading,
    apart: dict[int, tuple[Word, Word]],
    similarity: float | None,
    trusted: Thresholds,
) -> Likeness | None:
    """A conflict where the two would say the same thing but that each takes the other end
    of one scale ("The user is left-handed" / "The user is right-handed", "prefers detailed
    explanations" / "wants short answers"): read with the second's word at the first's end,
    the pair is a duplicate. Otherwise nothing: the two say different things."""
    if first.negative != second.negative or first.when != second.when:
        return None  # "not left-handed" / "right-handed"; "used to" / "now"
    if first.canon & second.canon & GATHERING or not _same_subject(first, second):
        return None  # "likes light beer" / "likes dark beer": both can be liked
    at_first_end = {theirs.canon: ours.canon for ours, theirs in apart.values()}
    moved = replace(
        second,
        words=tuple(
            replace(word, canon=at_first_end.get(word.canon, word.canon)) for word in second.words
        ),
    )
    alike = _compare_read(first, moved, similarity, trusted, 0)
    if alike is None or alike.kind is not Kind.DUPLICATE:
        return None
    ours, theirs = apart[min(apart)]
    return Likeness(
        Kind.CONFLICT,
        alike.score,
        f"about one thing, {ours.written!r} and {theirs.written!r} are the two ends of one "
        "scale: both cannot hold",
        sure=alike.sure,
    )


def _scale_words(reading: Reading) -> dict[int, Word]:
    """Each scale the text takes one end of → its first word there. A text that says both
    ends of a scale ("short runs in the week, long ones at weekends") contrasts them and
    takes neither."""
    found: dict[int, Word] = {}
    both: set[int] = set()
    for word in reading.words:
        if word.canon in SCALE_ENDS:
            scale, end = SCALE_ENDS[word.canon]
            known = found.setdefault(scale, word)
            if SCALE_ENDS[known.canon][1] != end:
                both.add(scale)
    return {scale: word for scale, word in found.items() if scale not in both}


def _compare_read(
    first: Reading,
    second: Reading,
    similarity: float | None,
    trusted: Thresholds,
    opposites: int,
) -> Likeness | None:
    """`compare` of two texts already read, their opposites read as negations."""
    if not _same_subject(first, second):
        # What one text opens with, the other never names: another subject, unless the
        # openings are things said two ways ("Salary lands ..." / "User is paid ...") and
        # the embeddings say the two mean the same.
        if similarity is None or similarity < trusted.same or _named_openings(first, second):
            return None
        if first.negative != second.negative or first.when != second.when:
            return None
        if _one_part_swapped(first, second) or _ends_apart(first, second):
            return None  # "The user's laptop runs Linux" / "The user's server runs Linux"
        return _same_meaning(first, second, similarity, trusted)
    shared, only_first, only_second = _shared_and_only(first, second)
    share = _shared_share(first, second)
    # One speaks of another time than now.
    timed = first.when[0] != second.when[0] and not _one_year(first, second)
    if _someone_else(first, second, only_first, only_second) or _someone_else(
        second, first, only_second, only_first
    ):
        return None  # "The user's son is allergic to peanuts" / "I'm not allergic"

    if first.negative != second.negative:
        negated = first if first.negative else second
        said = f"{_quote(negated.words[:8])!r} is said not to hold"
        if timed:
            return None  # "no longer" against "used to": both can be true
        if share >= NEGATION_SHARE and len(shared) >= MIN_SHARED:
            return Likeness(
                Kind.CONFLICT,
                round(share, 2),
                f"one negates what the other says: {said}"
                f"{' (an opposite word)' if opposites else ''}",
            )
        if _negated_of_another_thing(first, second, shared):
            return None  # "no markdown in emails" / "markdown is fine in chat"
        if similarity is not None and similarity >= trusted.negation:
            other = second if negated is first else first
            return Likeness(
                Kind.CONFLICT,
                round(similarity, 2),
                f"about one subject, {said}, and the other says {_quote(other.words[:8])!r} "
                f"({similarity:.2f} alike)",
                sure=False,
            )
        return None
    if not only_first and not only_second:
        return Likeness(
            Kind.DUPLICATE, _alike(similarity, 0.95), _same_thing(first, second, similarity)
        )
    if not only_first or not only_second:
        extra = only_first or only_second
        if len(shared) >= MIN_SHARED and len(extra) <= len(shared):
            return Likeness(
                Kind.DUPLICATE,
                _alike(similarity, round(share, 2)),
                f"one says all the other says and adds {_quote(extra)!r}",
            )
        if similarity is not None and similarity >= trusted.same:
            # More said beside it than the two share: one thing reworded, if meant alike.
            return _same_meaning(first, second, similarity, trusted)
        return None
    if timed:
        return None  # "used to live in Oslo" / "lives in Rome now": both can be true
    found = _differ_in_one_place(first, second, shared, similarity)
    if found is None:
        meant = similarity is not None and similarity >= trusted.value
        reworded = meant and similarity is not None and similarity >= trusted.reworded
        found = _value_changed(first, second, only_first, only_second, shared, meant, reworded)
    if found is None and similarity is not None and similarity >= trusted.value:
        found = _value_reworded(first, second, shared, similarity, trusted)
    if found is None and similarity is not None and similarity >= trusted.same:
        found = _same_meaning(first, second, similarity, trusted)
    return found


def _negated_of_another_thing(first: Reading, second: Reading, shared: frozenset[str]) -> bool:
    """Whether one text negates what the other does not say: it allows a thing in a scope of
    its own, or likes another thing than the other dislikes."""
    if first.negative == second.negative:
        return False
    allowing, denying = (second, first) if first.negative else (first, second)
    return _allowed_elsewhere(allowing, denying) or _likings_apart(first, second, shared)


# A liking or a dislike, read (opposites already read as negations: "dislikes" is "likes"
# negated).
_LIKINGS = frozenset({"lik", "hat", "prefer", "happy", "fin", "stand", "ador"})


def _likings_apart(first: Reading, second: Reading, shared: frozenset[str]) -> bool:
    """Whether one likes what the other does not, each of another thing: the two share no
    word but the liking and whose it is (the user, or a name both open with)."""
    if not (first.canon & _LIKINGS and second.canon & _LIKINGS):
        return False
    both_open = _opening(first) & _opening(second)
    named = {word.canon for word in first.words if word.written[:1].isupper()}
    return not shared - _LIKINGS - (both_open & named) - {_OWNER}


_ALLOWING = re.compile(r"\b(?:fine|ok|okay|allowed|permitted|acceptable)\b")
# Words that open where or when a thing holds ("in chat", "for hotfixes", "if signed off").
_SCOPING = frozenset({"in", "for", "if", "when", "during", "after", "unless", "except"})


def _allowed_elsewhere(allowing: Reading, denying: Reading) -> bool:
    """Whether `allowing` allows a thing where `denying` never says: within a scope of its
    own, an exception to the other's rule ("markdown is fine in chat" / "no markdown in
    emails"), while "markdown is fine in emails" meets the rule head on."""
    return bool(_ALLOWING.search(allowing.normalised)) and any(
        word.lead.rpartition(" ")[2] in _SCOPING and word.canon not in denying.reachable
        for word in allowing.words
    )


# Words that say a thing has one value at a time: "the user's only phone", "primary contact".
_ONE_OF_A_KIND = re.compile(r"\b(?:only|sole|primary|main|direct|directly)\b")


def _held_one_at_a_time(first: Reading, second: Reading) -> bool:
    """Whether either text says its thing has one value at a time: a name changed there is
    as sure a value as a number."""
    return any(_ONE_OF_A_KIND.search(reading.normalised) for reading in (first, second))


def _value_reworded(
    first: Reading,
    second: Reading,
    shared: frozenset[str],
    similarity: float,
    trusted: Thresholds,
) -> Likeness | None:
    """A conflict where the sentences were reworded throughout but give one kind of value
    differently ("User is hosting 8 people for Christmas" / "User expects 12 guests for
    Christmas dinner"), about one subject, under a verb that holds one value. A name alone
    differing needs the embeddings surer of the rest (REWORDED): a name is as often another
    thing the sentence is about as its value."""
    if shared & GATHERING:
        return None
    kinds = differing_values(first, second)
    if not kinds:
        return None
    if (
        kinds == [ValueKind.NAME]
        and similarity < trusted.reworded
        and not _held_one_at_a_time(first, second)
    ):
        return None
    was = [word for word in _words_giving(first, kinds) if word.canon not in shared]
    now = [word for word in _words_giving(second, kinds) if word.canon not in shared]
    if not was or not now:
        return None  # "Dana is Sam's manager" / "Sam manages Priya": Sam is said on both sides
    counted_first, counted_second = _numbers_counted(first, was), _numbers_counted(second, now)
    if _other_things_counted(first, second, counted_first, counted_second):
        return None  # "has two kids" / "has three grandchildren"
    if _two_roles(was) or _two_roles(now):
        return None  # who and when changed together: another meeting, not a moved one
    named = ", ".join(str(kind) for kind in kinds)
    return Likeness(
        Kind.CONFLICT,
        round(similarity, 2),
        f"about one subject, said in other words ({similarity:.2f} alike), the {named} "
        f"differs: {_quote(was)!r} → {_quote(now)!r}",
        sure=False,
    )


def _words_giving(reading: Reading, kinds: list[ValueKind]) -> list[Word]:
    """The words of `reading` that give a value of `kinds`: "month" of "a month" is how
    often."""
    often = reading.frequencies if ValueKind.FREQUENCY in kinds else frozenset()
    return [word for word in reading.words if word.value in kinds or word.canon in often]


def differing_values(first: Reading, second: Reading) -> list[ValueKind]:
    """The kinds of value both texts give and on which they share none: a price, a date, a
    name each side gives differently is what tells two alike sentences apart."""
    kinds: list[ValueKind] = []
    for kind in ValueKind:
        if kind is ValueKind.NUMBER:
            if _numbers_apart(first, second):
                kinds.append(kind)
            continue
        if kind is ValueKind.FREQUENCY:
            was, now = set(first.frequencies), set(second.frequencies)
        elif kind is ValueKind.NAME:
            # "MBP" beside "MacBook Pro": one name, once shortened to its capitals. Names
            # each of which the other says, where it is not read as one (opening a sentence,
            # in lower case: "Priya books through Marco" / "Marco is Priya's agent"), are
            # the same names.
            was, now = _unabbreviated(first, second), _unabbreviated(second, first)
            if was <= second.canon and now <= first.canon:
                continue
        else:
            was = {word.canon for word in first.words if word.value is kind}
            now = {word.canon for word in second.words if word.value is kind}
        if (was and now and was.isdisjoint(now)) or (
            kind is ValueKind.DATE and _date_parts_apart(was, now)
        ):
            kinds.append(kind)
    return kinds


def _unabbreviated(reading: Reading, other: Reading) -> set[str]:
    """The names `reading` gives that are no abbreviation of a run of `other`'s names, as
    read or as written: "SAW" is read as the verb, yet may be Sven, Anke and Wolff."""
    shortened = initials(other)
    return {
        word.canon
        for word in reading.words
        if word.value is ValueKind.NAME
        and word.canon not in shortened
        and word.written.casefold() not in shortened
    }


def _aligned(ours: dict[str, frozenset[str]], theirs: dict[str, frozenset[str]]) -> bool:
    """Whether a number of each may count one thing: in one measure, or one of them in a
    measure its text does not say."""
    return (
        bool(_measures(ours) & _measures(theirs))
        or ("" in ours and bool(theirs))
        or ("" in theirs and bool(ours))
    )


def _measures(numbers: dict[str, frozenset[str]]) -> set[str]:
    """The measures the units of `numbers` are of ("month" is of "year")."""
    return {_MEASURE_OF.get(unit, unit) for unit in numbers}


def _numbers_apart(first: Reading, second: Reading) -> bool:
    """Whether the two give numbers that may count one thing and share none: "£30" / "£45",
    "30" / "£45", never "10% of base" / "$95k" or "a 25-year term" / "£1,120 a month"."""
    ours, theirs = first.numbers, second.numbers
    if not _aligned(ours, theirs):
        return False
    every_ours, every_theirs = (
        frozenset().union(*ours.values()),
        frozenset().union(*theirs.values()),
    )
    shared = any(ours[measure] & theirs[measure] for measure in ours.keys() & theirs.keys())
    unsaid = frozenset[str]()
    return not (
        shared or ours.get("", unsaid) & every_theirs or theirs.get("", unsaid) & every_ours
    )


def _numbers_of_other_measures(first: Reading, second: Reading) -> bool:
    """Whether both give numbers and none of one may count what one of the other does."""
    ours, theirs = first.numbers, second.numbers
    return bool(ours and theirs) and not _aligned(ours, theirs)


def _date_part(canon: str) -> str | None:
    return "year" if FULL_YEAR.fullmatch(canon) else _DATE_PARTS.get(canon)


def _date_parts_apart(was: set[str], now: set[str]) -> bool:
    """Whether two dates give one of their parts differently, whatever others they share:
    "March 2026" / "March 2031", "Monday evenings" / "Monday mornings"."""
    for part in {_date_part(canon) for canon in was} - {None}:
        was_part = {canon for canon in was if _date_part(canon) == part}
        now_part = {canon for canon in now if _date_part(canon) == part}
        if now_part and was_part.isdisjoint(now_part):
            return True
    return False


def initials(reading: Reading) -> frozenset[str]:
    """The capitals of each run of names in `reading`, as an abbreviation writes them
    ("MacBook Pro" → "mbp", "New York City" → "nyc"), lower-cased as a word's canon is."""
    runs: list[list[str]] = [[]]
    for word in reading.words:
        if word.value is ValueKind.NAME and not word.lead:
            runs[-1].append("".join(c for c in word.written if c.isupper()) or word.written[0])
        else:
            runs.append([])
            if word.value is ValueKind.NAME:
                runs[-1].append("".join(c for c in word.written if c.isupper()))
    found: set[str] = set()
    for run in runs:
        for start in range(len(run)):
            for end in range(start + 2, min(len(run), start + 6) + 1):
                found.add("".join(run[start:end]).casefold())
    return frozenset(found)


def _spans(first: Reading, second: Reading) -> list[tuple[int, int, int, int]]:
    """Where the two texts' content words differ, aligned in order."""
    left = [word.canon for word in first.words]
    right = [word.canon for word in second.words]
    return [
        (i1, i2, j1, j2)
        for tag, i1, i2, j1, j2 in SequenceMatcher(a=left, b=right, autojunk=False).get_opcodes()
        if tag != "equal"
    ]


def _swapped_span(first: Reading, second: Reading) -> tuple[int, int, int, int] | None:
    """The one span where the two differ, when they differ in one place only and each has
    words there."""
    spans = _spans(first, second)
    if len(spans) == 1 and spans[0][0] < spans[0][1] and spans[0][2] < spans[0][3]:
        return spans[0]
    return None


def _one_part_swapped(first: Reading, second: Reading) -> bool:
    return _swapped_span(first, second) is not None


def swapped(first: Reading, second: Reading, *, meant_alike: bool = False) -> bool:
    """Whether the texts are one sentence with one part swapped for another: its last words,
    where a sentence puts what it says of its subject ("likes tea" / "likes coffee"), its
    opening ("The kitchen light ..." / "The bedroom light ..."), or a phrase ("water the
    plants" / "call the bank"). Such a pair says two things of one shape, never the same
    thing twice, however alike their embeddings.

    `meant_alike` (their embeddings past the threshold of a rewording) makes a phrase swapped
    inside for one of another length a rewording ("is training for the Chicago Marathon" /
    "is preparing to run the Chicago Marathon"): another thing said in its place takes the
    shape of what it replaces ("water the plants" / "call the bank")."""
    span = _swapped_span(first, second)
    if span is None:
        return False
    i1, i2, j1, j2 = span
    # A word swapped inside ("learns" / "studies") is a rewording; a phrase swapped, or what
    # opens or ends the sentence (its subject, its value), is another thing said.
    if i1 == 0 or (i2 == len(first.words) and j2 == len(second.words)):
        return True
    return max(i2 - i1, j2 - j1) > 1 and not (meant_alike and i2 - i1 != j2 - j1)


def _valued(reading: Reading) -> bool:
    """Whether the text gives a number, a date or time, or an email address."""
    return any(word.value not in (None, ValueKind.NAME, ValueKind.COLOUR) for word in reading.words)


def _same_meaning(
    first: Reading, second: Reading, similarity: float, trusted: Thresholds
) -> Likeness | None:
    """A duplicate where the words differ throughout but the embeddings say the same and no
    structure tells the two apart (the caller has ruled out a negation on one side, another
    subject and time words on one side)."""
    if bool(_NOW.search(first.normalised)) != bool(_NOW.search(second.normalised)):
        return None  # "... only meets on Thursdays now": what changed is no duplicate
    meant_alike = similarity >= trusted.reworded
    if differing_values(first, second) or swapped(first, second, meant_alike=meant_alike):
        return None
    if _valued(first) != _valued(second):
        return None  # a number or date one side only gives: a specific beside a general
    return Likeness(
        Kind.DUPLICATE,
        round(similarity, 2),
        f"say the same thing in other words ({similarity:.2f} alike), with no value, "
        "negation, subject or time differing",
        sure=False,
    )


def _same_subject(first: Reading, second: Reading) -> bool:
    """Whether one text's opening words (its subject, an adverb left out) are words the
    other says too: "Alice lives in Madrid" and "Bob lives in Madrid" are about two people,
    "Project Atlas" and "Project Hermes" two projects, "Tom wrote the report" and "The
    report was written by Tom" about one thing."""
    return _opening(first) <= second.reachable or _opening(second) <= first.reachable


def _named_openings(first: Reading, second: Reading) -> bool:
    """Whether what a text opens with and the other never says is a name or a person,
    relative or animal: "Alice" / "Bob", "the user's sister" / "the user's brother"."""
    return _opens_on_another(first, second) or _opens_on_another(second, first)


def _opens_on_another(reading: Reading, other: Reading) -> bool:
    """Whether `reading` opens on a name, person, relative or animal `other` never says."""
    apart = _opening(reading) - other.reachable
    opening = [word for word in reading.words if word.canon in _opening(reading)]
    # Two capitalised words opening a sentence are a name ("Ivo Dorsey works ...").
    if apart and len(opening) > 1 and all(word.written[:1].isupper() for word in opening):
        return True
    return any(
        word.canon in apart and (word.value is ValueKind.NAME or word.canon in ENTITY_NOUNS)
        for word in reading.words
    )


def _ends_apart(first: Reading, second: Reading) -> bool:
    """Whether each text ends on a word the other never says: where a sentence puts what it
    says of its subject, the two say different things."""
    return first.words[-1].canon not in second.reachable and (
        second.words[-1].canon not in first.reachable
    )


def _opening(reading: Reading) -> frozenset[str]:
    """The first content word (not an adverb) and the capitalised words right after it."""
    words = list(reading.words)
    start = next(
        (
            number
            for number, word in enumerate(words)
            if not word.written.casefold().endswith("ly") or word.value is not None
        ),
        0,
    )
    if words[start].canon == _OWNER and start + 1 < len(words) and words[start + 1].lead == "s":
        start += 1  # "The user's python is 3.12" is about the python: a memory's owner
    opening = [words[start].canon]
    for word in words[start + 1 :]:
        # "The user's laptop": what the user has is the subject, not the user. "The user's
        # little brother", "Ben's best friend": so is who a word of age, size or standing
        # comes before.
        owned = word.lead == "s" or opening[-1] in _RELATIVE_MODIFIERS
        if not owned and (word.lead or not word.written[:1].isupper()):
            break
        opening.append(word.canon)
    return frozenset(opening)


def _two_roles(values: list[Word]) -> bool:
    """A name, or a year, beside a value of another kind: two roles of a sentence, not one
    value ("the 2025 budget: $200k" / "spent $90k in 2024" tell two years' figures)."""
    kinds = {word.value for word in values}
    if any(word.value is ValueKind.DATE and FULL_YEAR.fullmatch(word.canon) for word in values):
        return bool(kinds - {ValueKind.DATE})
    return ValueKind.NAME in kinds and len(kinds) > 1


def _value_changed(
    first: Reading,
    second: Reading,
    only_first: list[Word],
    only_second: list[Word],
    shared: frozenset[str],
    meant: bool,
    reworded: bool,
) -> Likeness | None:
    """A conflict when both texts, about one subject, give a value of one kind the other
    does not (a price, a place, a time). Where, but for those values, one says all the other
    does and at most as much again, in any order ("kids: 2" / "The user has 3 kids"), the
    words decide alone. Otherwise it needs the embeddings' meaning (`meant`), and the other
    words only one side says on one side only: words changed on both sides are a second
    fact changed ("tea in the morning" / "wine in the evening"), unless `reworded` (the
    embeddings say the rest means the same) and they are a word or two a side."""
    if len(shared) < 1 or (shared & GATHERING):
        return None
    was = [word for word in only_first if word.value]
    now = [word for word in only_second if word.value]
    kinds = {word.value for word in was} & {word.value for word in now}
    if not kinds or _two_roles(was) or _two_roles(now):
        return None
    counted_first, counted_second = _numbers_counted(first, was), _numbers_counted(second, now)
    if _other_things_counted(first, second, counted_first, counted_second):
        return None  # "has two kids" / "has three grandchildren"
    # The memory's owner said or left out is no other word: every memory is about them.
    loose_first = [word for word in only_first if not word.value and word.canon != _OWNER]
    loose_second = [word for word in only_second if not word.value and word.canon != _OWNER]
    # Numbers of one thing ("two children" / "three kids, all under ten, so ...") tell the
    # fact apart whatever else either text says.
    if not counted_first & counted_second:
        if not meant and not _only_values_apart(shared, was + now, loose_first, loose_second):
            return None
        if (
            loose_first
            and loose_second
            and not (reworded and max(len(loose_first), len(loose_second)) <= 2)
        ):
            return None
        if len(loose_first) + len(loose_second) > MAX_CHANGED_WORDS:
            return None
    named = ", ".join(sorted(str(kind) for kind in kinds))
    return Likeness(
        Kind.CONFLICT,
        round(_shared_share(first, second), 2),
        f"about one subject, the {named} differs: {_quote(was)!r} → {_quote(now)!r}",
        sure=False,
    )


def _numbers_counted(reading: Reading, values: list[Word]) -> set[str]:
    """What each number of `values` (words of `reading`) counts or measures: the word right
    after it ("2 kids", "35 min"), when that is a plain word and not another value."""
    # By identity: two equal words ("2" and "2") may stand in two places of one text.
    numbers = {id(word) for word in values if word.value is ValueKind.NUMBER}
    return {
        after.canon
        for word, after in pairwise(reading.words)
        if id(word) in numbers and not after.lead and after.value is None
    }


def _other_things_counted(
    first: Reading, second: Reading, counted_first: set[str], counted_second: set[str]
) -> bool:
    """Whether the numbers the texts give differently measure different things (what each
    counts: `_numbers_counted`), neither text naming the other's: two measures ("180 cm" /
    "twelve and a half stone"), a measure and a thing ("35 min" / "the 25 bus"), or two
    kinds of people or animals ("two kids" / "three grandchildren"). Other nouns may be one
    thing in two words ("8 people" / "12 guests")."""
    if not (
        counted_first
        and counted_second
        and counted_first.isdisjoint(second.canon)
        and counted_second.isdisjoint(first.canon)
    ):
        return False
    measured = (counted_first | counted_second) & _UNIT_WORDS
    beings = counted_first & ENTITY_NOUNS and counted_second & ENTITY_NOUNS
    return bool(measured or beings)


def _only_values_apart(
    shared: frozenset[str], values: list[Word], loose_first: list[Word], loose_second: list[Word]
) -> bool:
    """Whether, but for values of one kind, one text says all the other does and at most as
    much again (as a duplicate may): "seats: 40" / "They have 25 licensed seats in total"."""
    loose = loose_first + loose_second
    if (loose_first and loose_second) or len({word.value for word in values}) != 1:
        return False
    return len(shared - {_OWNER}) >= 1 and len(loose) <= len(shared)


# The verbs that say what a thing is: "X's Y is Z" names the one value Y has.
_COPULAS = frozenset({"is", "are", "was", "were"})


def _name_written_plain(first: Reading, second: Reading, span: tuple[int, int, int, int]) -> bool:
    """Whether one word, the value of an owned attribute on both sides, is a name on one side
    and a plain word on the other: a note writes names lower-case ("editor: vim" / "The
    user's editor is Neovim")."""
    i1, i2, j1, j2 = span
    if i2 - i1 != 1 or j2 - j1 != 1:
        return False
    kinds = {first.words[i1].value, second.words[j1].value}
    return (
        kinds == {ValueKind.NAME, None}
        and _attribute_named(first, i1)
        and _attribute_named(second, j1)
    )


def _attribute_named(reading: Reading, at: int) -> bool:
    """Whether the word at `at` follows a copula after something owned: "The user's best
    friend is Kemi", "Maya's dog is called Rex" (the value of one attribute)."""
    if at <= 0 or at >= len(reading.words):
        return False
    lead = reading.words[at].lead.split()
    owned = any(word.lead.split()[:1] == ["s"] for word in reading.words[:at])
    return owned and bool(_COPULAS & set(lead))


def _someone_else(reading: Reading, other: Reading, only: list[Word], others: list[Word]) -> bool:
    """Whether `reading` is about a person, relative or animal the other text never names:
    one it opens with ("The user's daughter has asthma" beside "The user has asthma"), or
    one beside another in the other text ("the user's aunt" / "the user's uncle"). Named
    further in, it is what the text says of its subject ("Biscuit is the user's dog")."""
    named = {word.canon for word in only if word.canon in ENTITY_NOUNS}
    if not named or any(word.canon in _KINDS_OF_OTHERS for word in others):
        return False  # the other speaks of a kind of them: "no siblings" / "her brother"
    members = frozenset().union(*(_MEMBERS_OF_KIND.get(kind, ()) for kind in named))
    if any(word.canon in members for word in others):
        return False  # it speaks of a kind the other's one is of: "kids: none" / "my son"
    if _named_beside(reading, other, named):
        return False  # "son Leo" / "Leo carries an EpiPen": the son is the one both name
    if named <= _KINDS_OF_OTHERS and any(
        word.canon in ENTITY_NOUNS - _KINDS_OF_OTHERS for word in reading.words
    ):
        return False  # the kind heads those the text names: "pets: 2 cats"
    opening = _opening(reading)
    if named & opening:
        if _opens_on_a_name_instead(other, reading):
            return False  # "Pepper weighs 19 kg" / "the dog's weight": Pepper may be the dog
        # "The user's son Noah" beside "Noah is allergic ...": the other names that relative.
        alone = {word.canon for word in only}
        return not any(
            word.value is ValueKind.NAME and word.canon in opening and word.canon not in alone
            for word in reading.words
        )
    return not named <= _KINDS_OF_OTHERS and any(
        word.canon in ENTITY_NOUNS and word.canon not in _KINDS_OF_OTHERS for word in others
    )


# What may stand between a relative and their name: nothing ("son Leo"), or "is" ("sons:
# Jack", as a note's "key: value" reads).
_NAMING_LEADS = frozenset({"", "is"})


def _named_beside(reading: Reading, other: Reading, named: set[str]) -> bool:
    """Whether `reading` gives one of the relatives or animals `named` the name the other
    text says, right beside it ("son Leo", "kids: Ella", "Leo, my son"), not as its owner
    ("Leo's sister") nor past a word ("partner has a Plan 1"): both speak of that one."""
    names = (
        {
            word.canon
            for text in (reading, other)
            for word in text.words
            if word.value is ValueKind.NAME and word.canon != _OWNER
        }
        & reading.canon
        & other.canon
    )
    return any(
        (ours.canon in named and theirs.canon in names and theirs.lead in _NAMING_LEADS)
        or (theirs.canon in named and ours.canon in names and not theirs.lead.endswith("s"))
        for ours, theirs in pairwise(reading.words)
    )


def _opens_on_a_name_instead(other: Reading, reading: Reading) -> bool:
    """Whether `other` opens on a word written as a name is ("Pepper's food"), that `reading`
    never says, and names no relative or animal: the one `reading` names by what they are to
    the user."""
    opening = _opening(other)
    first = next(word for word in other.words if word.canon in opening)
    return (
        (first.written[:1].isupper() or first.lead == "s")
        and first.canon not in ENTITY_NOUNS | {_OWNER} | reading.canon
        and not any(word.canon in ENTITY_NOUNS for word in other.words)
    )


def _alike(similarity: float | None, fallback: float) -> float:
    return round(similarity, 2) if similarity is not None else fallback


def _same_thing(first: Reading, second: Reading, similarity: float | None) -> str:
    if [w.canon for w in first.words] == [w.canon for w in second.words]:
        said = "say the same thing in other word forms or synonyms"
    elif sorted(w.canon for w in first.words) == sorted(w.canon for w in second.words):
        said = "the same words in another order"
    else:
        said = "say the same thing"
    return f"{said}, {similarity:.2f} alike" if similarity is not None else said


def _differ_in_one_place(
    first: Reading, second: Reading, shared: frozenset[str], similarity: float | None
) -> Likeness | None:
    """A conflict when the texts differ in one span whose words are values on both sides."""
    if not shared:
        return None
    spans = _spans(first, second)
    changed = [span for span in spans if span[1] > span[0] and span[3] > span[2]]
    if len(changed) != 1:
        return None
    i1, i2, j1, j2 = changed[0]
    # Words only one side has elsewhere (a dropped "at home") are let pass only when short.
    loose = [
        word
        for a, b, c, d in spans
        if (a, b, c, d) != changed[0]
        for word in (*first.words[a:b], *second.words[c:d])
    ]
    if len(loose) > MAX_LOOSE_WORDS or any(word.value for word in loose):
        return None  # more said on one side than a word, or a value only one side has
    was, now = first.words[i1:i2], second.words[j1:j2]
    if len(was) > MAX_CHANGED_WORDS or len(now) > MAX_CHANGED_WORDS:
        return None
    before = {word.canon for word in first.words[:i1]}
    gathering = bool(shared & GATHERING)
    was_values = [word for word in was if word.value]
    now_values = [word for word in now if word.value]
    if _name_written_plain(first, second, (i1, i2, j1, j2)):
        was_values = [replace(word, value=ValueKind.NAME) for word in was]
        now_values = [replace(word, value=ValueKind.NAME) for word in now]
    if not before & shared:
        return None  # what differs opens the text: it is who or what the text is about
    # Where the value of a sentence goes: last ("lives in Paris", "works as a teacher").
    last = i2 == len(first.words) and j2 == len(second.words)
    if was_values and now_values:
        if len(was_values) != len(was) or len(now_values) != len(now):
            return None  # a value changed beside other words: different things
        if {w.value for w in was_values} != {w.value for w in now_values}:
            return None  # a colour and a name, a date and a place: two facts, not one
        if _two_roles(was_values) or _two_roles(now_values):
            return None  # who and when changed together: another meeting, not a moved one
        names_only = all(w.value is ValueKind.NAME for w in (*was_values, *now_values))
        # Under a verb that gathers, a name adds to the others, unless the sentence names
        # an attribute that holds one ("The user's best friend is Kemi").
        gathering = gathering and not _attribute_named(first, i1)
        if names_only and (gathering or not last or len(shared) < 2):
            return None  # a name inside the text names what it is about
    elif was_values or now_values or len(was) != 1 or len(now) != 1:
        return None
    elif gathering or not last or len(shared) < 2 or was[0].lead != now[0].lead:
        # A verb that gathers, a word inside the text, or another preposition ("works at a
        # hospital" / "works as a nurse"): not one value replaced by another.
        return None
    return Likeness(
        Kind.CONFLICT,
        round(_shared_share(first, second), 2),
        f"differ only in {_quote(was)!r} → {_quote(now)!r}",
    )
