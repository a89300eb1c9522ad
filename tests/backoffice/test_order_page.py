"""The order's admin page: its payment records (invoices, transfers with explorer link and
confirmations, flags in words, claims, refunds), its access details, and only the actions its
status allows, as the state machine says."""

import re

import pytest
from django.urls import reverse

from billing.services import invoice_issue
from orders.models import Order, OrderStatus
from payments.models import Chain, PaymentClaim
from tests.factories import OrderFactory
from tests.payments.refund_helpers import overpaid_refund

pytestmark = pytest.mark.django_db
S = OrderStatus

# What staff may do from each status (orders.admin.STAFF_ACTIONS over ALLOWED_TRANSITIONS),
# for an order on a manual host, without access details yet.
ACTIONS = {
    S.AWAITING_PAYMENT: {"cancel"},
    S.CONFIRMING: set(),
    S.PAID: {"provision", "move", "refund"},
    S.PROVISIONING: {"move", "activate", "refund"},
    S.ACTIVE: {"complete"},
    S.COMPLETED: set(),
    S.EXPIRED: {"cancel"},
    S.CANCELLED: set(),
    S.REFUNDED: set(),
}


def _page(client, order: Order) -> str:
    return client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()


def _offered(page: str) -> set[str]:
    return set(re.findall(r"/action/([\w-]+)/", page))


@pytest.mark.parametrize("status", list(S), ids=str)
def test_the_page_offers_only_the_actions_of_the_status(client, staff, status):
    order = OrderFactory(
        status=status, access_host="gpu-1.example.net" if status == S.ACTIVE else ""
    )
    client.force_login(staff)
    assert _offered(_page(client, order)) == ACTIONS[status]


@pytest.mark.parametrize("status", list(S), ids=str)
def test_an_action_the_status_does_not_allow_changes_nothing(client, staff, status):
    order = OrderFactory(status=status)
    client.force_login(staff)
    for action in {"provision", "activate", "complete", "cancel", "refund"} - ACTIONS[status]:
        response = client.post(
            f"/admin/orders/order/{order.pk}/action/{action}/",
            {"reason": "because", "host": "h.example.net", "port": 22, "user": "u"},
        )
        assert response.status_code == 302, action
        order.refresh_from_db()
        assert order.status == status, action
    assert not order.events.exists()


def test_the_page_shows_the_payment_records_in_french(client, staff, usdc):
    Chain.objects.update(explorer_tx_url="https://explorer.example/tx/{tx}")
    refund = overpaid_refund(usdc)
    order = refund.order
    PaymentClaim.objects.create(
        order=order, invoice=refund.invoice, user=order.user, tx_hash="0x" + "12" * 32
    )
    Order.objects.filter(pk=order.pk).update(
        status=S.ACTIVE, access_host="gpu-9.example.net", access_user="lg-rental"
    )
    transfer = refund.invoice.transfers.get()
    client.force_login(staff)
    page = _page(client, order)
    assert 'data-testid="order-payments"' in page
    assert f'href="https://explorer.example/tx/{transfer.tx_hash}"' in page
    assert "trop-perçu (remboursement dû)" in page  # the overpaid flag, in words
    assert "0x" + "12" * 32 in page  # the claim
    assert "à rembourser" in page  # the refund owed
    assert "gpu-9.example.net" in page and "lg-rental" in page  # access details


def test_the_page_lists_the_orders_invoice_with_its_pdf(client, staff, usdc):
    order = overpaid_refund(usdc).order
    document = invoice_issue(order=order)
    client.force_login(staff)
    page = _page(client, order)
    assert 'data-testid="order-billing"' in page and document.number in page
    pdf = reverse("admin:billing_billingdocument_pdf", args=[document.pk])
    assert f'href="{pdf}"' in page
    assert client.get(pdf)["Content-Type"] == "application/pdf"
