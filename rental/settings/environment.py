"""The store's settings read from the environment, parsed and checked with pydantic.

Every settings module (local, test, production) builds its values from these models, so a bad
value stops every process at start-up (`manage.py check`, gunicorn, Celery) with a message
naming the variable, instead of a store quietly running with it. Values are never echoed back:
some variables hold passwords.
"""

import os
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Annotated, Literal
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    HttpUrl,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
)

_HTTP_URL = TypeAdapter(HttpUrl)


def _http_url(value: str) -> str:
    _HTTP_URL.validate_python(value)
    return value  # as written: pydantic's form adds a trailing slash


HttpUrlText = Annotated[str, AfterValidator(_http_url)]


def _url_with_scheme(value: str, schemes: set[str]) -> str:
    parts = urlsplit(value)
    if parts.scheme not in schemes or not (parts.hostname or parts.path.strip("/")):
        raise ValueError(f"must be a URL starting with {' or '.join(sorted(schemes))}://")
    return value


class EnvironmentSettings(BaseModel):
    """Field names are the environment variables' names; unset ones take the default."""

    model_config = ConfigDict(frozen=True)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ):
        values = {name: environ[name] for name in cls.model_fields if name in environ}
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            problems = "\n".join(
                f"  {error['loc'][0] if error['loc'] else cls.__name__}: {error['msg']}"
                for error in exc.errors()
            )
            message = f"Invalid settings in the environment:\n{problems}"
            raise ImproperlyConfigured(message) from None


class PaymentSettings(EnvironmentSettings):
    # Watch-only: an extended private key (xprv) must never reach the server.
    PAYMENTS_XPUB: str = Field("", pattern=r"^([xt]pub[1-9A-HJ-NP-Za-km-z]{100,120})?$")
    # Non-hardened BIP32 indices only.
    PAYMENTS_DERIVATION_START: int = Field(1000, ge=0, lt=2**31)
    PAYMENTS_DEVNET_RPC_URL: HttpUrlText = "http://127.0.0.1:8545"
    # Confirmations `setup_devnet` gives the local chain (real chains set theirs in the admin).
    PAYMENTS_DEVNET_CONFIRMATIONS: int = Field(3, ge=1, le=1000)
    # Chain ids /healthz/ready waits for, comma-separated ("31337,8453").
    PAYMENTS_READY_CHAIN_IDS: str = Field("", pattern=r"^ *([0-9]+ *(, *[0-9]+ *)*)?$")
    PAYMENTS_RATE_MAX_AGE_MINUTES: int = Field(10, ge=1, le=24 * 60)
    # A fraction (0.20 = 20 %), never a percentage: 20 would let a x21 move through.
    PAYMENTS_RATE_MAX_MOVE: Decimal = Field(Decimal("0.20"), ge=Decimal("0.01"), le=1)
    PAYMENTS_RATE_MOVE_WINDOW_MINUTES: int = Field(60, ge=1, le=7 * 24 * 60)
    PAYMENTS_MONITOR_HOURS: int = Field(24, ge=1, le=24 * 90)
    # A fraction of the amount due (0.001 = 0.1 %), never base units: 1 would mean "paid
    # with nothing received". Above 5 % a shortfall is an underpayment for staff to see.
    PAYMENTS_UNDERPAYMENT_TOLERANCE: Decimal = Field(Decimal(0), ge=0, le=Decimal("0.05"))
    PAYMENTS_SCAN_INTERVAL_SECONDS: float = Field(3.0, ge=0.5, le=3600, allow_inf_nan=False)
    PAYMENTS_MAX_BLOCK_RANGE: int = Field(500, ge=1, le=100_000)
    # An unpaid order expires once the watcher read a block this much past its deadline.
    PAYMENTS_EXPIRY_SCAN_MARGIN_SECONDS: int = Field(120, ge=0, le=24 * 3600)
    # How often watched ETH addresses' balances are compared with their recorded transfers.
    PAYMENTS_NATIVE_BALANCE_CHECK_SECONDS: float = Field(
        30.0, ge=1, le=24 * 3600, allow_inf_nan=False
    )
    # A watcher whose last good scan is older than this makes /healthz/ready answer 503.
    PAYMENTS_CURSOR_MAX_AGE_SECONDS: int = Field(120, ge=10, le=24 * 3600)
    # The wallets the store sends refunds from, comma-separated: only a transfer from one of
    # them proves a refund. None set: no refund can be proven (development sets the devnet's).
    PAYMENTS_REFUND_WALLETS: str = Field(
        "", pattern=r"^(0x[0-9a-fA-F]{40}(\s*,\s*0x[0-9a-fA-F]{40})*)?$"
    )

    @field_validator("PAYMENTS_CURSOR_MAX_AGE_SECONDS")
    @classmethod
    def _spans_several_scans(cls, value: int, info: ValidationInfo) -> int:
        interval = info.data.get("PAYMENTS_SCAN_INTERVAL_SECONDS")
        if interval is not None and value < 3 * interval:
            raise ValueError("must be at least three times PAYMENTS_SCAN_INTERVAL_SECONDS")
        return value


