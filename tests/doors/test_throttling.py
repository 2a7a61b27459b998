"""The doors' rate limit: one budget per caller, whichever door counts it."""

from __future__ import annotations

from redis.exceptions import RedisError

from memoryadmin.doors.throttling import admit, caller_ident


def _limit(settings, rate: str | None) -> None:
    settings.MEMORYADMIN = {**settings.MEMORYADMIN, "API": {"RATE_LIMIT": rate}}


def test_a_caller_over_its_budget_is_refused_and_told_how_long_to_wait(settings):
    _limit(settings, "2/minute")
    token = caller_ident(token_id=7)

    verdicts = [admit(token) for _ in range(3)]

    assert [verdict.allowed for verdict in verdicts] == [True, True, False]
    assert 0 < verdicts[2].wait <= 60


def test_each_caller_has_its_own_budget(settings):
    _limit(settings, "1/minute")

    assert admit(caller_ident(token_id=1)).allowed
    assert not admit(caller_ident(token_id=1)).allowed
    assert admit(caller_ident(token_id=2)).allowed
    assert admit(caller_ident(user_id=1)).allowed
    assert admit(caller_ident(address="127.0.0.1")).allowed


def test_without_a_rate_limit_every_request_is_admitted(settings):
    _limit(settings, None)

    assert all(admit(caller_ident(token_id=1)).allowed for _ in range(50))


def test_a_cache_outage_admits_rather_than_failing(settings, monkeypatch):
    _limit(settings, "1/minute")

    def unavailable(*args, **kwargs):
        raise RedisError("connection refused")

    monkeypatch.setattr("memoryadmin.doors.throttling.cache.get", unavailable)

    assert all(admit(caller_ident(token_id=1)).allowed for _ in range(3))
