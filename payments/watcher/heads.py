"""The head follower: a scan on each new block, so the Nth confirmation credits at once.

`manage.py follow_heads` subscribes to `newHeads` over the RPC's WebSocket and runs the
chain's scan (payments.watcher.scanner.chain_scan, the beat's very code) on every head. Heads that
arrive while a scan runs make one more scan, not one each. One follower per chain at a
time: a lease, held as a PostgreSQL advisory lock on a connection of its own, which the
server releases the moment the process dies. A lost socket reconnects with back-off; the
beat's scan stays the safety net meanwhile, and chain_scan's own lock keeps the two from
scanning one chain at once.
"""

import asyncio
import json
import logging
import threading
from contextlib import suppress

import websockets
from django.conf import settings
from django.db import close_old_connections, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from websockets.asyncio.client import connect

from payments.models import Chain
from payments.watcher.rpc import RpcClient
from payments.watcher.scanner import chain_scan, client_for

logger = logging.getLogger(__name__)
# Lease keys: this namespace in the high 32 bits, the chain's pk in the low ones.
LEASE_NAMESPACE = 0x4845_4144  # "HEAD"
# A scan skipped on the chain's lock (the beat's scan runs) is tried again this soon: the
# head that brought a confirmation must not wait for the next one.
SKIPPED_RETRY_SECONDS = 0.05
LEASE_CHECK_SECONDS = 10.0


def ws_url_for(rpc_url: str) -> str:
    """The WebSocket URL of an HTTP RPC URL: same host, port and path (anvil, most providers)."""
    for http, ws in (("https://", "wss://"), ("http://", "ws://")):
        if rpc_url.startswith(http):
            return ws + rpc_url[len(http) :]
    return rpc_url


class ChainLease:
    """Who follows the chain. On SQLite (`make run`, one process of each kind) there is no
    one to share with: the lease is always granted."""

    def __init__(self, chain_pk: int):
        self.key = (LEASE_NAMESPACE << 32) | chain_pk
        self.connection: BaseDatabaseWrapper | None = None

    def acquire(self) -> bool:
        if connections["default"].vendor != "postgresql":
            return True
        self.release()
        self.connection = connection = connections.create_connection("default")
        # Used from the event loop's worker threads, one call at a time.
        connection.inc_thread_sharing()
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [self.key])
            held = cursor.fetchone()[0]
        if not held:
            self.release()
        return held

    def still_held(self) -> bool:
        if self.connection is None:
            return connections["default"].vendor != "postgresql"
        try:
            # The lock lives as long as its session: a live session still holds it.
            with self.connection.cursor() as cursor:
                cursor.execute("SELECT 1")
            return True
        except Exception:  # the session is gone, and the lock with it
            logger.warning("lease connection lost (key %s)", self.key)
            return False

    def release(self) -> None:
        if self.connection is not None:
            # Closing the session releases its advisory locks.
            with suppress(Exception):
                self.connection.close()
            self.connection = None


def _scan(chain_pk: int, client: RpcClient) -> None:
    """One scan, run in a worker thread with its own database connection."""
    close_old_connections()
    chain = Chain.objects.filter(pk=chain_pk, is_active=True).first()
    if chain is None:
        return
    while chain_scan(chain=chain, client=client).skipped:
        threading.Event().wait(SKIPPED_RETRY_SECONDS)


class HeadFollower:
    def __init__(self, chain: Chain, *, ws_url: str | None = None):
        self.chain_pk = chain.pk
        self.name = str(chain)
        self.ws_url = ws_url or ws_url_for(chain.rpc_url)
        self.client = client_for(chain)
        self.lease = ChainLease(chain.pk)
        self.heads = 0

    async def run(self) -> None:
        delay = settings.PAYMENTS_HEADS_RECONNECT_SECONDS
        try:
            while True:
                if not await asyncio.to_thread(self.lease.acquire):
                    await asyncio.sleep(LEASE_CHECK_SECONDS)
                    continue
                try:
                    await self._follow()
                except (OSError, websockets.WebSocketException, TimeoutError) as exc:
                    logger.warning("%s: head subscription lost: %s", self.name, exc)
                except Exception:  # whatever it was, the beat covers while this reconnects
                    logger.exception("%s: head follower failed", self.name)
                else:
                    delay = settings.PAYMENTS_HEADS_RECONNECT_SECONDS
                await asyncio.sleep(delay)
                delay = min(delay * 2, settings.PAYMENTS_HEADS_RECONNECT_MAX_SECONDS)
        finally:
            await asyncio.to_thread(self.lease.release)

    async def _follow(self) -> None:
        """Until the socket closes or the lease is lost."""
        async with connect(self.ws_url, open_timeout=10, max_size=2**22) as socket:
            await socket.send(
                json.dumps(
                    {"jsonrpc": "2.0", "id": 1, "method": "eth_subscribe", "params": ["newHeads"]}
                )
            )
            answer = json.loads(await asyncio.wait_for(socket.recv(), timeout=10))
            if "result" not in answer:
                logger.warning("%s: eth_subscribe refused: %s", self.name, answer)
                return
            logger.info("%s: following heads at %s", self.name, self.ws_url)
            wake = asyncio.Event()
            wake.set()  # catch up on what happened while no one followed
            scanner = asyncio.create_task(self._scan_on_wake(wake))
            try:
                while True:
                    try:
                        message = await asyncio.wait_for(socket.recv(), LEASE_CHECK_SECONDS)
                    except TimeoutError:
                        if not await asyncio.to_thread(self.lease.still_held):
                            return
                        continue
                    if '"eth_subscription"' in message:
                        self.heads += 1
                        wake.set()
            finally:
                scanner.cancel()
                with suppress(asyncio.CancelledError):
                    await scanner

    async def _scan_on_wake(self, wake: asyncio.Event) -> None:
        while True:
            await wake.wait()
            wake.clear()  # heads arriving during the scan make one more scan
            try:
                await asyncio.to_thread(_scan, self.chain_pk, self.client)
            except Exception:  # the beat's scan remains; the next head tries again
                logger.exception("%s: scan on a new head failed", self.name)


async def heads_follow(followers: list[HeadFollower]) -> None:
    await asyncio.gather(*(follower.run() for follower in followers))
