"""Settings shared by every environment. Values come from the environment (django-environ)."""

from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import environ
from csp.constants import NONE, SELF
from django.utils.translation import gettext_lazy as _

from rental.release import code_release
from rental.settings.environment import (
    BillingSettings,
    PaymentSettings,
    RentalSettings,
    ServerSettings,
    StoreSettings,
)

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)
# Parsed and checked now, so a bad value stops the process here (rental/settings/environment.py).
_payments = PaymentSettings.from_environment()
_store = StoreSettings.from_environment()
_rental = RentalSettings.from_environment()
_billing = BillingSettings.from_environment()
_server = ServerSettings.from_environment()
VAR_DIR = Path(_rental.LOCAGPU_VAR_DIR or BASE_DIR / "var")

SECRET_KEY = env("DJANGO_SECRET_KEY", default="insecure-local-development-key-change-me")
DEBUG = _server.DJANGO_DEBUG
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    # modeltranslation patches the admin, so it comes first.
    "modeltranslation",
    # Django's admin on a site that asks staff for their second factor.
    "rental.admin_site.StaffAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    # allauth names the site in its e-mails: the store's name rather than a host and port.
    "django.contrib.sites",
    "allauth",
    "allauth.account",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "accounts",
    "catalog",
    "orders",
    "hosts",
    "payments",
    "billing",
    "api",
    "backoffice",
]

# Lower apps ask, higher apps answer (rental.hooks): each question with its answers, by name and
# dotted path, in the order they run. The asking app imports none of them (docs/ARCHITECTURE.md).
HOOKS: dict[str, dict[str, str]] = {
    # The order event bus (orders.events). In the transaction that claims the event: what they
    # write commits with the claim, once (provisioning's task, the invoice, webhook deliveries).
    "order_event_with_claim": {
        "provisioning": "hosts.provisioning.triggers.provisioning_on_event",
        "billing": "billing.services.billing_on_event",
        "webhooks": "api.webhooks.services.webhook_deliveries_create",
    },
    # Once the claim has committed: what cannot be taken back, at most once.
    "order_event_after_claim": {"email": "orders.notifications.order_event_email"},
    # Questions orders asks (orders.hooks).
    "order_may_expire": {"payments": "payments.selectors.order_payment_watch_passed"},
    "order_provisioning_hold": {"payments": "payments.selectors.order_funds_lost_hold"},
    "order_funds_received": {"payments": "payments.selectors.order_has_received_funds"},
    "order_refund_record": {"payments": "payments.refunds.services.order_refund_owed_record"},
    "order_cancel_record": {"payments": "payments.services.order_invoices_close"},
    "order_page_sections": {
        "payment": "payments.views.order_payment_section",
        "refund": "payments.refunds.views.order_refund_section",
        "billing": "billing.sections.order_billing_section",
        "rental": "hosts.views.order_rental_section",
    },
    "order_admin_sections": {
        "payments": "payments.admin.order_admin_payment_section",
        "billing": "billing.admin.order_admin_billing_section",
    },
    "order_email_sections": {"payment": "payments.notifications.order_payment_email_section"},
    "order_email_attachments": {"billing": "billing.notifications.order_event_invoice_attachment"},
    # Questions the catalog asks (catalog.hooks): the units orders leave free, and who turns a
    # seeded GPU model's stock into machines.
    "catalog_availability": {"orders": "orders.stock.gpus_with_availability"},
    "catalog_seeded": {"hosts": "hosts.capacity.gpu_host_seed"},
    # accounts: a new password pauses the account's webhooks.
    "password_changed": {"webhooks": "api.webhooks.services.webhook_endpoints_pause"},
    # /healthz/ready (rental.health) checks the database, broker and cache, then these.
    "readiness_checks": {"chain": "payments.health.chains_health"},
}

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "rental.middleware.DatabaseUnreachableMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",
    "accounts.middleware.TimeZoneMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "accounts.middleware.SecondFactorMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "rental.middleware.ContentSecurityPolicyMiddleware",
    "rental.middleware.CacheUnreachableMiddleware",
]

