"""Signed-in sessions read from the shared cache (à la Django's cached_db sessions): a page
asks Redis, not PostgreSQL, for its session and account, as the API asks it for its key
(accounts.apikeycache, same rules).

A session is stored LIFETIME seconds under its key, decoded (as cached_db stores it: no
signature to check again on every request), with its account as a dict of field values by name
under a fingerprint of the fields (a release with other fields neither reads
nor misreads it), without the password hash: the hash Django compares the session's with
(get_session_auth_hash) is stored instead. Whatever can change what is stored leaves a
"forgotten" mark in its place, at once and again as its transaction commits, and a read that
raced it cannot store over the mark (cache.add): the session saved or deleted (logout), the
account saved or deleted (password, deactivation, staff, language), an authenticator added,
confirmed or removed. So the next request, on any process, reads the database.
"""

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.apikeycache import FORGOTTEN, USER_FIELDS, model_instance, schema_fingerprint
from accounts.models import AuthenticatorApp, Session, User
from rental.cachesafe import cache_add, cache_set_many

LIFETIME = 10  # seconds
SCHEMA = schema_fingerprint(frozenset({"session_decoded"}), USER_FIELDS)


def session_cache_key(session_key: str) -> str:
    return f"session:{SCHEMA}:{session_key}"


def session_remember(
    *, session_key: str, data: dict, expire_date: datetime, account: User | None
) -> None:
    """Store a session read from the database, decoded (unless forgotten meanwhile)."""
    stored = {"data": data, "expire_date": expire_date, "account": None}
    if account is not None:
        stored["account"] = {name: getattr(account, name) for name in USER_FIELDS}
        stored["second_factor"] = account.has_second_factor
        stored["auth_hash"] = account.get_session_auth_hash()
    cache_add(session_cache_key(session_key), stored, LIFETIME)


def session_from_stored(stored: Any) -> tuple[dict, datetime, User | None] | None:
    """(decoded session data, expiry, account) from what the cache kept (None: nothing,
    forgotten, or not a value this code stores)."""
    if not isinstance(stored, dict) or not {"data", "expire_date", "account"} <= stored.keys():
        return None
    values = stored["account"]
    if values is None:
        return stored["data"], stored["expire_date"], None
    account = model_instance(User, USER_FIELDS, values)
    account.has_second_factor = bool(stored["second_factor"])
    # The password hash is not stored: the hash Django derives from it is, until a password
    # is set on this instance (then Django's, of the new one).
    stored_hash = stored["auth_hash"]

    def auth_hash() -> str:
        if "password" in account.__dict__:
            return User.get_session_auth_hash(account)
        return stored_hash

    account.get_session_auth_hash = auth_hash  # type: ignore[method-assign]
    return stored["data"], stored["expire_date"], account


def sessions_forget(*, session_keys: Iterable[str]) -> None:
    """Stop serving these sessions from the cache: now, and once the transaction commits."""
    marks = {session_cache_key(key): FORGOTTEN for key in session_keys}
    if marks:
        cache_set_many(marks, LIFETIME)
        transaction.on_commit(lambda: cache_set_many(marks, LIFETIME))


def account_sessions_forget(*, user_id: int) -> None:
    """Every session of the account (its row or its authenticators changed)."""
    sessions_forget(
        session_keys=Session.objects.filter(account_id=user_id).values_list(
            "session_key", flat=True
        )
    )


def _account_saved(sender, instance: User, **kwargs) -> None:
    account_sessions_forget(user_id=instance.pk)


def _device_saved(sender, instance: TOTPDevice, **kwargs) -> None:
    account_sessions_forget(user_id=instance.user_id)


def sessions_cache_connect() -> None:
    """Whatever changes a stored account, through the ORM, forgets its sessions (as Zulip's
    flush_user_profile): no path that saves an account can leave a session stale."""
    for signal in (post_save, post_delete):
        signal.connect(_account_saved, sender=User, dispatch_uid=f"sessioncache-user-{signal}")
        for device in (TOTPDevice, AuthenticatorApp):
            signal.connect(
                _device_saved, sender=device, dispatch_uid=f"sessioncache-{device}-{signal}"
            )
