"""The test suite: real PostgreSQL and Redis on this machine (see tests/conftest.py)."""

from .base import *  # noqa: F403
from .base import env

DATABASES = {
    "default": env.db("DATABASE_URL", default="postgres://postgres@127.0.0.1:5432/rental"),
}
# Two suites may run at once on one machine (two developers, or CI beside a developer):
# each picks its own test database and Redis databases through these variables.
DATABASES["default"]["TEST"] = {"NAME": env("TEST_DB_NAME", default="test_rental")}
DATABASES["default"]["OPTIONS"] = POSTGRESQL_OPTIONS  # noqa: F405
REDIS_URL = env("REDIS_URL", default="redis://127.0.0.1:6379")
_broker_db = env.int("TEST_REDIS_BROKER_DB", default=14)
_cache_db = env.int("TEST_REDIS_CACHE_DB", default=15)
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=f"{REDIS_URL}/{_broker_db}")
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default=f"{REDIS_URL}/{_broker_db}")
CELERY_BROKER_TRANSPORT_OPTIONS = REDIS_BROKER_TRANSPORT_OPTIONS  # noqa: F405
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": f"{REDIS_URL}/{_cache_db}",
        "OPTIONS": REDIS_CACHE_OPTIONS,  # noqa: F405
        "KEY_PREFIX": "test",
        "VERSION": RELEASE,  # noqa: F405
    },
    CATALOG_PAGE_CACHE: CATALOG_PAGES,  # noqa: F405
}
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_AUTOREFRESH = True