ROOT_URLCONF = "rental.urls"
SITE_ID = 1
WSGI_APPLICATION = "rental.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
                "rental.context_processors.site",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------
# Without DATABASE_URL the project runs on an SQLite file, so `make run` needs no server.
DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        # WAL lets the web process read while the worker writes; IMMEDIATE takes the write
        # lock at BEGIN so two writers queue on the busy timeout instead of failing.
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
else:
    DATABASES["default"]["CONN_MAX_AGE"] = _server.DATABASE_CONN_MAX_AGE
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# A PostgreSQL that hangs holds no request for long (rental.database cuts a query the server
# does not answer, past the statement timeout): a 503 within seconds, gunicorn's timeout never
# reached. `lock_timeout` bounds a wait for a row lock (a 503 too, nothing half done).
DATABASE_STATEMENT_TIMEOUT_SECONDS = _server.DATABASE_STATEMENT_TIMEOUT_SECONDS
POSTGRESQL_OPTIONS = {
    "connect_timeout": _server.DATABASE_CONNECT_TIMEOUT_SECONDS,
    "options": (
        f"-c statement_timeout={int(DATABASE_STATEMENT_TIMEOUT_SECONDS * 1000)}"
        f" -c lock_timeout={int(_server.DATABASE_LOCK_TIMEOUT_SECONDS * 1000)}"
    ),
}
if DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = POSTGRESQL_OPTIONS
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache (rate limits, throttles; anonymous catalog pages in memory) ----------
REDIS_CACHE_URL = env("REDIS_CACHE_URL", default="")
# Every key holds the release: a rolling deploy's two releases never read each other's values.
RELEASE = env("RELEASE", default="") or code_release(BASE_DIR)
# A Redis that stops answering (rather than refusing: SIGSTOP, a half-open connection) costs
# a cache call at most this, and the request goes on without it or answers 503
# (rental.middleware): never a hung worker. Signed-in pages make no cache
# call but a rate limit's. The same bounds hold for the broker and the result backend below.
REDIS_SOCKET_TIMEOUTS = {"socket_connect_timeout": 0.4, "socket_timeout": 0.4}
REDIS_CACHE_OPTIONS = dict(REDIS_SOCKET_TIMEOUTS)
# Anonymous catalog pages (catalog.views.cached_for_visitors) come from Django's per-view cache
# for this long: stock and prices a few seconds late at most, an order re-checks them under
# its lock. Signed-in pages and API answers are never cached.
CATALOG_PAGE_CACHE_SECONDS = 10
# Those pages are kept in each process's memory (a few dozen pages, each rendered once per
# process and lifetime): no Redis round trip for a visitor's page, which cost more than the
# rest of serving it, and a Redis that does not answer slows no catalog page.
CATALOG_PAGE_CACHE = "catalog_pages"
CATALOG_PAGES = {
    "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
    "LOCATION": CATALOG_PAGE_CACHE,
    "OPTIONS": {"MAX_ENTRIES": 200},
    "VERSION": RELEASE,
}
if REDIS_CACHE_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_CACHE_URL,
            "OPTIONS": REDIS_CACHE_OPTIONS,
            "VERSION": RELEASE,
        },
        CATALOG_PAGE_CACHE: CATALOG_PAGES,
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
            "VERSION": RELEASE,
        },
        CATALOG_PAGE_CACHE: CATALOG_PAGES,
    }