class RentalSettings(EnvironmentSettings):
    """The rental after payment: SSH keys and the automatic provisioning of `ssh` hosts."""

    ORDERS_SSH_KEY_REQUIRED: bool = False
    # Files named, never their contents: the store's private key stays out of the settings.
    LOCAGPU_PROVISIONING_KEY_FILE: str = ""
    LOCAGPU_PROVISIONING_KNOWN_HOSTS: str = ""
    LOCAGPU_PROVISIONING_CONNECT_TIMEOUT: float = Field(10.0, gt=0, le=300, allow_inf_nan=False)
    # Unix account names on the hosts: a letter first, then what useradd accepts.
    LOCAGPU_HOST_ACCOUNT_PREFIX: str = Field("lg-", pattern=r"^[a-z][a-z0-9_-]{0,15}$")
    LOCAGPU_RENTAL_DATA_RETENTION_DAYS: int = Field(7, ge=0, le=365)
    # A paid order on automatic hosts without access after this long goes to staff's queue.
    LOCAGPU_ACCESS_LATE_MINUTES: int = Field(5, ge=1, le=24 * 60)
    # Where `make run` keeps its state (SQLite, broker, cache, chain, the local host's keys):
    # var/ in the clone unless set, so a test can run the same stack in a throwaway directory.
    LOCAGPU_VAR_DIR: str = Field("", pattern=r"^(/.*)?$")


