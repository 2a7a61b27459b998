"""The list-append checker itself: it passes a correct history and names each kind of anomaly."""

from __future__ import annotations

from tests.load.history import ANCHOR, Op, StoredRevision, check_record, explain

SEED = f"Hot. {ANCHOR} End."


def with_tokens(*tokens: str) -> str:
    """The text after `tokens` were inserted in this order (the newest stands first)."""
    return SEED.replace(ANCHOR, " ".join([*reversed(tokens), ANCHOR]))


def chain_of(*tokens: str) -> list[StoredRevision]:
    chain = [StoredRevision(0, 1, "create", "shell:checker", "shell", "", SEED)]
    for number, _token in enumerate(tokens, start=1):
        chain.append(
            StoredRevision(
                number,
                number + 1,
                "edit",
                "agent:a/w",
                "api",
                with_tokens(*tokens[: number - 1]),
                with_tokens(*tokens[:number]),
            )
        )
    return chain


def applied(token: str, version: int, invoked: float, completed: float) -> Op:
    return Op("a01", 1, token, invoked, completed, "applied", "updated", 200, version)


def test_a_correct_history_passes():
    ops = [
        applied("<a>", 2, 0.0, 1.0),
        applied("<b>", 3, 1.5, 2.0),
        Op("h01", 1, "<c>", 0.5, 2.5, "refused", "conflict", 409, None, 1),
    ]
    assert check_record(1, with_tokens("<a>", "<b>"), 3, SEED, chain_of("<a>", "<b>"), ops) == []


def kinds(text, version, chain, ops) -> set[str]:
    return {anomaly.kind for anomaly in check_record(1, text, version, SEED, chain, ops)}


def test_a_lost_update_is_named():
    ops = [applied("<a>", 2, 0.0, 1.0), applied("<b>", 3, 0.0, 1.0)]
    chain = chain_of("<a>", "<b>")
    # v3 was computed from v1's text: <a> vanished.
    chain[2].before_text = SEED
    chain[2].after_text = with_tokens("<b>")
    found = kinds(with_tokens("<b>"), 3, chain, ops)
    assert {"lost", "lost-update"} <= found


def test_a_refused_edit_that_landed_and_a_phantom_are_named():
    ops = [Op("h01", 1, "<a>", 0.0, 1.0, "refused", "conflict", 409, None, 1)]
    found = kinds(with_tokens("<a>", "<z>"), 3, chain_of("<a>", "<z>"), ops)
    assert {"refused-but-present", "phantom", "chain-length"} <= found


def test_a_gap_a_foreign_write_and_a_wrong_acknowledgement_are_named():
    ops = [applied("<a>", 5, 0.0, 1.0)]
    chain = chain_of("<a>")
    chain.append(
        StoredRevision(
            2, 4, "set_importance", "task:decay", "task", chain[1].after_text, chain[1].after_text
        )
    )
    found = kinds(with_tokens("<a>"), 3, chain, ops)
    assert {"gap", "foreign-write", "acknowledgement", "chain-length"} <= found


def test_real_time_order_is_checked_and_explained():
    ops = [applied("<a>", 3, 0.0, 1.0), applied("<b>", 2, 2.0, 3.0)]
    chain = chain_of("<b>", "<a>")
    anomalies = check_record(1, with_tokens("<b>", "<a>"), 3, SEED, chain, ops)
    assert [anomaly.kind for anomaly in anomalies] == ["real-time"]
    text = explain(anomalies[0], ops, chain)
    assert "<a>" in text and "<b>" in text and "v2->v3" in text
