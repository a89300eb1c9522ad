"""Reads and writes of the shared cache for what is only kept to go faster: when Redis does
not answer, the caller computes the value again instead of failing the request."""

import logging
from typing import Any

from django.core.cache import cache
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)


def cache_get(key: str) -> Any:
    """The stored value, or None (also when the cache is unreachable)."""
    try:
        return cache.get(key)
    except RedisError as error:
        logger.warning("cache unreachable, reading %s afresh: %s", key, error)
        return None


def cache_get_many(keys: list[str]) -> dict[str, Any]:
    """The stored values by key (none when the cache is unreachable)."""
    try:
        return cache.get_many(keys)
    except RedisError as error:
        logger.warning("cache unreachable, reading %d keys afresh: %s", len(keys), error)
        return {}


def cache_add(key: str, value: Any, timeout: int | None) -> None:
    try:
        cache.add(key, value, timeout)
    except RedisError as error:
        logger.warning("cache unreachable, %s not stored: %s", key, error)


def cache_set(key: str, value: Any, timeout: int | None) -> None:
    try:
        cache.set(key, value, timeout)
    except RedisError as error:
        logger.warning("cache unreachable, %s not stored: %s", key, error)


def cache_set_many(values: dict[str, Any], timeout: int | None) -> None:
    try:
        cache.set_many(values, timeout)
    except RedisError as error:
        logger.warning("cache unreachable, %d keys not stored: %s", len(values), error)
