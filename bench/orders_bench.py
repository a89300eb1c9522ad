"""Row 2: many buyers at once on a GPU with few units (orders.services.order_create).

Each buyer is a forked process with its own PostgreSQL connection, as gunicorn's workers
are: threads would mostly measure the GIL handing itself round while one of them holds the
GPU's row lock.
"""

import contextlib
import multiprocessing
import queue
import threading
import time
from dataclasses import dataclass, field

from bench.common import progress


@dataclass
class OversellResult:
    units_total: int
    attempts: int
    concurrency: int
    created: int = 0
    refused: int = 0
    failed: list[str] = field(default_factory=list)
    units_held: int = 0
    slots_held_twice: int = 0
    elapsed: float = 0.0
    sold_out_after: float = 0.0  # when the last successful order committed

    @property
    def oversold(self) -> int:
        return max(0, self.units_held - self.units_total)

    @property
    def orders_per_second(self) -> float:
        return self.created / self.sold_out_after if self.sold_out_after else 0.0

    @property
    def attempts_per_second(self) -> float:
        return self.attempts / self.elapsed if self.elapsed else 0.0


def _buyer(user_id, gpu_id, environment_id, tickets, attempts, deadline, barrier, results):
    """One buyer process: takes attempt tickets until they run out, one unit per order."""
    from django.db import connection

    from accounts.models import User
    from catalog.models import Environment, GpuModel
    from orders.services import OrderError, order_create
    from tests.factories import accepted_terms

    created = refused = 0
    failed: list[str] = []
    last_success = 0.0
    try:
        user = User.objects.get(pk=user_id)
        gpu = GpuModel.objects.get(pk=gpu_id)
        environment = Environment.objects.get(pk=environment_id)
        barrier.wait(timeout=30)
        while time.time() < deadline:
            with tickets.get_lock():
                ticket = tickets.value
                tickets.value += 1
            if ticket >= attempts:
                break
            try:
                order_create(
                    terms=accepted_terms(),
                    user=user,
                    gpu=gpu,
                    environment=environment,
                    quantity=1,
                    term_days=7,
                )
            except OrderError as error:
                if error.code == "not_enough_units":
                    refused += 1
                else:
                    failed.append(str(error.message))
            except Exception as error:  # reported in the table, not hidden
                failed.append(f"{type(error).__name__}: {error}")
            else:
                created += 1
                last_success = time.time()
    except Exception as error:  # a buyer that could not start is a failure too
        barrier.abort()  # nobody waits for it
        failed.append(f"{type(error).__name__}: {error}")
    finally:
        connection.close()
        results.put((created, refused, failed, last_success))


def oversell_run(
    *, units: int = 50, attempts: int = 200, concurrency: int = 16, timeout: float = 60.0
) -> OversellResult:
    """`attempts` orders of one unit by `concurrency` buyers at once, on a new GPU."""
    from django.db import connections
    from django.db.models import Count

    from accounts.models import User
    from catalog.models import Environment
    from hosts.models import SlotHold
    from orders.models import Order
    from orders.stock import gpus_with_availability
    from tests.factories import GpuModelFactory

    run = f"{concurrency}x{attempts}"
    gpu = GpuModelFactory(slug=f"bench-race-{run}", name=f"Bench race {run}", units_total=units)
    environment = Environment.objects.get(slug="pytorch")
    # No password: hashing one per buyer would cost more than the whole race.
    buyers = [
        User.objects.create_user(f"buyer{n}-{run}@bench.invalid", first_name="Bench", last_name=run)
        for n in range(concurrency)
    ]
    result = OversellResult(units_total=units, attempts=attempts, concurrency=concurrency)
    # Forked children must not share the parent's database socket.
    connections.close_all()
    context = multiprocessing.get_context("fork")
    tickets = context.Value("i", 0)
    barrier = context.Barrier(concurrency + 1)
    results = context.Queue()
    deadline = time.time() + timeout
    processes = [
        context.Process(
            target=_buyer,
            args=(user.pk, gpu.pk, environment.pk, tickets, attempts, deadline, barrier, results),
            daemon=True,
        )
        for user in buyers
    ]
    progress(f"orders: {attempts} attempts, {concurrency} buyer processes, {units} units")
    try:
        for process in processes:
            process.start()
        # A buyer that could not start breaks the barrier; its report says why.
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait(timeout=30)
        begin = time.time()
        last_success = begin
        for _ in processes:
            try:
                created, refused, failed, last = results.get(
                    timeout=max(1.0, deadline - time.time() + 10)
                )
            except queue.Empty:
                result.failed.append("a buyer process did not report in time")
                break
            result.created += created
            result.refused += refused
            result.failed += failed
            last_success = max(last_success, last)
        result.elapsed = time.time() - begin
        result.sold_out_after = last_success - begin
    finally:
        for process in processes:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join(timeout=5)
    # Counted two ways: the holds the catalog shows, and the orders' rows themselves.
    shown = gpus_with_availability().get(pk=gpu.pk).units_held
    stored = sum(Order.objects.filter(gpu=gpu).values_list("quantity", flat=True))
    result.units_held = max(shown, stored)
    # The constraint makes this 0 by construction; counted so the row proves it.
    result.slots_held_twice = (
        SlotHold.objects.filter(host__gpu=gpu, released_at__isnull=True)
        .values("host", "index")
        .annotate(holders=Count("pk"))
        .filter(holders__gt=1)
        .count()
    )
    return result
