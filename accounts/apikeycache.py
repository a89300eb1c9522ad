"""API keys verified in the last few seconds, in the shared cache, so a partner's busy software
does not cost a query per request to read its key, its account and whether the address is
verified. Only reads use them: a write reads its key from the database (api.authentication).

A key is stored LIFETIME seconds under its SHA-256 (never the key itself, nor the account's
password hash), as two dicts of field values by name, under a fingerprint of both models'
fields: a release that adds, drops or renames a field neither reads nor misreads what another
stored (the release is in the cache's KEY_PREFIX too), and a field a dict lacks is left
deferred, read from the database if asked for. The service that revokes a key or changes its
account (accounts.services, the account admin) leaves a "forgotten" mark in its place, at once
and again after its transaction commits: a request that read the key just before cannot store
it again over the mark (cache.add), so the next request, on any process, reads the database.
"""

import hashlib
from collections.abc import Iterable
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, transaction
from django.db.models import Model
from django.db.models.base import ModelState

from accounts.models import ApiKey, User
from rental.cachesafe import cache_add, cache_set_many

LIFETIME = 10  # seconds
FORGOTTEN = "forgotten"
M = TypeVar("M", bound=Model)
_KEY_FIELDS = frozenset(field.attname for field in ApiKey._meta.concrete_fields)
# Left out, so never loaded: the password hash (read from the database if ever needed).
USER_FIELDS = frozenset(
    field.attname for field in User._meta.concrete_fields if field.name != "password"
)


def schema_fingerprint(key_fields: frozenset[str], user_fields: frozenset[str]) -> str:
    """Of the fields stored: another set of fields, another key."""
    names = repr((sorted(key_fields), sorted(user_fields)))
    return hashlib.sha256(names.encode()).hexdigest()[:12]


SCHEMA = schema_fingerprint(_KEY_FIELDS, USER_FIELDS)


def api_key_cache_key(key_hash: str) -> str:
    """Where the cache keeps the key (read with api_key_from_stored)."""
    return f"api-key:{SCHEMA}:{key_hash}"


def model_instance(model: type[M], fields: frozenset[str], values: dict[str, Any]) -> M:
    """A row's instance, as Model.from_db builds it but without running __init__ over every
    field (as Django unpickles one; neither model has an init signal): only this release's
    fields are taken, and one not stored is deferred, read from the database if asked for."""
    instance = model.__new__(model)
    instance.__dict__.update((name, value) for name, value in values.items() if name in fields)
    instance._state = ModelState()
    instance._state.adding = False
    instance._state.db = DEFAULT_DB_ALIAS
    return instance


def api_key_from_stored(stored: Any) -> ApiKey | None:
    """The key from what the cache kept under api_key_cache_key (None: nothing, forgotten, or
    not a value this code stores)."""
    if not isinstance(stored, dict) or not {"key", "user", "email_verified"} <= stored.keys():
        return None
    api_key = model_instance(ApiKey, _KEY_FIELDS, stored["key"])
    api_key.user = model_instance(User, USER_FIELDS, stored["user"])
    api_key.user_email_verified = bool(stored["email_verified"])  # type: ignore[attr-defined]
    return api_key


def api_key_remember(*, api_key: ApiKey) -> None:
    """Store a key read from the database (with its account and `user_email_verified`),
    unless it was forgotten meanwhile."""
    stored = {
        "key": {name: getattr(api_key, name) for name in _KEY_FIELDS},
        "user": {name: getattr(api_key.user, name) for name in USER_FIELDS},
        "email_verified": api_key.user_email_verified,  # type: ignore[attr-defined]
    }
    cache_add(api_key_cache_key(api_key.key_hash), stored, LIFETIME)


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
