"""Development on one machine (`make run`): SQLite and a filesystem broker by default."""

from .base import *  # noqa: F403
from .base import LOGGING, VAR_DIR, env
from .environment import LocalSettings

_local = LocalSettings.from_environment()

DEBUG = _local.DJANGO_DEBUG
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
# E-mails as a developer reads them (rental/console.py): the code of a sign-up on its own line.
EMAIL_BACKEND = "rental.console.EmailBackend"
# runserver's access log without the polls every open order page sends every 3 s: Django's
# own handler and format for it, with the filter.
LOGGING = {
    **LOGGING,
    "filters": {"quiet_polls": {"()": "rental.console.QuietPolls"}},
    "formatters": {
        "django.server": {
            "()": "django.utils.log.ServerFormatter",
            "format": "[{server_time}] {message}",
            "style": "{",
        }
    },
    "handlers": {
        **LOGGING["handlers"],
        "django.server": {"class": "logging.StreamHandler", "formatter": "django.server"},
    },
    "loggers": {
        **LOGGING["loggers"],
        "django.server": {
            "handlers": ["django.server"],
            "filters": ["quiet_polls"],
            "level": "INFO",
            "propagate": False,
        },
    },
}
# Webhook receivers on this machine (http://127.0.0.1:...) are fine while developing.
API_WEBHOOK_ALLOW_LOCAL_TARGETS = True
# The GPU host of this machine: an sshd on 127.0.0.1 the Procfile starts (`manage.py
# local_gpu_host` writes its keys and config under var/ssh), reached with the store's key there.
LOCAL_GPU_HOST_PORT = _local.LOCAGPU_LOCAL_SSH_PORT
PROVISIONING_KEY_FILE = PROVISIONING_KEY_FILE or str(VAR_DIR / "ssh" / "store_key")  # noqa: F405
PROVISIONING_KNOWN_HOSTS = PROVISIONING_KNOWN_HOSTS or str(VAR_DIR / "ssh" / "known_hosts")  # noqa: F405
# The devnet's first paying account (anvil's account 1) sends the refunds while developing.
PAYMENTS_REFUND_WALLETS = PAYMENTS_REFUND_WALLETS or ("0x70997970c51812dc3a010c7d01b50e0d17dc79c8",)  # noqa: F405
# `make run` takes payments on the devnet (chain 31337): not ready until `setup_devnet`
# registered it, unless PAYMENTS_READY_CHAIN_IDS says otherwise.
PAYMENTS_READY_CHAIN_IDS = PAYMENTS_READY_CHAIN_IDS or [31337]  # noqa: F405
