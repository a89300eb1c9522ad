"""Drill 4 (issue 10, acceptance 3): customers with slow webhook receivers and a flood of
"I've paid" do not delay another customer's payment.

Real workers, one per queue as in production (chain, default, webhooks), a beat loop that
queues scans every PAYMENTS_SCAN_INTERVAL_SECONDS, 10 webhook endpoints on a receiver that
answers after 4.8 s (5 s is the store's timeout), and 30 claims from 6 API keys of two
accounts. The bound is the issue's: the payment is credited within the beat interval + 2 s
of the block that gives it its Nth confirmation, measured from when that block was mined to
the time the system recorded on the order's "paid" event.
"""

import secrets
import threading
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from accounts.services import api_key_create
from api.models import WebhookDelivery, WebhookEvent
from api.webhooks.services import MAX_ENDPOINTS_PER_USER, webhook_endpoint_create
from orders.models import OrderEvent, OrderStatus
from payments.models import Transfer
from payments.tasks import chains_scan_task
from tests.api.conftest import key_client
from tests.drills.processes import wait_until
from tests.factories import UserFactory
from tests.payments.helpers import order_with_invoice, reload

pytestmark = [pytest.mark.chain, pytest.mark.django_db(transaction=True)]

SLOW_ANSWER_SECONDS = 4.8
ENDPOINTS = 10
CLAIMS = 30
KEYS_PER_ACCOUNT = 3


def _beat(stop: threading.Event) -> None:
    """What celery beat does with the scan entry: queue a chain scan every interval."""
    while not stop.is_set():
        chains_scan_task.delay()
        stop.wait(settings.PAYMENTS_SCAN_INTERVAL_SECONDS)


def _noisy_accounts(devnet, receiver_url: str) -> list[dict]:
    """Two accounts with 5 slow endpoints each (the limit), 3 keys and 3 unpaid orders."""
    accounts = []
    for _account in range(ENDPOINTS // MAX_ENDPOINTS_PER_USER):
        user = UserFactory()
        for n in range(MAX_ENDPOINTS_PER_USER):
            webhook_endpoint_create(
                user=user, url=f"{receiver_url}/{user.pk}/{n}", events=WebhookEvent.values
            )
        keys = [api_key_create(user=user, name=f"key {n}")[1] for n in range(KEYS_PER_ACCOUNT)]
        orders = [order_with_invoice(devnet.usdc, user=user).order for _ in range(KEYS_PER_ACCOUNT)]
        accounts.append({"user": user, "clients": [key_client(k) for k in keys], "orders": orders})
    return accounts


def _claim_flood(accounts) -> list[int]:
    """30 "I've paid", each with a new transaction hash so none is merged into the last."""
    codes = []
    for n in range(CLAIMS):
        account = accounts[n % len(accounts)]
        client = account["clients"][n % KEYS_PER_ACCOUNT]
        order = account["orders"][(n // len(accounts)) % KEYS_PER_ACCOUNT]
        response = client.post(
            f"/api/v1/orders/{order.number}/paid/",
            {"tx_hash": "0x" + secrets.token_hex(32)},
            format="json",
        )
        codes.append(response.status_code)
    return codes


def test_slow_webhooks_and_a_claim_flood_do_not_delay_another_customers_payment(
    devnet, worker_factory, receiver
):
    receiver.delay_seconds = SLOW_ANSWER_SECONDS
    env = {"API_WEBHOOK_ALLOW_LOCAL_TARGETS": "true"}
    for queues, concurrency in ((("chain",), 2), (("default",), 1), (("webhooks",), 2)):
        worker_factory(queues=queues, concurrency=concurrency, **env).start()
    accounts = _noisy_accounts(devnet, receiver.url)
    victim = order_with_invoice(devnet.usdc)

    stop = threading.Event()
    beat = threading.Thread(target=_beat, args=(stop,), daemon=True)
    beat.start()
    try:
        codes = _claim_flood(accounts)
        # The webhook workers are busy with slow receivers and deliveries queue up.
        wait_until(
            lambda: WebhookDelivery.objects.filter(status="pending").count() >= ENDPOINTS * 3,
            timeout=30,
            what="a backlog of webhook deliveries",
        )
        mined_at = {}
        receipt = devnet.receipt(devnet.pay_token(victim.deposit_address, int(victim.amount_due)))
        mined_at[receipt.blockNumber] = timezone.now()
        for _block in range(devnet.chain.confirmations - 1):
            devnet.mine()
            mined_at[devnet.head()] = timezone.now()
        wait_until(
            lambda: reload(victim)[1].status == OrderStatus.PAID,
            timeout=60,
            what="the other customer's order to be paid",
        )
    finally:
        stop.set()
        beat.join(timeout=10)

    paid = OrderEvent.objects.get(
        order_id=victim.order_id, kind=OrderEvent.Kind.STATUS, new_status=OrderStatus.PAID
    )
    transfer = Transfer.objects.get(invoice=victim)
    assert transfer.block_number == receipt.blockNumber
    nth_block = transfer.block_number + devnet.chain.confirmations - 1
    lag = paid.created_at - mined_at[nth_block]
    assert lag <= timedelta(seconds=settings.PAYMENTS_SCAN_INTERVAL_SECONDS + 2), lag

    # The load was real: claims past the per-order and per-account limits were refused,
    # the accepted ones reached the chain queue as checks and the webhook queue as
    # deliveries, many of which were still waiting when the payment was credited.
    assert 0 < codes.count(202) < CLAIMS and set(codes) == {202, 429}, codes
    claims = OrderEvent.objects.filter(kind=OrderEvent.Kind.PAYMENT_CLAIMED)
    assert claims.count() == codes.count(202)
    waiting = WebhookDelivery.objects.filter(created_at__lt=paid.created_at).exclude(
        delivered_at__lte=paid.created_at
    )
    assert waiting.count() >= ENDPOINTS, waiting.count()