# --- Accounts ----------------------------------------------------------------
AUTH_USER_MODEL = "accounts.User"
AUTHENTICATION_BACKENDS = [
    "accounts.backends.AccountBackend",
    "accounts.backends.AllauthAccountBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "accounts:profile"
ACCOUNT_LOGOUT_REDIRECT_URL = "catalog:home"
ACCOUNT_USER_MODEL_USERNAME_FIELD = None
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_SIGNUP_FORM_CLASS = "accounts.forms.SignupForm"
ACCOUNT_ADAPTER = "accounts.adapter.AccountAdapter"
# Nobody gets into an account, nor creates API keys or webhooks in it, before proving they
# read its mailbox: the code is typed on the page, so the sign-up never leaves the order flow.
ACCOUNT_EMAIL_VERIFICATION = "mandatory"
ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED = True
ACCOUNT_EMAIL_SUBJECT_PREFIX = "[LocaGPU] "
ACCOUNT_UNIQUE_EMAIL = True
# Sign-up and password reset answer the same whether the address has an account or not; the
# address's owner gets an e-mail instead ("you already have an account").
ACCOUNT_PREVENT_ENUMERATION = True
ACCOUNT_LOGOUT_ON_PASSWORD_CHANGE = False
ACCOUNT_PASSWORD_RESET_BY_CODE_ENABLED = False
# Failed logins: the "key" is the e-mail *and* the client's IP (accounts.adapter), so a
# stranger guessing from a shared address cannot lock a customer out; the looser per-IP
# limit stops sweeps over many e-mails.
ACCOUNT_RATE_LIMITS = {
    "login_failed": "5/5m/key,30/5m/ip",
    "signup": "20/m/ip",
    "reset_password": "20/m/ip,5/m/key",
    "change_password": "5/m/user",
}
# Failed logins on one account from every address (accounts.login_limits): past the limit
# the account refuses logins until the window closes or its password is reset.
ACCOUNT_LOGIN_CEILING = {"limit": 20, "period": 15 * 60}
# Reverse proxies of ours in front of the app (the TLS proxy of the README: 1). Each appends
# the address it saw to X-Forwarded-For; the client is the entry that many from the right.
# 0 = no proxy: REMOTE_ADDR, and X-Forwarded-For (which anyone can send) is ignored.
TRUSTED_PROXY_COUNT = _store.TRUSTED_PROXY_COUNT
ALLAUTH_TRUSTED_PROXY_COUNT = TRUSTED_PROXY_COUNT

# Second factor (django-otp): required of staff before any admin page, chosen by customers.
# Authenticator apps show the store's name beside the account's e-mail.
OTP_TOTP_ISSUER = "LocaGPU"
# The admin lists devices (to see who has one) but never shows a key or recovery code.
OTP_ADMIN_HIDE_SENSITIVE_DATA = True
# Wrong codes on the verify page, per account and per client IP: on top of django-otp's own
# back-off on each device (1 s, 2 s, 4 s... after each failure).
TWO_FACTOR_RATE_LIMIT = {"limit": 10, "period": 300}
TWO_FACTOR_IP_RATE_LIMIT = {"limit": 30, "period": 300}

# --- Internationalisation ----------------------------------------------------
LANGUAGE_CODE = "fr"
LANGUAGES = [("fr", _("French")), ("en", _("English"))]
MODELTRANSLATION_DEFAULT_LANGUAGE = "fr"
MODELTRANSLATION_FALLBACK_LANGUAGES = ("fr", "en")
LOCALE_PATHS = [BASE_DIR / "locale"]
FORMAT_MODULE_PATH = ["rental.formats"]
TIME_ZONE = "Europe/Paris"
USE_I18N = True
USE_TZ = True

# --- Static files ------------------------------------------------------------
STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# --- E-mail --------------------------------------------------------------------
EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="LocaGPU <noreply@locagpu.test>")

