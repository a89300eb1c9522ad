"""Django's Redis cache, with one redis.Redis client per connection pool.

Django builds a new redis.Redis for every cache call (RedisCacheClient.get_client), and each
one fills a table of ~170 response callbacks first: on a request that answers from the cache,
that was a fifth of its time. A client only wraps its pool and is safe to share between
threads, so one per pool is kept.
"""

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class _SharedClients(RedisCacheClient):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, object] = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]  # Django's own
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = _SharedClients
