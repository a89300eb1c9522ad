"""The environment of a production process, for tests that start one in a subprocess."""

SECRET = "a-long-random-production-key-0123456789-abcdefghijklmnop"
PRODUCTION = {
    "DJANGO_SETTINGS_MODULE": "rental.settings.production",
    "DJANGO_SECRET_KEY": SECRET,
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/rental",
    "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
    "REDIS_CACHE_URL": "redis://127.0.0.1:6379/1",
    "ALLOWED_HOSTS": "gpu.example.com",
    "SITE_URL": "https://gpu.example.com",
}