# --- Crypto payments (payments/) ------------------------------------------------
# Watch-only extended public key (account level, m/44'/60'/0') for deposit addresses on real
# chains. Devnet chains use the public test key instead (payments/derivation.py).
PAYMENTS_XPUB = _payments.PAYMENTS_XPUB
# First derivation index: the devnet's funded default accounts sit at indices 0-9 of the
# test key, so deposit addresses start well above them.
PAYMENTS_DERIVATION_START = _payments.PAYMENTS_DERIVATION_START
PAYMENTS_DEVNET_RPC_URL = _payments.PAYMENTS_DEVNET_RPC_URL
PAYMENTS_DEVNET_CONFIRMATIONS = _payments.PAYMENTS_DEVNET_CONFIRMATIONS
# Chain ids /healthz/ready waits for, besides the preset networks whose RPC URL is set.
PAYMENTS_READY_CHAIN_IDS = [
    int(chain_id) for chain_id in _payments.PAYMENTS_READY_CHAIN_IDS.split(",") if chain_id.strip()
]
# A rate older than this refuses new invoices in its asset.
PAYMENTS_RATE_MAX_AGE = timedelta(minutes=_payments.PAYMENTS_RATE_MAX_AGE_MINUTES)
# A feed rate more than this fraction away from the trusted rate read before it (0.20: 20 %,
# either way: the higher over the lower, less one), that one read within the window, prices
# nothing until staff confirm it or the feed comes back within the band (payments/rates.py):
# a feed misreporting x1000 must not price a single invoice.
PAYMENTS_RATE_MAX_MOVE = _payments.PAYMENTS_RATE_MAX_MOVE
PAYMENTS_RATE_MOVE_WINDOW = timedelta(minutes=_payments.PAYMENTS_RATE_MOVE_WINDOW_MINUTES)
# Chainlink feed readings (payments/rates.py). An answer older than its feed's heartbeat plus
# this margin is stale: feeds update on deviation or heartbeat, and the heartbeat update may
# land a little late.
PAYMENTS_FEED_HEARTBEAT_MARGIN = timedelta(minutes=5)
# Block timestamps may run a little ahead of our clock; beyond this an answer is "in the future".
PAYMENTS_FEED_CLOCK_SKEW = timedelta(seconds=60)
# After an L2 sequencer outage, feeds catch up: Chainlink's example waits an hour.
PAYMENTS_SEQUENCER_GRACE = timedelta(hours=1)
# A stablecoin whose USD feed leaves this band is refused (depeg guard).
PAYMENTS_PEG_LOW, PAYMENTS_PEG_HIGH = Decimal("0.98"), Decimal("1.02")
# Payments arriving after the deadline are still watched (and credited if stock allows).
PAYMENTS_MONITOR_PERIOD = timedelta(hours=_payments.PAYMENTS_MONITOR_HOURS)
# Shortfall accepted as full payment, as a fraction of the amount due (0.001 = 0.1 %).
PAYMENTS_UNDERPAYMENT_TOLERANCE = _payments.PAYMENTS_UNDERPAYMENT_TOLERANCE
PAYMENTS_SCAN_INTERVAL_SECONDS = _payments.PAYMENTS_SCAN_INTERVAL_SECONDS
# /healthz/ready answers 503 once a chain's last good scan is older than this.
PAYMENTS_CURSOR_MAX_AGE = timedelta(seconds=_payments.PAYMENTS_CURSOR_MAX_AGE_SECONDS)
# An unpaid order expires once the watcher has read its chain up to a block this much newer
# than the deadline: a payment mined in time but seen late (RPC outage) still counts. Covers
# the gap between block timestamps and our clock.
PAYMENTS_EXPIRY_SCAN_MARGIN = timedelta(seconds=_payments.PAYMENTS_EXPIRY_SCAN_MARGIN_SECONDS)
# How often watched ETH addresses' balances are compared with their recorded transfers, to
# find ether sent by contracts (payments/watcher/internal_transfers.py): a batched call per 50
# addresses.
PAYMENTS_NATIVE_BALANCE_CHECK_SECONDS = _payments.PAYMENTS_NATIVE_BALANCE_CHECK_SECONDS
# One scan task stops after this long and leaves the rest to the next beat.
PAYMENTS_SCAN_TIME_BUDGET_SECONDS = 20.0
PAYMENTS_MAX_BLOCK_RANGE = _payments.PAYMENTS_MAX_BLOCK_RANGE
# Deposit addresses per eth_getLogs `to` topic list. Geth refuses more than 1,000 values in
# one topic position (eth/filters/filter_system.go, maxSubTopics = 1000, "exceed max
# topics"), and the providers built on it with it: 1,000 open invoices cost one call.
PAYMENTS_LOG_RECIPIENTS_PER_CALL = 1000
# The head follower (manage.py follow_heads) reconnects after this, doubling up to the max.
PAYMENTS_HEADS_RECONNECT_SECONDS = 0.5
PAYMENTS_HEADS_RECONNECT_MAX_SECONDS = 30.0
# Scanned block hashes kept for reorg walk-back; deeper reorgs need a manual rescan.
PAYMENTS_REORG_HISTORY_BLOCKS = 256
PAYMENTS_RPC_TIMEOUT_SECONDS = 10.0
# Retries after HTTP 429 / 5xx, with exponential back-off starting at this delay.
PAYMENTS_RPC_RETRIES = 3
PAYMENTS_RPC_BACKOFF_SECONDS = 0.5
# Two "I've paid" presses closer than this make one claim.
PAYMENTS_CLAIM_DEDUPE_WINDOW = timedelta(minutes=2)
# "I've paid" per account (browser and every API key together), and per order: each claim
# queues a chain check, so no number of keys or tabs may multiply them.
PAYMENTS_CLAIM_RATE_LIMIT = {"limit": 10, "period": 60}
PAYMENTS_CLAIM_ORDER_RATE_LIMIT = {"limit": 3, "period": 60}
# The store's refund wallets, in lower case (payments.refunds.verify).
PAYMENTS_REFUND_WALLETS = tuple(
    wallet.strip().lower() for wallet in _payments.PAYMENTS_REFUND_WALLETS.split(",") if wallet
)

