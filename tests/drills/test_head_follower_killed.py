"""Drill: the head follower (manage.py follow_heads) credits on the head that brings the Nth
confirmation; SIGKILLed in the middle of a block's scan, the beat still credits, and the
lease it held is taken by the next follower. The test reads who holds the lease from
PostgreSQL (pg_locks) and never takes it itself."""

import time

import pytest
from django.db import connection

from orders.models import Order, OrderStatus
from payments.models import Transfer
from payments.watcher.heads import LEASE_NAMESPACE, ws_url_for
from tests.drills.processes import beat_command, head_follower_command, wait_until
from tests.payments.helpers import order_with_invoice
from tests.payments.proxy import HoldingRpcProxy

pytestmark = [pytest.mark.chain, pytest.mark.django_db(transaction=True)]
BEAT_SECONDS = 1.0


def _paid(invoice) -> bool:
    return Order.objects.filter(pk=invoice.order_id, status=OrderStatus.PAID).exists()


def _follower(devnet, process_factory, name: str = "follower"):
    """A `follow_heads` process whose database sessions carry `name` (libpq's PGAPPNAME)."""
    follower = process_factory(
        head_follower_command(devnet.chain.chain_id, ws_url_for(devnet.node.url)),
        PGAPPNAME=name,
    )
    follower.start(ready="Following")
    return follower


def _lease_holder(chain) -> str | None:
    """The name of the process whose session holds the chain's lease (ChainLease: an advisory
    lock on one 64-bit key, its halves in classid and objid), None when it is free."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT activity.application_name FROM pg_locks lock"
            " JOIN pg_stat_activity activity ON activity.pid = lock.pid"
            " WHERE lock.locktype = 'advisory' AND lock.granted"
            " AND lock.classid = %s::oid AND lock.objid = %s::oid AND lock.objsubid = 1",
            [LEASE_NAMESPACE, chain.pk],
        )
        row = cursor.fetchone()
    return row[0] if row else None


def test_the_follower_credits_on_the_head_of_the_nth_confirmation_without_any_beat(
    devnet, process_factory
):
    follower = _follower(devnet, process_factory)
    invoice = order_with_invoice(devnet.usdc)
    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    wait_until(invoice.transfers.exists, timeout=20, what="the transfer seen")
    assert not _paid(invoice)

    devnet.mine(devnet.chain.confirmations - 1)  # the Nth confirmation

    wait_until(lambda: _paid(invoice), timeout=20, what="the order paid by the follower")
    assert "Traceback" not in follower.log()


def test_a_second_follower_waits_for_the_lease(devnet, process_factory):
    _follower(devnet, process_factory, "first-follower")
    wait_until(
        lambda: _lease_holder(devnet.chain) == "first-follower", timeout=20, what="the lease"
    )
    second = _follower(devnet, process_factory, "second-follower")
    time.sleep(1)  # it tries at once after "Following", then every LEASE_CHECK_SECONDS
    assert _lease_holder(devnet.chain) == "first-follower", second.log()[-3000:]


def test_follower_killed_mid_block_the_beat_credits_within_beat_plus_two_seconds(
    devnet, process_factory, worker_factory
):
    invoice = order_with_invoice(devnet.usdc)
    with HoldingRpcProxy(devnet.node.url, hold_call=1) as proxy:
        devnet.rpc_url_use(proxy.url)
        # Heads from anvil, scans via the proxy.
        follower = _follower(devnet, process_factory, "first-follower")
        devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
        assert proxy.holding.wait(timeout=20), follower.log()[-3000:]
        assert _lease_holder(devnet.chain) == "first-follower"
        follower.kill()  # mid-block: its scan held on eth_getLogs
        proxy.released.set()
        # The lease died with the process.
        wait_until(
            lambda: _lease_holder(devnet.chain) is None, timeout=10, what="the lease released"
        )
        assert not Transfer.objects.exists()

        worker = worker_factory(queues=("chain", "default"))
        worker.start()
        beat = process_factory(
            beat_command(worker.workdir / "beat-schedule"),
            PAYMENTS_SCAN_INTERVAL_SECONDS=str(BEAT_SECONDS),
            PAYMENTS_CURSOR_MAX_AGE_SECONDS="10",
        )
        beat.start(ready="beat: Starting")
        devnet.mine(devnet.chain.confirmations)
        nth = time.monotonic()
        wait_until(lambda: _paid(invoice), timeout=30, what="the order paid by the beat")
        took = time.monotonic() - nth

        # The next follower takes the lease over.
        second = _follower(devnet, process_factory, "second-follower")
        wait_until(
            lambda: _lease_holder(devnet.chain) == "second-follower",
            timeout=20,
            what=f"the lease taken by the second follower:\n{second.log()[-3000:]}",
        )

    assert Transfer.objects.filter(invoice=invoice).count() == 1
    # The acceptance bound of the issue; the drill's one timing check, with the margin it sets.
    assert took <= BEAT_SECONDS + 2.0, f"paid {took:.2f} s after the Nth confirmation"
