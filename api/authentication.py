from datetime import datetime

from rest_framework import authentication, exceptions

from accounts.apikeycache import (
    api_key_from_stored,
    api_key_keep,
    api_key_kept,
    api_key_remember,
    api_key_remembered,
)
from accounts.models import ApiKey
from accounts.services import api_key_hash, api_key_touch
from api.selectors import api_key_for_raw_key
from api.throttling import (
    COUNTED_USE,
    key_counted,
    key_counted_here,
    key_stored_and_counted,
    throttle_rate,
)
from rental.changes import now_seen
from rental.ratelimit import WindowCount

KEYWORD = "Api-Key"

# key id -> the last `last_used_at` this process wrote or read (accounts.apikeycache).
_last_used_written: dict[int, datetime] = {}
MAX_KEYS_REMEMBERED = 10_000


def _api_key(*, raw_key: str) -> tuple[ApiKey | None, WindowCount | None]:
    """The key and the throttle's count of this request when it was made with the key's read
    (otherwise None: api.throttling counts). Where this process can keep what it reads
    (rental.changes), the key is read from the database once, then from memory while nothing
    of its account changes (accounts.apikeycache); elsewhere from the cache when it was
    verified a few seconds ago. The request is counted before the key is used, and before
    the database is asked for a key not in memory: with Redis down, it is refused (503)
    having read and written nothing. Unknown keys are never stored nor counted: nobody can
    fill the cache or the memory by guessing."""
    key_hash = api_key_hash(raw_key)
    heard = now_seen()  # before anything is read
    rate = throttle_rate()
    if heard is not None:
        api_key = api_key_kept(key_hash=key_hash, heard=heard)
        if api_key is not None:
            # RedisError: a 503 before the key is used.
            return api_key, None if rate is None else key_counted(key_hash=key_hash, rate=rate)
    counted = None if rate is None else key_counted_here(key_hash=key_hash, limit=rate[0])
    api_key = None
    if rate is not None and counted is None:
        # RedisError: a 503, with nothing read nor written.
        found = key_stored_and_counted(key_hash=key_hash, period=rate[1])
        if found is not None:
            stored, counted = found
            api_key = api_key_from_stored(stored)
    elif heard is None:
        api_key = api_key_remembered(key_hash=key_hash)
    if api_key is not None and heard is None:
        return api_key, counted
    # From the database: kept in memory where the feed is heard (it is read after `heard`),
    # and stored in the cache unless it was there.
    in_cache = api_key is not None
    api_key = api_key_for_raw_key(raw_key=raw_key)
    if api_key is not None:
        if not in_cache:
            api_key_remember(api_key=api_key)
        api_key_keep(api_key=api_key, heard=heard)
    return api_key, counted


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Api-Key <key>`: the request acts as the key's account.

    `request.auth` is the ApiKey, so permissions can read its scope and the throttle its
    hash. A key found in memory or the cache has this request counted by the throttle already.
    """

    def authenticate(self, request):
        try:
            header = authentication.get_authorization_header(request).decode()
        except UnicodeError:
            raise exceptions.AuthenticationFailed("Malformed Authorization header.") from None
        parts = header.split()
        if not parts or parts[0].lower() != KEYWORD.lower():
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Use `Authorization: Api-Key <key>`.")
        api_key, counted = _api_key(raw_key=parts[1])
        if counted is not None:
            setattr(request, COUNTED_USE, counted)
        if api_key is None or not api_key.is_active or not api_key.user.is_active:
            raise exceptions.AuthenticationFailed("Unknown or revoked API key.")
        # A stored key's `last_used_at` is the one it was read with: this process remembers
        # what it wrote since, so it writes at most once a minute per key too.
        written = _last_used_written.get(api_key.pk)
        if written and (api_key.last_used_at is None or written > api_key.last_used_at):
            api_key.last_used_at = written
        api_key_touch(api_key=api_key)
        if len(_last_used_written) >= MAX_KEYS_REMEMBERED:
            _last_used_written.clear()
        _last_used_written[api_key.pk] = api_key.last_used_at
        return api_key.user, api_key

    def authenticate_header(self, request) -> str:
        return f'{KEYWORD} realm="api"'


def request_api_key(request) -> ApiKey | None:
    """The key a request was authenticated with; None for a browser session."""
    return request.auth if isinstance(request.auth, ApiKey) else None
