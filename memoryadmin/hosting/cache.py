"""Django's Redis cache, with one Redis client per connection pool instead of one per call.

Django's RedisCacheClient makes a new `redis.Redis` for every cache operation, and redis-py
builds its table of about 170 response callbacks in each: two of them per API request (the
rate limit reads and writes its counter) were about a millisecond of an edit's CPU time on
these machines (bench/edit_path.py, profiled). A client is safe to share: connections come
from its pool, one per command.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient


class ReusedClientRedisCacheClient(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._clients[index] = self._client(
                connection_pool=self._get_connection_pool(write)
            )
        return client


class ReusedClientRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = ReusedClientRedisCacheClient
