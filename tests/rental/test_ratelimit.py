"""Fixed-window counters in Redis (rental.ratelimit), through Django's cache API: every use
counted in Redis as it comes, so a key is refused at its rate exactly, even with processes
racing."""

import multiprocessing

import pytest
from django.core.cache import cache

from rental.ratelimit import window_count
from tests.cache import cache_empty
from tests.redis_calls import redis_sent

KEY = "test-window"


@pytest.fixture(autouse=True)
def _empty():
    cache_empty()
    yield
    cache_empty()


def test_each_use_costs_two_small_round_trips_and_is_counted_in_redis():
    window_count(key="another", period=60)  # connected
    with redis_sent() as round_trips:
        uses = [window_count(key=KEY, period=60) for _ in range(5)]
    # Django's incr (EXISTS, INCR); the first finds no window and opens it (SET NX with its
    # expiry) instead of the INCR.
    assert len(round_trips) == 10 and max(round_trips) < 200
    assert [count.uses for count in uses] == [1, 2, 3, 4, 5]
    assert all(0 < count.seconds_left <= 60 for count in uses)
    assert int(cache.get(KEY)) == 5


def test_a_window_that_closed_starts_again_from_one():
    for _ in range(50):
        window_count(key=KEY, period=60)
    cache.delete(KEY)  # the window's expiry in Redis
    assert window_count(key=KEY, period=60).uses == 1


def _use_until_refused(limit: int, start, admitted) -> None:
    start.wait()
    count = 0
    while window_count(key=KEY, period=60).uses <= limit:
        count += 1
    admitted.put(count)


def test_processes_racing_on_one_key_are_let_through_exactly_its_rate():
    processes, limit = 4, 400
    context = multiprocessing.get_context("fork")
    start, admitted = context.Barrier(processes), context.Queue()
    workers = [
        context.Process(target=_use_until_refused, args=(limit, start, admitted))
        for _ in range(processes)
    ]
    for worker in workers:
        worker.start()
    counts = [admitted.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=10)
    assert sum(counts) == limit
    assert int(cache.get(KEY)) == limit + processes  # each one's refused use counted too
