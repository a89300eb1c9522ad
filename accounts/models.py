import zoneinfo
from functools import cache

from django.conf import settings
from django.contrib.auth.models import AbstractUser, BaseUserManager
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice
from stdnum.eu import vat as eu_vat
from stdnum.exceptions import ValidationError as NumberInvalid

from accounts.ssh_keys import ssh_key_kind
from rental.text import refuse_control_characters, refuse_control_characters_but_lines


class UserManager(BaseUserManager["User"]):
    use_in_migrations = True

    def _create_user(self, email: str, password: str | None, **extra_fields):
        if not email:
            raise ValueError("An e-mail address is required.")
        user = self.model(email=self.normalize_email(email), **extra_fields)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_user(self, email: str, password: str | None = None, **extra_fields):
        extra_fields.setdefault("is_staff", False)
        extra_fields.setdefault("is_superuser", False)
        return self._create_user(email, password, **extra_fields)

    def create_superuser(self, email: str, password: str | None = None, **extra_fields):
        extra_fields.setdefault("is_staff", True)
        extra_fields.setdefault("is_superuser", True)
        return self._create_user(email, password, **extra_fields)


@cache
def time_zone_names() -> frozenset[str]:
    # Read from the system's zone database once per process: it only changes with a deploy.
    return frozenset(zoneinfo.available_timezones())


def validate_time_zone(value: str) -> None:
    if value and value not in time_zone_names():
        raise ValidationError(
            _("“%(zone)s” is not a time zone we know."), params={"zone": value}, code="invalid"
        )


def vat_number_normalise(value: str) -> str:
    """An EU VAT number as printed on invoices ("FR 40 303 265 045" -> "FR40303265045"), or
    ValidationError: the country prefix of an EU member state, then a number that passes that
    country's check digits."""
    if not value:
        return ""
    try:
        return eu_vat.validate(value)
    except NumberInvalid:
        raise ValidationError(
            _(
                "“%(number)s” is not an EU VAT number: it starts with the country code "
                "(FR, DE, IT…) followed by the number, as on your VAT registration."
            ),
            params={"number": value},
            code="invalid",
        ) from None


def validate_vat_number(value: str) -> None:
    vat_number_normalise(value)


def validate_country(value: str) -> None:
    if value and not (len(value) == 2 and value.isascii() and value.isalpha()):
        raise ValidationError(
            _("Give the two-letter country code, e.g. FR, DE or BE."), code="invalid"
        )


class User(AbstractUser):
    """A customer or a staff member. The e-mail is the login.

    Contact details are first name, last name and e-mail: the store never asks for an
    identity document, so there is deliberately no field for one.
    """

    username = None  # type: ignore[assignment]  # e-mail login: no username at all
    email = models.EmailField(_("e-mail address"), unique=True)
    first_name = models.CharField(
        _("first name"), max_length=150, validators=[refuse_control_characters]
    )
    last_name = models.CharField(
        _("last name"), max_length=150, validators=[refuse_control_characters]
    )
    language = models.CharField(
        _("preferred language"),
        max_length=8,
        choices=settings.LANGUAGES,
        default=settings.LANGUAGE_CODE,
        help_text=_("Language of the e-mails we send you."),
    )
    # Empty: the store's zone. Set at sign-up from the browser's zone.
    time_zone = models.CharField(
        _("time zone"),
        max_length=64,
        blank=True,
        validators=[validate_time_zone],
        help_text=_("Times on the site are shown in this zone."),
    )

    # Billing details, optional: a business gets them on its invoices (and, with an EU VAT
    # number from outside France, VAT reverse-charged).
    # db_default: rows written by code that predates the fields (older migrations' states)
    # get them empty too.
    company_name = models.CharField(
        _("company name"),
        max_length=150,
        blank=True,
        default="",
        db_default="",
        validators=[refuse_control_characters],
    )
    billing_address = models.TextField(
        _("billing address"),
        blank=True,
        default="",
        db_default="",
        validators=[refuse_control_characters_but_lines],
        help_text=_("Street, postcode and city."),
    )
    country = models.CharField(
        _("country"),
        max_length=2,
        blank=True,
        default="",
        db_default="",
        validators=[validate_country],
        help_text=_("Two-letter code, e.g. FR."),
    )
    vat_number = models.CharField(
        _("VAT number"),
        max_length=20,
        blank=True,
        default="",
        db_default="",
        validators=[refuse_control_characters, validate_vat_number],
        help_text=_("Intra-community VAT number, e.g. FR40303265045."),
    )

    USERNAME_FIELD = "email"
    REQUIRED_FIELDS = ["first_name", "last_name"]

    objects = UserManager()  # type: ignore[assignment,misc]  # ours: e-mail, no username

    class Meta:
        verbose_name = _("user")
        verbose_name_plural = _("users")

    def __str__(self) -> str:
        return self.email

    @property
    def is_business(self) -> bool:
        return bool(self.company_name or self.vat_number)

    @property
    def zone(self) -> zoneinfo.ZoneInfo | None:
        """The customer's time zone; None for the store's (also for a zone the system no
        longer knows after a tzdata update)."""
        return zoneinfo.ZoneInfo(self.time_zone) if self.time_zone in time_zone_names() else None


