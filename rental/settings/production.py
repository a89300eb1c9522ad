"""Production: every secret and every shared service comes from the environment, and the
app refuses to start without them (rental/settings/environment.py says what is required)."""

from .base import *  # noqa: F403
from .base import env
from .environment import ProductionSettings

# Checked before anything else: one message lists every missing or unfit variable.
_production = ProductionSettings.from_environment()

SECRET_KEY = _production.DJANGO_SECRET_KEY
DEBUG = False
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS")

EMAIL_CONFIG = env.email_url("EMAIL_URL", default="smtp://localhost:25")
vars().update(EMAIL_CONFIG)

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = _production.DJANGO_SECURE_SSL_REDIRECT
# Container health checks call these over plain HTTP from inside.
SECURE_REDIRECT_EXEMPT = [r"^healthz(/live|/ready)?$"]
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = _production.DJANGO_SECURE_HSTS_SECONDS
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