# --- Celery --------------------------------------------------------------------
# Without CELERY_BROKER_URL the broker is kombu's filesystem transport under var/,
# so `make run` needs no server.
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default="filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    _queue_dir = VAR_DIR / "celery" / "queue"
    _processed_dir = VAR_DIR / "celery" / "processed"
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
        "data_folder_in": str(_queue_dir),
        "data_folder_out": str(_queue_dir),
        "processed_folder": str(_processed_dir),
        "control_folder": str(VAR_DIR / "celery" / "control"),
        "store_processed": False,
    }
# A Redis broker with the same bounds: a publish, and the health check's ping, wait no longer.
REDIS_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {**REDIS_SOCKET_TIMEOUTS, "max_retries": 0}
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CELERY_BROKER_TRANSPORT_OPTIONS = REDIS_BROKER_TRANSPORT_OPTIONS
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default=None)
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = REDIS_SOCKET_TIMEOUTS["socket_connect_timeout"]
CELERY_REDIS_SOCKET_TIMEOUT = REDIS_SOCKET_TIMEOUTS["socket_timeout"]
# One retry, at once, on a fresh connection (the pooled one may be dead since a restart): a
# broker that does not answer holds a request twice its socket timeout at most, then the task
# is left to its sweep (rental.celery.enqueue_after_commit).
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0,
    "interval_max": 0,
}
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_TIMEZONE = TIME_ZONE
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 5 * 60
CELERY_TASK_SOFT_TIME_LIMIT = 60
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Separate queues for separate promises, each consumed by its own worker (Procfile,
# docker-compose.yml): crediting payments never waits behind a customer's slow webhook
# receiver or an SMTP server. Every task of the project is named here, its queue chosen
# (tests/rental/test_task_routes.py): none lands on `default` for want of a line.
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {
    # Reads of the chains: scans, confirmations, "I've paid" checks, ether sent by contracts,
    # and the Chainlink rates new invoices are priced at.
    "payments.tasks.chains_scan_task": {"queue": "chain"},
    "payments.tasks.chain_scan_task": {"queue": "chain"},
    "payments.tasks.invoice_check_task": {"queue": "chain"},
    "payments.tasks.native_balances_check_task": {"queue": "chain"},
    "payments.tasks.rates_refresh_task": {"queue": "chain"},
    # Refund transactions checked on chain, and their beat.
    "payments.tasks.refund_verify_task": {"queue": "chain"},
    "payments.tasks.refunds_verify_pending_task": {"queue": "chain"},
    # Outbound HTTP to customers' servers.
    "api.tasks.webhook_delivery_attempt_task": {"queue": "webhooks"},
    # Outbound SSH to GPU hosts: a host slow to answer never delays e-mails or crediting.
    "hosts.tasks.order_provision_task": {"queue": "hosts"},
    "hosts.tasks.order_access_revoke_task": {"queue": "hosts"},
    "hosts.tasks.order_keys_sync_task": {"queue": "hosts"},
    "hosts.tasks.rentals_purge_task": {"queue": "hosts"},
    # Order events, e-mails and the sweeps that queue them again.
    "orders.tasks.order_event_dispatch_task": {"queue": "default"},
    "orders.tasks.orders_dispatch_pending_task": {"queue": "default"},
    "orders.tasks.orders_expire_task": {"queue": "default"},
    "orders.tasks.orders_complete_task": {"queue": "default"},
    "orders.tasks.orders_remind_ending_task": {"queue": "default"},
    "accounts.tasks.mail_send_task": {"queue": "default"},
    "accounts.tasks.mails_unsent_queue_task": {"queue": "default"},
    "accounts.tasks.sessions_clear_expired_task": {"queue": "default"},
    "api.tasks.webhook_deliveries_due_task": {"queue": "default"},
    "api.tasks.webhook_endpoint_paused_notify_task": {"queue": "default"},
    "rental.ping": {"queue": "default"},
}
# Automatic provisioning of `ssh` hosts (hosts.provisioning). The store's private key is a
# file named here, never in the database; the hosts' keys are checked against a known_hosts
# file. Without a key file, `ssh` hosts are flagged for staff instead of provisioned.
PROVISIONING_KEY_FILE = _rental.LOCAGPU_PROVISIONING_KEY_FILE
PROVISIONING_KNOWN_HOSTS = _rental.LOCAGPU_PROVISIONING_KNOWN_HOSTS
PROVISIONING_CONNECT_TIMEOUT = _rental.LOCAGPU_PROVISIONING_CONNECT_TIMEOUT
# Unix accounts are named <prefix><order number>; tests use their own prefix and remove them.
HOST_ACCOUNT_PREFIX = _rental.LOCAGPU_HOST_ACCOUNT_PREFIX
# Attempts before a provisioning or revocation is flagged for staff, and the first back-off
# (doubled each time: 5 s, 10 s, 20 s, 40 s...).
PROVISIONING_ATTEMPTS = 5
PROVISIONING_RETRY_SECONDS = 5
# A custom environment given as a requirements file starts from this environment's image, the
# requirements installed in the container by the host's grant (fetched with the host's pip):
# that grant may answer this late (hosts.tasks gives its tasks the time).
CUSTOM_REQUIREMENTS_BASE_ENVIRONMENT = "pytorch"
PROVISIONING_REQUIREMENTS_TIMEOUT = 200
# The port of a development machine's own GPU host (hosts.local): set by
# local.py only; elsewhere hosts are real machines.
LOCAL_GPU_HOST_PORT: int | None = None
# After the term, a rental's files stay this long (locked account) before the purge removes
# them: time to ask for a last download.
RENTAL_DATA_RETENTION_DAYS = _rental.LOCAGPU_RENTAL_DATA_RETENTION_DAYS
# Downloads of an ended rental's files (hosts.views.order_files): each one reads the whole
# workspace on its host, so an account gets a few an hour.
RENTAL_FILES_RATE_LIMIT = {"limit": 5, "period": 3600}
# Access is usually ready within a minute of the payment; past this delay without it, the
# order joins the staff's "to handle" queue (orders.queue) and its page says the team knows.
ACCESS_LATE_MINUTES = _rental.LOCAGPU_ACCESS_LATE_MINUTES

CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE: dict[str, dict] = {
    "orders-expire-unpaid": {"task": "orders.tasks.orders_expire_task", "schedule": 30.0},
    "orders-complete-ended": {"task": "orders.tasks.orders_complete_task", "schedule": 60.0},
    # Every minute, so the 1 h reminder before a rental's end leaves with its hour still ahead.
    "orders-remind-ending": {
        "task": "orders.tasks.orders_remind_ending_task",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
    # Rental accounts whose data is past its retention are removed from their hosts.
    "orders-purge-rentals": {
        "task": "hosts.tasks.rentals_purge_task",
        "schedule": 3600.0,
        "options": {"expires": 3600.0},
    },
    # E-mails (sign-up codes, password resets, security notices) not queued: broker down.
    "accounts-mails-unsent": {
        "task": "accounts.tasks.mails_unsent_queue_task",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
    # Sessions past their expiry (Django leaves them to `clearsessions`).
    "accounts-sessions-clear": {
        "task": "accounts.tasks.sessions_clear_expired_task",
        "schedule": 3600.0,
        "options": {"expires": 3600.0},
    },
    # Order events whose dispatch could not be queued (broker down) or was lost with it.
    "orders-dispatch-pending": {
        "task": "orders.tasks.orders_dispatch_pending_task",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
    # Fans out one scan per active chain. Nothing on the chain queue expires: a per-chain
    # "scan queued" marker keeps at most one scan waiting (payments/tasks.py).
    "payments-scan-chains": {
        "task": "payments.tasks.chains_scan_task",
        "schedule": PAYMENTS_SCAN_INTERVAL_SECONDS,
    },
    # Ether sent by contracts (internal transactions) that no scanned transaction shows.
    "payments-native-balances": {
        "task": "payments.tasks.native_balances_check_task",
        "schedule": PAYMENTS_NATIVE_BALANCE_CHECK_SECONDS,
        "options": {"expires": PAYMENTS_NATIVE_BALANCE_CHECK_SECONDS},
    },
    # Refund transactions not final yet: checked again until they are, or refused.
    "payments-refunds-verify": {
        "task": "payments.tasks.refunds_verify_pending_task",
        "schedule": 20.0,
        "options": {"expires": 20.0},
    },
    # Rates from the Chainlink feeds of every active chain, the devnet's mock feeds included.
    "payments-rates": {
        "task": "payments.tasks.rates_refresh_task",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
    # Webhook deliveries whose retry time has come (the rows survive worker restarts).
    "api-webhook-deliveries-due": {
        "task": "api.tasks.webhook_deliveries_due_task",
        "schedule": 10.0,
        "options": {"expires": 20.0},
    },
}

# --- Store -----------------------------------------------------------------------
STORE_CURRENCY = _store.STORE_CURRENCY
STORE_NAME = "LocaGPU"
# Absolute links in e-mails.
SITE_URL = _store.SITE_URL
# Shown in the footer and e-mails: where customers write with their order number.
SUPPORT_EMAIL = _store.SUPPORT_EMAIL
ORDER_PAYMENT_WINDOW = timedelta(minutes=_store.ORDER_PAYMENT_WINDOW_MINUTES)
# The most one account holds unpaid (orders.ceiling), so that no account can hold the stock:
# orders awaiting payment and their GPUs, lower until the account's first payment.
ORDERS_UNPAID_CEILING = {
    "orders": _store.ORDERS_UNPAID_MAX_ORDERS,
    "units": _store.ORDERS_UNPAID_MAX_UNITS,
}
ORDERS_NEW_ACCOUNT_UNPAID_CEILING = {
    "orders": _store.ORDERS_NEW_ACCOUNT_UNPAID_MAX_ORDERS,
    "units": _store.ORDERS_NEW_ACCOUNT_UNPAID_MAX_UNITS,
}
# An order must name at least one SSH key (orders.services.order_keys_required): on once
# machines are set up automatically with the order's keys.
ORDERS_SSH_KEY_REQUIRED = _rental.ORDERS_SSH_KEY_REQUIRED
# Lets a monitor read /healthz's details without a staff session.
HEALTHZ_TOKEN = _store.HEALTHZ_TOKEN
# The broker's and the cache's checks answer within this, or count as down (rental.health).
HEALTHZ_CHECKS_TIMEOUT_SECONDS = 1.2
# The people the legal pages name (catalog.legal) besides the seller (BILLING_SELLER below).
STORE_PUBLICATION_DIRECTOR = _store.STORE_PUBLICATION_DIRECTOR
STORE_HOSTING_PROVIDER = _store.STORE_HOSTING_PROVIDER
STORE_MEDIATOR_NAME = _store.STORE_MEDIATOR_NAME
STORE_MEDIATOR_URL = _store.STORE_MEDIATOR_URL

# --- Invoices (billing/) -----------------------------------------------------------
# The seller's legal mentions and the VAT rule, copied onto each invoice when it is issued;
# the terms of sale, the legal notice and the privacy policy name the same seller.
BILLING_SELLER = {
    "name": _billing.BILLING_SELLER_NAME,
    "legal_form": _billing.BILLING_SELLER_LEGAL_FORM,
    "street": _billing.BILLING_SELLER_STREET,
    "postcode": _billing.BILLING_SELLER_POSTCODE,
    "city": _billing.BILLING_SELLER_CITY,
    "country": _billing.BILLING_SELLER_COUNTRY,
    "siren": _billing.BILLING_SELLER_SIREN,
    "siret": _billing.BILLING_SELLER_SIRET,
    "rcs": _billing.BILLING_SELLER_RCS,
    "vat_number": _billing.BILLING_SELLER_VAT_NUMBER,
}
BILLING_VAT_RATE = _billing.BILLING_VAT_RATE
BILLING_VAT_FRANCHISE = _billing.BILLING_VAT_FRANCHISE

# --- Partner REST API (api/) -----------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # First, so an anonymous request gets 401 with `WWW-Authenticate: Api-Key`.
        "api.authentication.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "api.permissions.HasApiScope",
        "api.permissions.HasVerifiedEmail",
    ],
    "DEFAULT_THROTTLE_CLASSES": ["api.throttling.ApiKeyRateThrottle"],
    # Per API key (or per user for a browser session); "I've paid" is also limited per
    # account and per order (PAYMENTS_CLAIM_*_RATE_LIMIT), whatever the key.
    "DEFAULT_THROTTLE_RATES": {"api": _server.API_THROTTLE_RATE},
    "DEFAULT_PARSER_CLASSES": ["api.parsers.BoundedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "api.negotiation.RememberingContentNegotiation",
    "DEFAULT_PAGINATION_CLASS": "api.pagination.ApiPagination",
    "PAGE_SIZE": 20,
    "DEFAULT_SCHEMA_CLASS": "api.schema.ApiAutoSchema",
    "EXCEPTION_HANDLER": "api.errors.api_exception_handler",
    # Anonymous throttles count per client IP, read as for the login limits.
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "LocaGPU partner API",
    "DESCRIPTION": (
        "Rent GPUs for 3, 7 or 30 days and pay in crypto, from your own software. "
        "Authenticate with `Authorization: Api-Key <key>`; create keys on your account's "
        'API keys page. Errors are `{"error": {"code", "message", "fields"}}`.'
    ),
    "VERSION": "1.0.0",
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "OrderStatusEnum": "orders.models.OrderStatus.choices",
        "WebhookEventEnum": "api.models.WebhookEvent.choices",
    },
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}
# Request bodies above this size get a JSON 413 before any parsing.
API_MAX_BODY_BYTES = _server.API_MAX_BODY_BYTES
# Webhook targets must be https and public; development and tests may allow http + loopback.
API_WEBHOOK_ALLOW_LOCAL_TARGETS = _server.API_WEBHOOK_ALLOW_LOCAL_TARGETS
API_WEBHOOK_TIMEOUT_SECONDS = 5
# A receiver that does not even accept the connection quickly is not waited for.
API_WEBHOOK_CONNECT_TIMEOUT_SECONDS = 2
# An answer slower than this counts as a failure towards pausing the endpoint.
API_WEBHOOK_SLOW_SECONDS = 3.0
# After this many failed or slow attempts in a row the endpoint is paused and its owner
# told by e-mail; they resume it through the API.
API_WEBHOOK_PAUSE_AFTER_FAILURES = 5

# --- Security --------------------------------------------------------------------
SESSION_ENGINE = "django.contrib.sessions.backends.db"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Pages load nothing from elsewhere and run no inline script or style: everything is in static/.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": _server.LOG_LEVEL},
    # The invoice PDF's libraries narrate every step at INFO.
    "loggers": {
        name: {"level": "WARNING"} for name in ("weasyprint", "weasyprint.progress", "factur-x")
    },
}
