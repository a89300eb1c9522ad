"""SQL queries and cache round trips per request, for each page of the HTTP rows.

Counted in this process with Django's test client on the same database and Redis as
gunicorn (bench.settings), on a request made after a first one has warmed the caches up.
"""

import threading
from dataclasses import dataclass
from urllib.parse import urlparse

from bench.people import Person
from bench.web import Page, request_send


@dataclass(frozen=True)
class Counts:
    queries: int
    cache_round_trips: int


def page_counts(page: Page, people: list[Person]) -> Counts:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from tests.redis_calls import redis_sent

    method, path, body, headers = page.requests(people)[0]
    headers = dict(headers)
    cookie = headers.pop("Cookie", None)
    content_type = headers.pop("Content-Type", "application/octet-stream")
    client = Client(SERVER_NAME="127.0.0.1")
    for pair in cookie.split("; ") if cookie else []:
        name, value = pair.split("=", 1)
        client.cookies[name] = value

    def get() -> int:
        response = client.generic(
            method, path, data=body, content_type=content_type, headers=headers
        )
        return response.status_code

    get()
    with CaptureQueriesContext(connection) as queries, redis_sent() as round_trips:
        status = get()
    if status != 200:
        raise RuntimeError(f"{method} {path} answered {status} to the test client")
    return Counts(queries=len(queries), cache_round_trips=len(round_trips))


STOP = "bench-monitor-stop"


@dataclass(frozen=True)
class HitRate:
    requests: int
    rendered: int

    @property
    def rate(self) -> float:
        return 1 - self.rendered / self.requests


def page_hit_rate(base_url: str, page: Page, people: list[Person], *, requests: int) -> HitRate:
    """Of `requests` of `page` sent in turn for each person to gunicorn (its workers share
    the pages out), how many were rendered rather than served from the shared cache: the
    stored pages written, as Redis's MONITOR sees them (this bench's database and key
    prefix only: the server is shared)."""
    import redis
    from django.conf import settings

    location = settings.CACHES["default"]["LOCATION"]
    database = int(urlparse(location).path.strip("/") or 0)
    prefix = f"{settings.CACHES['default']['KEY_PREFIX']}:"
    stores: list[str] = []
    failed: list[BaseException] = []
    monitor_ready = threading.Event()

    def watch() -> None:
        try:
            with redis.Redis.from_url(location).monitor() as monitor:
                monitor_ready.set()
                for command in monitor.listen():
                    text = command["command"]
                    if STOP in text:
                        return
                    ours = command["db"] == database and prefix in text
                    if ours and text.upper().startswith("SET ") and ":answer:page:" in text:
                        stores.append(text[:80])
        except BaseException as error:  # said in the main thread: no figure from half a count
            failed.append(error)
            monitor_ready.set()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    monitor_ready.wait(10)
    pool = page.requests(people)
    for index in range(requests):
        method, path, body, headers = pool[index % len(pool)]
        status, _answer = request_send(base_url, method, path, body, headers)
        if status != 200:
            raise RuntimeError(f"{method} {path} answered {status}")
    redis.Redis.from_url(location).get(STOP)
    watcher.join(10)
    if failed or watcher.is_alive():
        raise RuntimeError(f"Redis MONITOR stopped counting: {failed}")
    return HitRate(requests=requests, rendered=len(stores))
