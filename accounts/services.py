"""Writes on accounts: API keys, SSH keys, and what a new password shuts."""

import hashlib
import secrets
from datetime import timedelta

from allauth.account.models import EmailAddress
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext

from accounts.hooks import password_changed_hooks_run
from accounts.mail import mail_queue, user_mail
from accounts.models import ApiKey, SshKey, User
from accounts.ssh_keys import SshKeyRefused, ssh_public_key_parse

KEY_LABEL = "lg"
# How stale `last_used_at` may get: one write per key per minute, not one per request.
LAST_USED_PRECISION = timedelta(minutes=1)
# Active keys per account: API limits are per account, and keys are not a way around them.
MAX_API_KEYS_PER_USER = 10
# SSH keys per account: every one is installed on each of its rentals' machines.
MAX_SSH_KEYS_PER_USER = 20


class ApiKeyLimit(Exception):
    """The account already has MAX_API_KEYS_PER_USER active keys."""

    @property
    def message(self) -> str:
        return gettext(
            "An account has at most %(count)d API keys in use: revoke one before creating another."
        ) % {"count": MAX_API_KEYS_PER_USER}


def api_key_limit_reached(*, user: User) -> bool:
    return ApiKey.objects.filter(user=user, revoked_at__isnull=True).count() >= (
        MAX_API_KEYS_PER_USER
    )


def api_key_hash(raw_key: str) -> str:
    """The stored form of a key. The key carries 256 random bits, so a plain SHA-256 is
    enough: there is nothing to brute-force that a slow hash would protect."""
    return hashlib.sha256(raw_key.encode()).hexdigest()


def _new_raw_key() -> tuple[str, str]:
    prefix = f"{KEY_LABEL}_{secrets.token_hex(4)}"
    return prefix, f"{prefix}_{secrets.token_urlsafe(32)}"


def api_key_create(*, user: User, name: str, scope: str = ApiKey.Scope.FULL) -> tuple[ApiKey, str]:
    """A new key for `user`. Returns the key row and the key itself, which is never stored.

    Raises ApiKeyLimit past MAX_API_KEYS_PER_USER active keys."""
    if scope not in ApiKey.Scope.values:
        raise ValueError(f"Unknown API key scope: {scope!r}")
    name = name.strip() or "API key"
    for _attempt in range(5):
        prefix, raw_key = _new_raw_key()
        try:
            with transaction.atomic():
                # Serialises concurrent creations by one user, so the limit holds.
                User.objects.select_for_update().only("pk").get(pk=user.pk)
                if api_key_limit_reached(user=user):
                    raise ApiKeyLimit
                api_key = ApiKey.objects.create(
                    user=user,
                    name=name[:80],
                    scope=scope,
                    prefix=prefix,
                    key_hash=api_key_hash(raw_key),
                )
            return api_key, raw_key
        except IntegrityError:
            continue  # the random prefix was taken: draw another
    raise RuntimeError("Could not draw a free API key prefix.")


def api_key_revoke(*, api_key: ApiKey) -> bool:
    """Revoke a key for good. Returns False if it was already revoked."""
    now = timezone.now()
    with transaction.atomic():
        revoked = ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(
            revoked_at=now
        )
    if revoked:
        api_key.revoked_at = now
    return bool(revoked)


def api_key_touch(*, api_key: ApiKey, now=None) -> None:
    """Record that the key was just used (at most one write per key per minute)."""
    now = now or timezone.now()
    if api_key.last_used_at and now - api_key.last_used_at < LAST_USED_PRECISION:
        return
    ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
    api_key.last_used_at = now


def account_create(*, email: str, first_name: str, last_name: str) -> User:
    """An account an operator makes from the command line (`create_api_key --create`). The
    operator runs the store and vouches for the address, so it counts as verified; no
    password: its owner sets one through the password-reset page to use the website."""
    with transaction.atomic():
        user = User.objects.create_user(
            email=email.strip(), password=None, first_name=first_name, last_name=last_name
        )
        EmailAddress.objects.create(user=user, email=user.email, verified=True, primary=True)
    return user


def ssh_key_add(*, user: User, name: str, public_key: str) -> SshKey:
    """Store a public key on the account, named `name` (else after its comment or type).

    Raises SshKeyRefused: not an accepted public key (a private one included), already on
    the account, or past MAX_SSH_KEYS_PER_USER."""
    parsed = ssh_public_key_parse(public_key)
    name = " ".join(name.split()) or parsed.comment or parsed.key_type
    with transaction.atomic():
        # Serialises concurrent additions by one user, so the limit holds.
        User.objects.select_for_update().only("pk").get(pk=user.pk)
        same = SshKey.objects.filter(user=user, fingerprint=parsed.fingerprint).first()
        if same is not None:
            raise SshKeyRefused("duplicate", name=same.name)
        if SshKey.objects.filter(user=user).count() >= MAX_SSH_KEYS_PER_USER:
            raise SshKeyRefused("too_many", count=MAX_SSH_KEYS_PER_USER)
        return SshKey.objects.create(
            user=user, name=name[:80], public_key=parsed.line, fingerprint=parsed.fingerprint
        )


def ssh_key_kept(*, user: User, public_key: str) -> SshKey:
    """The account's key for `public_key`: added (named after its comment), or the one
    already there. Raises SshKeyRefused as ssh_key_add, a duplicate aside."""
    try:
        return ssh_key_add(user=user, name="", public_key=public_key)
    except SshKeyRefused as refusal:
        fingerprint = ssh_public_key_parse(public_key).fingerprint
        same = SshKey.objects.filter(user=user, fingerprint=fingerprint).first()
        if refusal.code != "duplicate" or same is None:
            raise
        return same


def ssh_key_delete(*, ssh_key: SshKey) -> None:
    """Remove the key from the account and from the orders that named it.

    The key's row is locked before its links to orders are collected: an order being saved
    with it (orders.services locks the keys it names) is either waited for, and its link
    deleted too, or finds the key gone."""
    with transaction.atomic():
        locked = SshKey.objects.select_for_update().filter(pk=ssh_key.pk).first()
        if locked is not None:
            locked.delete()


def account_password_changed(*, user: User, by_staff: bool = False) -> None:
    """A new password (reset or change, or one staff set) shuts every door opened with the
    old one.

    Whoever held the account before (e.g. someone who signed up with the address before its
    owner reset the password) loses its API keys, and its webhooks are paused (api's hook)
    until the owner resumes them. The owner is told by e-mail, in their language: of what was
    revoked, and always when staff set the password (or turned password login off).
    """
    now = timezone.now()
    with transaction.atomic():
        keys = ApiKey.objects.filter(user=user, revoked_at__isnull=True).update(revoked_at=now)
        webhooks = password_changed_hooks_run(user=user, now=now)
        if by_staff or keys or webhooks:
            template = "password_set_by_staff" if by_staff else "access_revoked"
            context = {
                "keys": keys,
                "webhooks": webhooks,
                "password_off": not user.has_usable_password(),
            }
            message = user_mail(user=user, template=f"accounts/email/{template}", context=context)
            mail_queue(message=message)
