"""A PostgreSQL that hangs: 50 page and API requests to a real gunicorn during the hang each
answer within 5 s (a 503, the store's page or the API's error, never a 500), no worker is
killed, /healthz/ready answers 503 within 2 s; once the database answers again, so does every
page within 5 s.

The hang is a TCP proxy of the test's own between gunicorn and the shared PostgreSQL, which
stops passing bytes either way: what SIGSTOP on the server does to its clients (connections
accepted by the kernel, nothing answered), without stopping a server other suites use.
"""

import selectors
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest
from django.db import connection

from accounts.services import api_key_create
from tests.drills.processes import PYTHON, ManagedProcess, database_url, wait_until
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

SLOWEST_ANSWER = 5.0
HEALTH_ANSWER = 2.0
RECOVERY = 5.0


class FreezingProxy:
    """Forwards 127.0.0.1:<port> to PostgreSQL; `frozen` holds every byte where it is."""

    def __init__(self, upstream: tuple[str, int]):
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.flowing = threading.Event()
        self.flowing.set()
        self.closing = False
        threading.Thread(target=self._accept, daemon=True).start()

    def freeze(self) -> None:
        self.flowing.clear()

    def thaw(self) -> None:
        self.flowing.set()

    def close(self) -> None:
        self.closing = True
        self.flowing.set()
        self.listener.close()

    def _accept(self) -> None:
        while not self.closing:
            try:
                client, _address = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._pipe, args=(client,), daemon=True).start()

    def _pipe(self, client: socket.socket) -> None:
        self.flowing.wait()
        server = socket.create_connection(self.upstream)
        peers = {client: server, server: client}
        selector = selectors.DefaultSelector()
        for side in peers:
            selector.register(side, selectors.EVENT_READ)
        try:
            while not self.closing:
                for key, _events in selector.select(timeout=0.5):
                    self.flowing.wait()
                    data = key.fileobj.recv(65536)
                    if not data:
                        return
                    peers[key.fileobj].sendall(data)
        except OSError:
            return
        finally:
            client.close()
            server.close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def web(tmp_path, gpu, redis_server):
    settings_dict = connection.settings_dict
    proxy = FreezingProxy(
        (settings_dict["HOST"] or "127.0.0.1", int(settings_dict["PORT"] or 5432))
    )
    url = database_url(settings_dict).replace(
        f"@{settings_dict['HOST'] or '127.0.0.1'}:{settings_dict['PORT'] or '5432'}/",
        f"@127.0.0.1:{proxy.port}/",
    )
    web_port = _free_port()
    command = [
        str(PYTHON.parent / "gunicorn"),
        "rental.wsgi:application",
        f"--bind=127.0.0.1:{web_port}",
        "--workers=4",
        "--timeout=30",
    ]
    server = ManagedProcess(
        command,
        database_url=url,
        broker_url=redis_server.url,
        workdir=tmp_path,
        REDIS_CACHE_URL=redis_server.url[:-1] + "1",
        # The shortest timeouts the settings take: each of the 50 requests costs one of them,
        # one after the other (production's 3 s each would make this drill two minutes long).
        DATABASE_STATEMENT_TIMEOUT_SECONDS="1",
        DATABASE_LOCK_TIMEOUT_SECONDS="1",
        DATABASE_CONNECT_TIMEOUT_SECONDS="2",
    )
    server.start(ready="Booting worker")
    base = f"http://127.0.0.1:{web_port}"

    def ready() -> bool:
        try:
            return _get(base + "/healthz/ready")[0] == 200
        except OSError:  # not answering yet: four workers importing Django on a busy machine
            return False

    wait_until(ready, timeout=90, what="web ready")
    try:
        yield proxy, base, server
    finally:
        proxy.thaw()
        server.stop()
        proxy.close()


def _get(url: str, **headers) -> tuple[int, float, str]:
    started = time.monotonic()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=20) as r:
            status, body = r.status, r.read().decode()
    except urllib.error.HTTPError as error:
        status, body = error.code, error.read().decode()
    return status, time.monotonic() - started, body


def test_a_hung_database_answers_503_in_seconds_and_kills_no_worker(web):
    proxy, base, server = web
    key = {"Authorization": f"Api-Key {api_key_create(user=UserFactory(), name='drill')[1]}"}
    pages = [
        (base + "/fr/", {}),
        (base + "/fr/gpus/h100-sxm/", {}),
        (base + "/api/v1/gpus/", key),
        (base + "/api/v1/orders/", key),
        (base + "/fr/accounts/login/", {}),
    ]
    for url, headers in pages:
        assert _get(url, **headers)[0] == 200, url

    proxy.freeze()
    answers = [(*_get(url, **headers), url) for url, headers in pages * 10]
    health = _get(base + "/healthz/ready")

    slow = [(url, seconds) for _status, seconds, _body, url in answers if seconds > SLOWEST_ANSWER]
    assert not slow
    assert {status for status, *_rest in answers} <= {200, 503}
    api = [(status, body) for status, _s, body, url in answers if "/api/" in url]
    assert all(status == 503 and '"unavailable"' in body for status, body in api)
    # Pages not in the anonymous cache: the store's own 503 page.
    pages_503 = [body for status, _s, body, url in answers if status == 503 and "/api/" not in url]
    assert all("De retour dans un instant" in body for body in pages_503)
    assert health[0] == 503 and health[1] < HEALTH_ANSWER

    proxy.thaw()
    thawed = time.monotonic()
    wait_until(
        lambda: all(_get(url, **headers)[0] == 200 for url, headers in pages),
        timeout=RECOVERY,
        what="every page answering again",
    )
    assert time.monotonic() - thawed < RECOVERY
    assert "WORKER TIMEOUT" not in server.log()
