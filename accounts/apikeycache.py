"""API keys verified in the last few seconds, so a partner's busy software does not cost a
query per request to read its key, its account and whether the address is verified.

The rows' values are kept LIFETIME seconds under the key's SHA-256 (never the key itself, and
never the account's password hash). Revoking a key, a password change and a staff edit of the
account leave a "forgotten" mark in their place, at once and again after their transaction
commits: a request that read the key just before cannot store it again over the mark
(cache.add), so the next request reads the database and is refused at once.

Each web process also keeps the keys it read from the database (api_key_kept), served again
while nothing of their account was heard changing (rental.changes: the key, its account, its
addresses): a partner's request then costs no round trip for its key.
"""

from collections.abc import Iterable
from typing import TypeVar

from django.db import DEFAULT_DB_ALIAS, transaction
from django.db.models import Model
from django.db.models.base import ModelState

from accounts.models import ApiKey, User
from rental.cachesafe import cache_add, cache_get, cache_set_many
from rental.changes import Feed, Seen, account_tag
from rental.responsecache import Kept

LIFETIME = 10  # seconds
FORGOTTEN = "forgotten"
M = TypeVar("M", bound=Model)
_KEY_FIELDS = [field.attname for field in ApiKey._meta.concrete_fields]
# Left out, so never loaded: the password hash (read from the database if ever needed).
_USER_FIELDS = [field.attname for field in User._meta.concrete_fields if field.name != "password"]


def api_key_cache_key(key_hash: str) -> str:
    """Where the cache keeps the key (read with api_key_from_stored)."""
    return f"api-key:{key_hash}"


def api_key_remembered(*, key_hash: str) -> ApiKey | None:
    """The key stored by api_key_remember, with its account and `user_email_verified`."""
    return api_key_from_stored(cache_get(api_key_cache_key(key_hash)))


def _instance(model: type[M], names: list[str], values: list) -> M:
    """A row's instance, as Model.from_db builds it but without running __init__ over every
    field (as Django unpickles one; neither model has an init signal): a field not named is
    deferred, read from the database if ever asked for."""
    instance = model.__new__(model)
    instance.__dict__.update(zip(names, values, strict=True))
    instance._state = ModelState()
    instance._state.adding = False
    instance._state.db = DEFAULT_DB_ALIAS
    return instance


def api_key_from_stored(values) -> ApiKey | None:
    """The key from what the cache kept under api_key_cache_key (None: nothing, forgotten)."""
    if values is None or values == FORGOTTEN:
        return None
    key_values, user_values, email_verified = values
    api_key = _instance(ApiKey, _KEY_FIELDS, key_values)
    api_key.user = _instance(User, _USER_FIELDS, user_values)
    api_key.user_email_verified = email_verified  # type: ignore[attr-defined]
    return api_key


def _stored(api_key: ApiKey) -> tuple:
    return (
        [getattr(api_key, name) for name in _KEY_FIELDS],
        [getattr(api_key.user, name) for name in _USER_FIELDS],
        api_key.user_email_verified,  # type: ignore[attr-defined]
    )


def api_key_remember(*, api_key: ApiKey) -> None:
    """Keep a key read from the database (with its account and `user_email_verified`)."""
    cache_add(api_key_cache_key(api_key.key_hash), _stored(api_key), LIFETIME)


# Keys read from the database, in this process's memory (rental.responsecache).
_kept = Kept()


def api_key_kept(*, key_hash: str, heard: tuple[Feed, Seen] | None) -> ApiKey | None:
    """The key with that hash as this process read it from the database (api_key_keep), while
    nothing of its account was heard changing since; `heard` is rental.changes.now_seen()."""
    return api_key_from_stored(_kept.get((key_hash,), heard))


def api_key_keep(*, api_key: ApiKey, heard: tuple[Feed, Seen] | None) -> None:
    """Keep a key read from the database after `heard` (rental.changes.now_seen(), taken
    before reading it), with its account and `user_email_verified`."""
    tags = frozenset({account_tag(api_key.user_id)})
    _kept.put((api_key.key_hash,), heard, tags=tags, valid_until=None, value=_stored(api_key))


def api_keys_forget(*, key_hashes: Iterable[str]) -> None:
    """Stop serving these keys from the cache: now, and again once the current transaction
    commits (a request that read them meanwhile finds the mark and stores nothing)."""
    marks = {api_key_cache_key(key_hash): FORGOTTEN for key_hash in key_hashes}
    if marks:
        # Unreachable, the cache serves nothing either; what it held ends with LIFETIME.
        cache_set_many(marks, LIFETIME)
        transaction.on_commit(lambda: cache_set_many(marks, LIFETIME))


def user_api_keys_forget(*, user: User) -> None:
    """Every key of the account (its state, address or password changed)."""
    api_keys_forget(key_hashes=ApiKey.objects.filter(user=user).values_list("key_hash", flat=True))
