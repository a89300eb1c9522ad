"""Django's Redis cache, with one redis.Redis client per connection pool, and a Redis that hangs
taken for an unreachable one after its first timeout.

Django builds a new redis.Redis for every cache call (RedisCacheClient.get_client), and each
one fills a table of ~170 response callbacks first: on a request that answers from the cache,
that was a fifth of its time. A client only wraps its pool and is safe to share between
threads, so one per pool is kept.

A Redis that accepts connections and never answers (stopped, or a half-open connection) would
cost every cache call its socket timeout: a page making three calls took three times as long,
and a few such requests held every worker. After one timeout, calls fail at once for
UNREACHABLE_FOR seconds (as against a Redis refusing connections); then one call tries again.
"""

import time

import redis
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient

UNREACHABLE_FOR = 1.0


class _Unreachable:
    """When this process last saw its Redis time out: until then + UNREACHABLE_FOR it fails
    calls at once. A plain float: a race between threads at worst tries once more."""

    def __init__(self) -> None:
        self.until = 0.0

    def check(self) -> None:
        if time.monotonic() < self.until:
            raise redis.ConnectionError("the cache did not answer in time a moment ago")

    def seen(self) -> None:
        self.until = time.monotonic() + UNREACHABLE_FOR


class _Guarded:
    """Fails at once while the Redis is taken for unreachable; a timeout makes it so."""

    unreachable: _Unreachable

    def _guarded(self, call, *args, **options):
        self.unreachable.check()
        try:
            return call(*args, **options)
        except redis.TimeoutError:
            self.unreachable.seen()
            raise


class _GuardedPipeline(_Guarded, redis.client.Pipeline):
    # set_many and delete_many send their commands as one pipeline.
    def execute(self, raise_on_error: bool = True):
        return self._guarded(super().execute, raise_on_error)


class _GuardedRedis(_Guarded, redis.Redis):
    def execute_command(self, *args, **options):
        return self._guarded(super().execute_command, *args, **options)

    def pipeline(self, transaction=True, shard_hint=None):
        pipe = _GuardedPipeline(
            self.connection_pool, self.response_callbacks, transaction, shard_hint
        )
        pipe.unreachable = self.unreachable
        return pipe


class _SharedClients(RedisCacheClient):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, _GuardedRedis] = {}
        self._unreachable = _Unreachable()

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]  # Django's own
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = _GuardedRedis(connection_pool=pool)
            client.unreachable = self._unreachable
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = _SharedClients

    def validate_key(self, key) -> None:
        """No check: Django's warns of keys memcached would refuse, character by character
        (6 us a key, five keys a poll); Redis takes any key, and this cache is only ever Redis."""
