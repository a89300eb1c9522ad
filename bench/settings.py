"""Settings for `make bench`: production's, on the bench's own database, over plain HTTP.

The web pages are served exactly as in production (DEBUG off, persistent database
connections, Redis cache for the API throttle) except for what a loopback benchmark cannot
have: TLS (no HTTPS redirect) and outgoing mail or Celery queues (kept in memory).
"""

import os

from bench.common import BENCH_DATABASE, postgres_base

# Forced, not defaulted: a DATABASE_URL left in the shell must never point the bench (which
# drops its database at start) at another database.
os.environ["DATABASE_URL"] = f"{postgres_base()}/{BENCH_DATABASE}"
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-not-a-secret-not-a-secret")
# What production requires from its environment; the bench keeps tasks and mail in memory
# (below), so these only have to pass validation. BENCH_REDIS_URL gives runs side by side a
# Redis database each (keys are prefixed anyway).
os.environ.setdefault("BENCH_REDIS_URL", "redis://127.0.0.1:6379/12")
os.environ.setdefault("CELERY_BROKER_URL", os.environ["BENCH_REDIS_URL"])
os.environ["REDIS_CACHE_URL"] = os.environ["BENCH_REDIS_URL"]
os.environ.setdefault("SITE_URL", "https://bench.invalid")
os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1")
os.environ.setdefault("LOG_LEVEL", "WARNING")
# Production refuses to start without these; the bench replaces the broker (below) and sends
# no e-mail, so they only have to pass the checks.
os.environ.setdefault("CELERY_BROKER_URL", os.environ["BENCH_REDIS_URL"])
os.environ.setdefault("SITE_URL", "https://bench.invalid")

from rental.settings.production import *  # noqa: F403
from rental.settings.production import (
    CATALOG_PAGE_CACHE,
    CATALOG_PAGES,
    REDIS_CACHE_OPTIONS,
    RELEASE,
)

ROOT_URLCONF = "bench.urls"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]
# wrk speaks plain HTTP to 127.0.0.1; production sits behind a TLS proxy instead.
SECURE_SSL_REDIRECT = False

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": os.environ["BENCH_REDIS_URL"],
        "KEY_PREFIX": BENCH_DATABASE,
        "OPTIONS": REDIS_CACHE_OPTIONS,
        "VERSION": RELEASE,
    },
    CATALOG_PAGE_CACHE: CATALOG_PAGES,
}
# The throttle runs at production's rates (REST_FRAMEWORK): wrk's connections share the 16
# customers' keys out (bench/pool.lua), so no key nears its rate within a run.
# Nothing leaves the machine: e-mails stay in memory, Celery tasks run inline.
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
CELERY_BROKER_URL = "memory://localhost/"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = True
