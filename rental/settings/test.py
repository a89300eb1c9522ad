"""The test suite: real PostgreSQL and Redis on this machine (see tests/conftest.py)."""

from .base import *  # noqa: F403
from .base import env

DATABASES = {
    "default": env.db("DATABASE_URL", default="postgres://postgres@127.0.0.1:5432/rental"),
}
DATABASES["default"]["TEST"] = {"NAME": "test_rental"}
REDIS_URL = env("REDIS_URL", default="redis://127.0.0.1:6379")
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=f"{REDIS_URL}/14")
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default=f"{REDIS_URL}/14")
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": f"{REDIS_URL}/15",
        "KEY_PREFIX": "test",
    }
}
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_AUTOREFRESH = True
