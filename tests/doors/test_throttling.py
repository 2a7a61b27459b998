"""The doors' rate limit: one budget per caller, whichever door counts it."""

from __future__ import annotations

import shutil
import time

import pytest
import redis
from redis.exceptions import RedisError

from memoryadmin.doors.throttling import admit, caller_ident
from tests.load.server import free_port, redis_server


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


@pytest.fixture
def redis_cache(settings):
    """The default cache in a throwaway Redis, as production has it."""
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server (bin/system-deps installs it)")
    local = settings.CACHES
    with redis_server() as url:
        settings.CACHES = {
            "default": {
                "BACKEND": "memoryadmin.hosting.cache.ReusedClientRedisCache",
                "LOCATION": url,
                "KEY_PREFIX": "tests",
            }
        }
        yield url
        # Back to the local cache before this Redis stops: the rate-limit fixture clears it.
        settings.CACHES = local


def test_in_redis_the_budget_is_the_same_sliding_window(settings, redis_cache):
    _limit(settings, "2/minute")
    token = caller_ident(token_id=7)

    verdicts = [admit(token) for _ in range(3)]

    assert [verdict.allowed for verdict in verdicts] == [True, True, False]
    assert 0 < verdicts[2].wait <= 60
    assert admit(caller_ident(token_id=8)).allowed


def test_in_redis_a_request_times_out_of_the_window(settings, redis_cache, monkeypatch):
    _limit(settings, "2/second")
    token = caller_ident(token_id=7)
    started = time.time()
    monkeypatch.setattr("memoryadmin.doors.throttling.time.time", lambda: started)
    assert admit(token).allowed and admit(token).allowed
    assert not admit(token).allowed
    monkeypatch.setattr("memoryadmin.doors.throttling.time.time", lambda: started + 1.01)
    assert admit(token).allowed


def test_in_redis_one_request_costs_one_round_trip(settings, redis_cache, monkeypatch):
    _limit(settings, "100/minute")
    token = caller_ident(token_id=7)
    admit(token)  # the first call loads the script into Redis
    commands: list[str] = []
    send = redis.Redis.execute_command

    def counted(self, *args, **options):
        commands.append(args[0])
        return send(self, *args, **options)

    monkeypatch.setattr(redis.Redis, "execute_command", counted)
    assert all(admit(token).allowed for _ in range(5))
    assert commands == ["EVALSHA"] * 5


def test_in_redis_an_outage_admits_rather_than_failing(settings, redis_cache):
    _limit(settings, "1/minute")
    settings.CACHES = {
        "default": {
            "BACKEND": "memoryadmin.hosting.cache.ReusedClientRedisCache",
            "LOCATION": f"redis://127.0.0.1:{free_port()}/0",
        }
    }

    assert all(admit(caller_ident(token_id=1)).allowed for _ in range(3))
