import logging
import os
import time
from functools import partial

from celery import Celery, Task
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerUnavailable
from redis.exceptions import RedisError

# Queries of the workers under their deadline too (connection_created's receiver).
from rental import (
    database,  # noqa: F401
    kombu_filesystem,
)

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


def task_named(name: str) -> Task:
    """The task registered as `name` ("orders.tasks.order_event_dispatch_task").

    Services queue tasks by name and only tasks modules import services: a tasks module imports
    the services it runs, so a service importing it back would tie both, and everything between
    them, into one import circle (bin/import_cycles.py). A wrong name fails here, when queued."""
    if name not in app.tasks:
        # A worker imports every app's tasks module as it starts; a web process does it here,
        # the first time it queues a task.
        app.loader.import_default_modules()
    return app.tasks[name]


def enqueue_after_commit(name: str, *args, **options) -> None:
    """Queue the task named `name` once the current transaction commits.

    The data is already saved by then: a broker outage must not turn that into an error page,
    so it is logged. Every caller's work is also found again by a beat sweep (pending order
    events, due webhook deliveries, the chain scan), which queues it once the broker is back.
    """
    transaction.on_commit(partial(_enqueue, task_named(name), args, options))


# A broker that made us wait for nothing (it hangs: its socket timeouts ran out) is not asked
# again before BROKER_RESTS_FOR seconds, or each request would wait as long again. One that
# refuses at once costs nothing and is asked every time.
BROKER_RESTS_FOR = 1.0
HANGING_AFTER = 0.25
_broker_unanswered_at = -BROKER_RESTS_FOR


def _enqueue(task, args: tuple, options: dict) -> None:
    global _broker_unanswered_at
    if time.monotonic() - _broker_unanswered_at < BROKER_RESTS_FOR:
        logger.warning("%s%r not queued, left to its sweep: broker not answering", task.name, args)
        return
    started = time.monotonic()
    try:
        task.apply_async(args, **options)
    # Refused, or not answering in time (a hung Redis may raise its own timeout, not kombu's).
    except (BrokerUnavailable, RedisError, OSError) as exc:
        if time.monotonic() - started >= HANGING_AFTER:
            _broker_unanswered_at = time.monotonic()
        logger.warning("%s%r not queued, left to its sweep: %s", task.name, args, exc)
