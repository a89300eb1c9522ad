"""The second factor (django-otp): an authenticator app (TOTP) and recovery codes, each
usable once. Required of staff before any admin page; customers turn it on if they wish."""

import logging
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables
from django_otp.models import Device
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.mail import mail_queue, user_mail
from accounts.models import User

logger = logging.getLogger(__name__)

RECOVERY_CODE_COUNT = 10
# The device name the authenticator app shows does not come from here (OTP_TOTP_ISSUER and
# the e-mail do); these only tell rows apart in the admin.
TOTP_DEVICE_NAME = "Authenticator app"
RECOVERY_DEVICE_NAME = "Recovery codes"


class SecondFactorThrottled(Exception):
    """django-otp's back-off after wrong codes: no code is checked before `seconds` pass."""

    def __init__(self, seconds: int):
        super().__init__(seconds)
        self.seconds = seconds


class PasswordRefused(Exception):
    """The password given with a code is not the account's."""


@dataclass(frozen=True)
class SecondFactorRemoved:
    authenticators: int
    recovery_codes: int


def two_factor_enabled(*, user: User) -> bool:
    """The account has a confirmed authenticator: its sessions verify a code after the password."""
    return TOTPDevice.objects.filter(user=user, confirmed=True).exists()


def second_factor_on(user: User) -> bool:
    """two_factor_enabled for the request's account: read with it (accounts.backends
    signed_in_account), asked now otherwise."""
    loaded = getattr(user, "has_second_factor", None)
    return two_factor_enabled(user=user) if loaded is None else bool(loaded)


def code_normalized(code: str) -> str:
    """What people type: spaces and dashes between groups, recovery codes in capitals."""
    return "".join(code.split()).replace("-", "").lower()


def totp_enrolment_start(*, user: User) -> TOTPDevice:
    """The account's pending authenticator (not confirmed yet): the same one on each visit of
    the enrolment page, so a code scanned earlier still works."""
    device = TOTPDevice.objects.filter(user=user, confirmed=False).order_by("pk").first()
    if device is None:
        device = TOTPDevice.objects.create(user=user, name=TOTP_DEVICE_NAME, confirmed=False)
    return device


def _check_allowed(device: Device) -> None:
    allowed, details = device.verify_is_allowed()
    if not allowed:
        locked_until = (details or {}).get("locked_until")
        seconds = (locked_until - timezone.now()).total_seconds() if locked_until else 1
        raise SecondFactorThrottled(max(int(seconds) + 1, 1))


@sensitive_variables("password")
def totp_enrolment_confirm(
    *, user: User, password: str, code: str
) -> tuple[TOTPDevice, list[str]] | None:
    """Confirm the pending authenticator with a code it shows and the account's password (a
    session left open somewhere must not be enough to tie the account to someone else's
    phone). Returns it with fresh recovery codes (to show once), or None for a wrong code.

    Raises PasswordRefused for a wrong password, SecondFactorThrottled while django-otp's
    back-off runs."""
    if not user.check_password(password):
        raise PasswordRefused
    with transaction.atomic():
        device = (
            TOTPDevice.objects.select_for_update()
            .filter(user=user, confirmed=False)
            .order_by("pk")
            .first()
        )
        if device is None:
            return None
        _check_allowed(device)
        if not device.verify_token(code_normalized(code)):
            return None
        # One authenticator per account: an older one (from before a reset) goes.
        TOTPDevice.objects.filter(user=user).exclude(pk=device.pk).delete()
        device.confirmed = True
        device.save(update_fields=["confirmed"])
        _security_mail(user=user, template="two_factor_on")
        return device, recovery_codes_renew(user=user)


def _security_mail(*, user: User, template: str) -> None:
    """Tell the owner their login changed (sent once the transaction commits): whoever did
    it, the owner learns of it and can answer."""
    mail_queue(message=user_mail(user=user, template=f"accounts/email/{template}", context={}))


def recovery_codes_renew(*, user: User) -> list[str]:
    """RECOVERY_CODE_COUNT new recovery codes in place of the old ones, each usable once."""
    with transaction.atomic():
        StaticDevice.objects.filter(user=user).delete()
        device = StaticDevice.objects.create(user=user, name=RECOVERY_DEVICE_NAME, confirmed=True)
        codes = [StaticToken.random_token() for _each in range(RECOVERY_CODE_COUNT)]
        StaticToken.objects.bulk_create(StaticToken(device=device, token=code) for code in codes)
    return codes


def second_factor_check(*, user: User, code: str) -> Device | None:
    """The confirmed device that accepts `code` (a recovery code is used up), or None.

    Six digits are an authenticator code, anything else a recovery code. Rows are locked,
    so one code never passes twice in parallel. Raises SecondFactorThrottled while
    django-otp's back-off after wrong codes runs."""
    code = code_normalized(code)
    model = TOTPDevice if code.isdigit() else StaticDevice
    with transaction.atomic():
        devices = list(
            model.objects.select_for_update().filter(user=user, confirmed=True).order_by("pk")
        )
        for device in devices:
            _check_allowed(device)
        for device in devices:
            if device.verify_token(code):
                return device
    return None


def recovery_codes_left(*, user: User) -> int:
    return StaticToken.objects.filter(device__user=user, device__confirmed=True).count()


def two_factor_remove(*, user: User) -> SecondFactorRemoved:
    """Every authenticator and recovery code of the account, confirmed or not; the owner is
    told by e-mail when their login asked for a code until now."""
    with transaction.atomic():
        recovery_codes = StaticToken.objects.filter(device__user=user).count()
        # Told from the rows this call deleted: a removal running at the same time waits for
        # them, finds none and sends no second e-mail.
        confirmed, _by_model = TOTPDevice.objects.filter(user=user, confirmed=True).delete()
        pending, _by_model = TOTPDevice.objects.filter(user=user).delete()
        StaticDevice.objects.filter(user=user).delete()
        if confirmed:
            _security_mail(user=user, template="two_factor_off")
    return SecondFactorRemoved(authenticators=confirmed + pending, recovery_codes=recovery_codes)


def two_factor_reset(*, user: User, operator: str) -> SecondFactorRemoved:
    """A lost device: `operator` (who ran the command) removes the account's second factor,
    and the log says who, whose and when. Staff enrol again at their next admin page."""
    removed = two_factor_remove(user=user)
    logger.warning(
        "Second factor reset for %s (user id %s) by %s at %s: %d authenticator(s), "
        "%d recovery code(s) removed",
        user.email,
        user.pk,
        operator,
        timezone.now().isoformat(),
        removed.authenticators,
        removed.recovery_codes,
    )
    return removed
