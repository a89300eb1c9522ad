from datetime import datetime
from typing import Any

from rest_framework import authentication, exceptions, permissions

from accounts.apikeycache import api_key_cache_key, api_key_from_stored, api_key_remember
from accounts.models import ApiKey
from accounts.services import api_key_hash, api_key_touch
from api.selectors import api_key_for_raw_key
from api.throttling import COUNTED_USE, key_stored_and_counted, throttle_rate
from rental.cachesafe import cache_get
from rental.ratelimit import WindowCount

KEYWORD = "Api-Key"

# key id -> the last `last_used_at` this process wrote or read: a key from the cache brings
# the one it was stored with (at most MAX_KEYS_REMEMBERED: then forgotten, all at once).
_last_used_written: dict[int, datetime] = {}
MAX_KEYS_REMEMBERED = 10_000


def _api_key(*, raw_key: str, write: bool) -> tuple[ApiKey | None, WindowCount | None]:
    """The key and the throttle's count of this request when it was made with the key's read
    (otherwise None: api.throttling counts). A read may be answered with the key the cache
    stored a few seconds ago (accounts.apikeycache), read and counted in one round trip; a
    write always reads its key from the database. With Redis down the request is refused
    (503) before anything is read or written. Unknown keys are never stored nor counted:
    nobody can fill the cache by guessing."""
    key_hash = api_key_hash(raw_key)
    rate = throttle_rate()
    found: tuple[Any, WindowCount | None] | None = None
    if rate is not None:
        found = key_stored_and_counted(key_hash=key_hash, period=rate[1])
    elif not write:
        stored = cache_get(api_key_cache_key(key_hash))
        found = None if stored is None else (stored, None)
    counted = None if found is None else found[1]
    if found is not None and not write:
        api_key = api_key_from_stored(found[0])
        if api_key is not None:
            return api_key, counted
    api_key = api_key_for_raw_key(raw_key=raw_key)
    if api_key is not None and found is None:
        api_key_remember(api_key=api_key)
    return api_key, counted


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Api-Key <key>`: the request acts as the key's account.

    `request.auth` is the ApiKey, so permissions can read its scope and the throttle its
    hash. A key found in the cache has this request counted by the throttle already.
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
        view = request.parser_context.get("view")
        write = request.method not in permissions.SAFE_METHODS and not getattr(
            view, "cached_key_suffices", False
        )
        api_key, counted = _api_key(raw_key=parts[1], write=write)
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
        if api_key.last_used_at is not None:
            _last_used_written[api_key.pk] = api_key.last_used_at
        return api_key.user, api_key

    def authenticate_header(self, request) -> str:
        return f'{KEYWORD} realm="api"'


def request_api_key(request) -> ApiKey | None:
    """The key a request was authenticated with; None for a browser session."""
    return request.auth if isinstance(request.auth, ApiKey) else None