class StoreSettings(EnvironmentSettings):
    STORE_CURRENCY: str = Field("EUR", pattern=r"^[A-Z]{3}$")
    SITE_URL: HttpUrlText = "http://127.0.0.1:8000"
    SUPPORT_EMAIL: str = Field("support@locagpu.test", pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
    ORDER_PAYMENT_WINDOW_MINUTES: int = Field(30, ge=5, le=24 * 60)
    # What one account may hold without paying (orders.ceiling): orders awaiting payment and
    # the GPUs they hold. An account that has never paid gets the lower pair.
    ORDERS_UNPAID_MAX_ORDERS: int = Field(5, ge=1, le=100)
    ORDERS_UNPAID_MAX_UNITS: int = Field(64, ge=1, le=10_000)
    ORDERS_NEW_ACCOUNT_UNPAID_MAX_ORDERS: int = Field(3, ge=1, le=100)
    ORDERS_NEW_ACCOUNT_UNPAID_MAX_UNITS: int = Field(16, ge=1, le=10_000)
    # Monitors sending `Authorization: Bearer <token>` see /healthz's details; empty: only staff.
    HEALTHZ_TOKEN: str = Field("", pattern=r"^(\S{24,})?$")
    # Reverse proxies in front of the app, each appending to X-Forwarded-For (README).
    TRUSTED_PROXY_COUNT: int = Field(0, ge=0, le=5)
    # The legal notice names the site's publication director and host; the terms of sale
    # name the consumer mediator customers may turn to (Code de la consommation, L612-1).
    STORE_PUBLICATION_DIRECTOR: str = Field("Le président de LocaGPU", min_length=1)
    STORE_HOSTING_PROVIDER: str = Field(
        "Hébergeur de développement, 1 place de l'Exemple, 75001 Paris, France", min_length=1
    )
    STORE_MEDIATOR_NAME: str = Field("Médiateur de la consommation (à désigner)", min_length=1)
    STORE_MEDIATOR_URL: HttpUrlText = "https://www.economie.gouv.fr/mediation-conso"

    @field_validator("ORDERS_NEW_ACCOUNT_UNPAID_MAX_ORDERS", "ORDERS_NEW_ACCOUNT_UNPAID_MAX_UNITS")
    @classmethod
    def _new_accounts_get_less(cls, value: int, info: ValidationInfo) -> int:
        regular_name = str(info.field_name).replace("NEW_ACCOUNT_", "")
        regular = info.data.get(regular_name)
        if regular is not None and value > regular:
            raise ValueError(f"must not exceed {regular_name}")
        return value


class BillingSettings(EnvironmentSettings):
    """The seller printed on every invoice (billing app) and the VAT it charges. The defaults
    name a dev store: production sets its own from the company's Kbis extract."""

    BILLING_SELLER_NAME: str = Field("LocaGPU", min_length=1, max_length=120)
    BILLING_SELLER_LEGAL_FORM: str = Field("SAS au capital de 10 000 €", min_length=1)
    BILLING_SELLER_STREET: str = Field("10 rue de l'Exemple", min_length=1)
    BILLING_SELLER_POSTCODE: str = Field("75002", pattern=r"^[0-9A-Z -]{3,10}$")
    BILLING_SELLER_CITY: str = Field("Paris", min_length=1)
    BILLING_SELLER_COUNTRY: str = Field("FR", pattern=r"^[A-Z]{2}$")
    BILLING_SELLER_SIREN: str = Field("123456782", pattern=r"^[0-9]{9}$")
    BILLING_SELLER_SIRET: str = Field("12345678200002", pattern=r"^[0-9]{14}$")
    BILLING_SELLER_RCS: str = Field("RCS Paris 123 456 782", min_length=1)
    BILLING_SELLER_VAT_NUMBER: str = Field("FR11123456782", pattern=r"^[A-Z]{2}[0-9A-Z]{2,13}$")
    # Percent, e.g. 20 (the French standard rate) or 5.5.
    BILLING_VAT_RATE: Decimal = Field(Decimal(20), ge=0, lt=100, decimal_places=2)
    # Franchise en base (art. 293 B du CGI): no VAT charged, the invoice says why.
    BILLING_VAT_FRANCHISE: bool = False

    @field_validator("BILLING_SELLER_SIRET")
    @classmethod
    def _siret_of_siren(cls, value: str, info: ValidationInfo) -> str:
        siren = info.data.get("BILLING_SELLER_SIREN")
        if siren is not None and not value.startswith(siren):
            raise ValueError("must start with BILLING_SELLER_SIREN")
        return value


class ServerSettings(EnvironmentSettings):
    """How every process runs: debug pages, database connections, the log, the partner API."""

    DJANGO_DEBUG: bool = False
    # Seconds a PostgreSQL connection is kept for the next request (0: closed after each).
    DATABASE_CONN_MAX_AGE: int = Field(60, ge=0, le=3600)
    # PostgreSQL's timeouts (rental.database): connecting, one statement (0: none; workers
    # and migrations set a longer one), one lock wait. A query past the statement timeout on
    # a server that no longer answers is cut on this side too.
    DATABASE_CONNECT_TIMEOUT_SECONDS: int = Field(3, ge=2, le=60)
    DATABASE_STATEMENT_TIMEOUT_SECONDS: float = Field(3.0, ge=0, le=3600, allow_inf_nan=False)
    DATABASE_LOCK_TIMEOUT_SECONDS: float = Field(2.0, ge=0, le=3600, allow_inf_nan=False)
    LOG_LEVEL: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
    # Requests per API key. DRF parses it at request time: one that does not parse would
    # answer 500 to every API request instead of stopping the process here.
    API_THROTTLE_RATE: str = "600/min"
    API_MAX_BODY_BYTES: int = Field(64 * 1024, ge=1024, le=100 * 1024 * 1024)
    API_WEBHOOK_ALLOW_LOCAL_TARGETS: bool = False

    @field_validator("DATABASE_LOCK_TIMEOUT_SECONDS")
    @classmethod
    def _lock_within_statement(cls, value: float, info: ValidationInfo) -> float:
        statement = info.data.get("DATABASE_STATEMENT_TIMEOUT_SECONDS")
        if statement and not 0 < value <= statement:
            raise ValueError("must be above 0 and at most DATABASE_STATEMENT_TIMEOUT_SECONDS")
        return value

    @field_validator("API_THROTTLE_RATE")
    @classmethod
    def _drf_rate(cls, value: str) -> str:
        if not re.fullmatch(r"[1-9][0-9]*/(s|sec|second|m|min|minute|h|hour|d|day)", value):
            raise ValueError("must be requests per s, min, hour or day, e.g. 600/min")
        return value


class LocalSettings(EnvironmentSettings):
    """`make run` on one machine: debug pages on, and this machine's GPU host."""

    DJANGO_DEBUG: bool = True
    LOCAGPU_LOCAL_SSH_PORT: int = Field(2222, ge=1, le=65535)


class ProductionSettings(EnvironmentSettings):
    """What production refuses to start without: no SQLite, no filesystem broker or cache,
    no guessed host names, and links in e-mails that are https."""

    DJANGO_SECRET_KEY: str = Field(min_length=32)
    DATABASE_URL: str
    CELERY_BROKER_URL: str
    REDIS_CACHE_URL: str
    ALLOWED_HOSTS: str
    SITE_URL: HttpUrlText
    DJANGO_SECURE_SSL_REDIRECT: bool = True
    DJANGO_SECURE_HSTS_SECONDS: int = Field(60 * 60 * 24 * 365, ge=0)

    @field_validator("DATABASE_URL")
    @classmethod
    def _postgresql(cls, value: str) -> str:
        return _url_with_scheme(value, {"postgres", "postgresql", "pgsql"})

    @field_validator("CELERY_BROKER_URL")
    @classmethod
    def _shared_broker(cls, value: str) -> str:
        return _url_with_scheme(value, {"redis", "rediss", "amqp", "amqps"})

    @field_validator("REDIS_CACHE_URL")
    @classmethod
    def _redis(cls, value: str) -> str:
        return _url_with_scheme(value, {"redis", "rediss"})

    @field_validator("ALLOWED_HOSTS")
    @classmethod
    def _named_hosts(cls, value: str) -> str:
        hosts = [host.strip() for host in value.split(",")]
        if not all(hosts) or "*" in hosts:
            raise ValueError("must list the served host names, comma-separated, without '*'")
        return value

    @field_validator("SITE_URL")
    @classmethod
    def _https(cls, value: str) -> str:
        if not value.startswith("https://"):
            raise ValueError("must start with https://")
        return value