class ApiKey(models.Model):
    """A partner's key to the REST API, bound to one account.

    Only the SHA-256 of the key is stored: the key is shown once, when it is created. The
    prefix stays visible so the customer can tell their keys apart.
    """

    class Scope(models.TextChoices):
        READ_ONLY = "read_only", _("Read only")
        FULL = "full", _("Full access")

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys"
    )
    name = models.CharField(_("name"), max_length=80)
    scope = models.CharField(_("scope"), max_length=12, choices=Scope.choices, default=Scope.FULL)
    prefix = models.CharField(_("prefix"), max_length=16, unique=True, editable=False)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    last_used_at = models.DateTimeField(_("last used"), null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(_("revoked"), null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("API key")
        verbose_name_plural = _("API keys")

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @property
    def can_write(self) -> bool:
        return self.scope == self.Scope.FULL


class SshKey(models.Model):
    """A public key the customer's rentals install for them to log in with.

    `public_key` is the OpenSSH one-line form ("type base64 comment") that
    accounts.ssh_keys wrote back after parsing: the host-side script installs it as it is.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ssh_keys"
    )
    name = models.CharField(_("name"), max_length=80)
    public_key = models.TextField(_("public key"))
    fingerprint = models.CharField(_("fingerprint"), max_length=64)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name = _("SSH key")
        verbose_name_plural = _("SSH keys")
        constraints = [
            models.UniqueConstraint(fields=["user", "fingerprint"], name="ssh_key_once_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.fingerprint})"

    @property
    def kind(self) -> str:
        """ED25519, ECDSA or RSA, as `ssh-keygen -l` names it."""
        return ssh_key_kind(self.public_key.split(" ", 1)[0])


class AuthenticatorApp(TOTPDevice):
    """django-otp's authenticator device under a name staff read in their language (its own
    model is called "TOTP device", in English, in an admin section named after the app)."""

    class Meta:
        proxy = True
        verbose_name = _("authenticator app")
        verbose_name_plural = _("authenticator apps")


class RecoveryCodes(StaticDevice):
    """django-otp's "static device": an account's recovery codes."""

    class Meta:
        proxy = True
        verbose_name = _("recovery codes")
        verbose_name_plural = _("recovery codes")


class UnsentMail(models.Model):
    """An e-mail whose sending could not be queued (the broker was down as its transaction
    committed): the beat queues it once the broker is back (accounts.tasks)."""

    message = models.JSONField()  # what accounts.mail.mail_send reads
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # Past this, it is deleted unsent: a sign-up code or a reset link would have expired.
    expires_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name = _("unsent e-mail")
        verbose_name_plural = _("unsent e-mails")

    def __str__(self) -> str:
        return str(self.message.get("subject", ""))
