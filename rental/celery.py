import logging
import os
from functools import partial

from celery import Celery
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerUnavailable

from rental import kombu_filesystem

# Servers (gunicorn, Celery) run production unless told otherwise; manage.py stays on local.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rental.settings.production")

logger = logging.getLogger(__name__)
kombu_filesystem.register()

app = Celery("rental")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="rental.ping")
def ping() -> str:
    """Smallest possible round trip through the broker and a worker."""
    return "pong"


def enqueue_after_commit(task, *args, **options) -> None:
    """Queue `task` once the current transaction commits.

    The data is already saved by then: a broker outage must not turn that into an error page,
    so it is logged. Every caller's work is also found again by a beat sweep (pending order
    events, due webhook deliveries, the chain scan), which queues it once the broker is back.
    """
    transaction.on_commit(partial(_enqueue, task, args, options))


def _enqueue(task, args: tuple, options: dict) -> None:
    try:
        task.apply_async(args, **options)
    except BrokerUnavailable as exc:
        logger.warning("%s%r not queued, left to its sweep: %s", task.name, args, exc)
