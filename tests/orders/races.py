"""Buyers racing for the same units, each on its own database connection."""

import threading

from django.db import connection
from django.test import override_settings

from orders.services import OrderError, order_create
from tests.factories import UserFactory, accepted_terms

# The buyers queue on one row: on a loaded machine the last may wait past production's
# lock_timeout (2 s: a 503 then, nothing held). Here each waits its turn, so that the race, not
# the machine's speed, decides who gets the slots.
PATIENCE = 60


def buyers_race(*, gpu, environment, quantity: int, buyers: int = 20) -> list[str]:
    """`buyers` customers order at once; returns "ordered" or the refusal code of each."""
    users = [UserFactory() for _ in range(buyers)]
    start = threading.Barrier(buyers)
    outcomes: list[str] = []
    lock = threading.Lock()

    def buy(user):
        try:
            with connection.cursor() as cursor:
                cursor.execute(f"SET lock_timeout = '{PATIENCE}s'")
                cursor.execute(f"SET statement_timeout = '{PATIENCE}s'")
            start.wait()
            order_create(
                terms=accepted_terms(),
                user=user,
                gpu=gpu,
                environment=environment,
                quantity=quantity,
                term_days=7,
            )
            result = "ordered"
        except OrderError as error:
            result = error.code
        finally:
            connection.close()
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=buy, args=(user,)) for user in users]
    with override_settings(DATABASE_STATEMENT_TIMEOUT_SECONDS=PATIENCE):  # rental.database
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return outcomes
