"""Development on one machine (`make run`): SQLite and a filesystem broker by default."""

from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DJANGO_DEBUG", default=True)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
# Webhook receivers on this machine (http://127.0.0.1:...) are fine while developing.
API_WEBHOOK_ALLOW_LOCAL_TARGETS = True
# `make run` takes payments on the devnet (chain 31337): not ready until `setup_devnet`
# registered it, unless PAYMENTS_READY_CHAIN_IDS says otherwise.
PAYMENTS_READY_CHAIN_IDS = PAYMENTS_READY_CHAIN_IDS or [31337]  # noqa: F405
