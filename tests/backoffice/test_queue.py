"""The admin home's "to handle" queue: one fixture per case, each counted once, nothing else
counted, each link opening a list of exactly that case; the counts take one query per model."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from backoffice.selectors import queue_entries
from orders.events import DISPATCH_HORIZON
from orders.models import Order, OrderEvent, OrderEventDelivery, OrderStatus
from payments.models import Asset, Invoice, PaymentClaim, Rate, Transfer
from payments.refunds.models import RefundStatus
from tests.factories import OrderFactory
from tests.payments.helpers import order_with_invoice, rate_fresh, transfer_recorded
from tests.payments.refund_helpers import overpaid_refund

pytestmark = pytest.mark.django_db
S = OrderStatus
FLAGS = ("underpaid", "overpaid", "paid_late", "wrong_asset", "multiple")


def _claim(invoice: Invoice, *, minutes_ago: int) -> PaymentClaim:
    return PaymentClaim.objects.create(
        order=invoice.order,
        invoice=invoice,
        user=invoice.order.user,
        created_at=timezone.now() - timedelta(minutes=minutes_ago),
    )


def _paid(order: Order, *, minutes_ago: int) -> Order:
    OrderEvent.objects.create(
        order=order,
        old_status=S.CONFIRMING,
        new_status=S.PAID,
        actor=OrderEvent.Actor.SYSTEM,
        created_at=timezone.now() - timedelta(minutes=minutes_ago),
    )
    return order


def _delivered(order: Order, *, days_ago: float, done: bool) -> Order:
    """An event of `order`, dispatched, that billing did (or never managed to) handle."""
    now = timezone.now()
    event = OrderEvent.objects.create(
        order=order,
        kind=OrderEvent.Kind.NOTE,
        actor=OrderEvent.Actor.SYSTEM,
        created_at=now - timedelta(days=days_ago),
        dispatched_at=now - timedelta(days=days_ago),
    )
    OrderEventDelivery.objects.create(
        event=event,
        subscriber="billing",
        done_at=now if done else None,
        attempts=1,
        retry_at=now,
    )
    return order


@pytest.fixture
def cases(usdc, pytorch, custom_environment) -> dict[str, object]:
    """One record per case of the queue, keyed by the case."""
    now = timezone.now()
    found = {
        "paid_waiting": OrderFactory(status=S.PAID),
        "provisioning_failed": OrderFactory(
            status=S.PROVISIONING, provisioning_problem="ssh refused"
        ),
        "environment_waiting": OrderFactory(status=S.PROVISIONING, environment=custom_environment),
        "access_late": _paid(OrderFactory(status=S.PROVISIONING), minutes_ago=30),
        "ending_soon": OrderFactory(
            status=S.ACTIVE, activated_at=now, ends_at=now + timedelta(hours=3)
        ),
        "events_undelivered": _delivered(
            OrderFactory(status=S.COMPLETED), days_ago=DISPATCH_HORIZON.days + 0.1, done=False
        ),
    }
    for flag in FLAGS:
        invoice = order_with_invoice(usdc)
        Invoice.objects.filter(pk=invoice.pk).update(**{flag: True})
        found[flag] = invoice
    found["claim_unanswered"] = _claim(order_with_invoice(usdc), minutes_ago=31)
    refund = overpaid_refund(usdc)
    Order.objects.filter(pk=refund.order_id).update(status=S.COMPLETED)  # its rental is over
    found["refund_owed"] = refund
    eth = usdc.chain.assets.get(kind="native")
    Asset.objects.filter(pk=eth.pk).update(rate_held=_held_rate(eth, confirmed=False))
    found["rate_held"] = eth
    return found


def _held_rate(asset: Asset, *, confirmed: bool) -> Rate:
    """A feed rate that moved beyond the band (payments.rates), confirmed by staff or not."""
    rate = rate_fresh(asset, 3_000_000)
    Rate.objects.filter(pk=rate.pk).update(
        held=True, confirmed_at=timezone.now() if confirmed else None
    )
    return rate


@pytest.fixture
def nothing_to_handle(usdc, pytorch, custom_environment) -> None:
    """Records close to each case that staff need not look at."""
    now = timezone.now()
    OrderFactory(status=S.AWAITING_PAYMENT, environment=custom_environment)
    OrderFactory(
        status=S.PROVISIONING, environment=custom_environment, environment_confirmed_at=now
    )
    OrderFactory(status=S.ACTIVE, activated_at=now, ends_at=now + timedelta(days=5))
    OrderFactory(status=S.COMPLETED, provisioning_problem="old problem")
    # A paid extension of a custom-environment rental: no machines of its own to wait for.
    rental = OrderFactory(
        status=S.ACTIVE,
        environment=custom_environment,
        environment_confirmed_at=now,
        activated_at=now,
        ends_at=now + timedelta(days=5),
    )
    OrderFactory(status=S.PAID, extends=rental, environment=custom_environment)
    flagged_but_over = order_with_invoice(usdc)
    Invoice.objects.filter(pk=flagged_but_over.pk).update(underpaid=True)
    Order.objects.filter(pk=flagged_but_over.order_id).update(status=S.CANCELLED)
    _claim(order_with_invoice(usdc), minutes_ago=5)  # the chain may answer
    _paid(OrderFactory(status=S.PROVISIONING), minutes_ago=1)  # access usually comes now
    answered = order_with_invoice(usdc)
    transfer_recorded(answered)
    Transfer.objects.filter(invoice=answered).update(tx_hash="0x" + "77" * 32)
    _claim(answered, minutes_ago=45)
    # Billing failing for an hour is still being tried; one that ended up working is done.
    _delivered(OrderFactory(status=S.COMPLETED), days_ago=0.05, done=False)
    _delivered(OrderFactory(status=S.COMPLETED), days_ago=DISPATCH_HORIZON.days + 1, done=True)
    refunded = overpaid_refund(usdc)
    refunded.__class__.objects.filter(pk=refunded.pk).update(status=RefundStatus.CONFIRMED)
    Order.objects.filter(pk=refunded.order_id).update(status=S.COMPLETED)
    _held_rate(usdc, confirmed=True)  # staff confirmed it: the asset holds nothing


def test_the_queue_counts_each_case_once_and_nothing_else(cases, nothing_to_handle):
    counts = {entry.key: entry.count for entry in queue_entries()}
    assert counts == dict.fromkeys(cases, 1)


def test_each_link_lists_exactly_its_case(client, staff, cases, nothing_to_handle):
    client.force_login(staff)
    for entry in queue_entries():
        listed = client.get(entry.url).context["cl"].result_list
        assert list(listed) == [cases[entry.key]], entry.key


def test_the_admin_home_shows_the_queue_with_links(client, staff, cases):
    client.force_login(staff)
    page = client.get("/admin/").content.decode()
    assert 'data-testid="todo-queue"' in page
    for entry in queue_entries():
        assert f'href="{entry.url}"' in page
    # Each line starts with a capital, the payment flags ("underpaid"...) as the others.
    labels = re.findall(r'<th scope="row"><a href="[^"]+">([^<]+)</a>', page)
    assert len(labels) == len(queue_entries())
    assert all(label[0].isupper() or not label[0].isalpha() for label in labels), labels


def test_the_counts_take_one_query_per_model(cases, django_assert_num_queries):
    # Orders, invoices, claims, refunds, assets (rates held).
    with django_assert_num_queries(5):
        queue_entries()


def test_a_custom_environment_order_counts_once_whatever_its_step(pytorch, custom_environment):
    paid = OrderFactory(status=S.PAID, environment=custom_environment)
    counts = {entry.key: entry.count for entry in queue_entries()}
    assert sum(counts.values()) == 1 and counts["paid_waiting"] == 1
    Order.objects.filter(pk=paid.pk).update(status=S.PROVISIONING, provisioning_problem="refused")
    counts = {entry.key: entry.count for entry in queue_entries()}
    assert sum(counts.values()) == 1 and counts["provisioning_failed"] == 1
    Order.objects.filter(pk=paid.pk).update(provisioning_problem="")
    counts = {entry.key: entry.count for entry in queue_entries()}
    assert sum(counts.values()) == 1 and counts["environment_waiting"] == 1
