"""Staff settle by hand; the devnet commands; /healthz reports the chain."""

from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from orders.models import Order, OrderStatus
from payments.models import Asset, Chain, Invoice
from payments.watcher.scanner import chain_scan
from tests.anvil import anvil_start, anvil_stop
from tests.factories import OrderFactory
from tests.payments.helpers import order_with_invoice, reload, timeline

pytestmark = pytest.mark.chain


def test_staff_mark_an_invoice_paid_with_a_reason_through_the_allowed_steps(devnet, client, staff):
    invoice = order_with_invoice(devnet.usdc)
    client.force_login(staff)
    changelist = "/admin/payments/invoice/"
    asked = client.post(changelist, {"action": "mark_paid", "_selected_action": [invoice.pk]})
    assert asked.status_code == 200 and b'name="reason"' in asked.content

    client.post(
        changelist,
        {
            "action": "mark_paid",
            "_selected_action": [invoice.pk],
            "apply": "1",
            "reason": "Paid by bank transfer, see ticket 42",
        },
    )
    invoice, order = reload(invoice)
    assert order.status == OrderStatus.PAID
    assert invoice.marked and invoice.marked_by == staff
    assert timeline(order) == ["confirming", "paid"]
    paid = order.events.get(new_status="paid", kind="status")
    assert paid.actor == "staff" and paid.actor_user == staff
    assert paid.reason == "Paid by bank transfer, see ticket 42"


def test_mark_as_paid_needs_a_reason(devnet, client, staff):
    invoice = order_with_invoice(devnet.usdc)
    client.force_login(staff)
    client.post(
        "/admin/payments/invoice/",
        {"action": "mark_paid", "_selected_action": [invoice.pk], "apply": "1", "reason": " "},
    )
    assert reload(invoice)[1].status == OrderStatus.AWAITING_PAYMENT


def test_admin_lists_invoices_by_flag(devnet, client, staff):
    invoice = order_with_invoice(devnet.usdc)
    Invoice.objects.filter(pk=invoice.pk).update(overpaid=True)
    client.force_login(staff)
    response = client.get("/admin/payments/invoice/?overpaid__exact=1")
    assert response.status_code == 200 and invoice.order.number.encode() in response.content
    assert client.get(f"/admin/payments/invoice/{invoice.pk}/change/").status_code == 200


@pytest.fixture
def fresh_anvil():
    """A chain of its own: the session's runs ahead of the wall clock once tests have moved its
    time, and setup_devnet's new feeds would then read as updated in the future."""
    node = anvil_start()
    yield node
    anvil_stop(node)


def test_setup_devnet_is_idempotent_and_simulate_payment_pays(
    fresh_anvil, db, settings, celery_eager
):
    anvil = fresh_anvil
    settings.PAYMENTS_DERIVATION_START = 900_000
    out = StringIO()
    call_command("setup_devnet", rpc_url=anvil.url, stdout=out)
    call_command("setup_devnet", rpc_url=anvil.url, stdout=out)
    assert out.getvalue().count("Deployed the test USDC") == 1
    assert "already deployed" in out.getvalue()
    chain = Chain.objects.get(chain_id=31337)
    assert Asset.objects.filter(chain=chain).count() == 2

    order = OrderFactory(total=Decimal("92.00"))
    call_command("simulate_payment", order.number, "--amount", "40", stdout=out)
    chain_scan(chain=chain)
    call_command("simulate_payment", order.number, stdout=out)  # the 60 USDC left
    anvil.rpc("anvil_mine", [hex(3)])
    chain_scan(chain=chain)
    invoice, order = reload(order.invoices.get())
    assert invoice.amount_received == 100_000_000 and order.status == OrderStatus.PAID


def test_healthz_reports_each_active_chain_from_the_watchers_stored_state(devnet, client, staff):
    chain_scan(chain=devnet.chain)
    client.force_login(staff)
    body = client.get("/healthz").json()
    entry = body["chain"]["chains"]["Anvil devnet"]
    assert entry["ok"] and entry["head"] >= entry["cursor"] and entry["lag"] >= 0
    assert entry["last_error"] == ""

    # A node that stops answering shows in the watcher's next scan, not in the health check.
    Chain.objects.update(default_rpc_url="http://127.0.0.1:1")
    assert client.get("/healthz").status_code == 200
    report = chain_scan(chain=Chain.objects.get(pk=devnet.chain.pk))
    entry = client.get("/healthz").json()["chain"]["chains"]["Anvil devnet"]
    assert report.error and entry["last_error"] == report.error


def test_lost_funds_hold_provisioning_until_staff_clear_the_flag_with_a_reason(
    devnet, client, staff
):
    invoice = order_with_invoice(devnet.usdc)
    order = invoice.order
    Order.objects.filter(pk=order.pk).update(status=OrderStatus.PAID)
    Invoice.objects.filter(pk=invoice.pk).update(funds_lost=True)
    client.force_login(staff)
    provision = f"/admin/orders/order/{order.pk}/action/provision/"

    refused = client.post(provision, {"reason": ""}, follow=True)
    assert "La préparation attend que l\u2019argent revienne" in refused.content.decode()
    assert reload(invoice)[1].status == OrderStatus.PAID

    changelist = "/admin/payments/invoice/"
    asked = client.post(
        changelist, {"action": "clear_funds_lost", "_selected_action": [invoice.pk]}
    )
    assert asked.status_code == 200 and b'name="reason"' in asked.content
    client.post(
        changelist,
        {
            "action": "clear_funds_lost",
            "_selected_action": [invoice.pk],
            "apply": "1",
            "reason": "Customer paid again by bank transfer, ticket 77",
        },
    )
    invoice, order = reload(invoice)
    assert not invoice.funds_lost
    cleared = order.events.get(kind="note", data__flag="funds_lost")
    assert cleared.actor_user == staff and cleared.reason.endswith("ticket 77")
    client.post(provision, {"reason": ""})
    assert reload(invoice)[1].status == OrderStatus.PROVISIONING
