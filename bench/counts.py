"""SQL queries and cache round trips per request, for each page of the HTTP rows.

Counted in this process with Django's test client on the same database and Redis as
gunicorn (bench.settings), on a request made after a first one has warmed the caches up.
"""

from dataclasses import dataclass

from bench.people import Person
from bench.web import Page


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
