"""The staff dashboard: revenue per day, GPU utilisation per model, orders by status and
payments by asset, as server-rendered SVG: valid HTML for vnu, no asset from elsewhere."""

import re
from datetime import timedelta
from decimal import Decimal
from urllib.parse import urlsplit

import pytest
from django.utils import timezone
from django.utils.translation import override

from backoffice.selectors import gpu_in_use, gpu_utilisation, orders_by_status, revenue_per_day
from hosts.models import SlotHold
from orders.models import Order, OrderEvent, OrderStatus
from payments.models import Invoice
from tests.factories import GpuModelFactory, OrderFactory
from tests.payments.helpers import order_with_invoice
from tests.vnu import vnu_errors

pytestmark = pytest.mark.django_db
S = OrderStatus


def _paid(order: Order, *, at) -> None:
    OrderEvent.objects.create(
        order=order,
        old_status=S.CONFIRMING,
        new_status=S.PAID,
        actor=OrderEvent.Actor.SYSTEM,
        created_at=at,
    )


@pytest.fixture
def activity(usdc):
    """Two days of sales on a 4-GPU model, one order paid in USDC."""
    now = timezone.now()
    gpu = GpuModelFactory(name="NVIDIA H100 SXM 80 GB", units_total=4)
    rental = OrderFactory(gpu=gpu, quantity=2, status=S.ACTIVE, total=Decimal("1008.00"))
    # Its two slots were held for the last 15 of the 30 days: a quarter of the model's time.
    SlotHold.objects.filter(order=rental).update(held_at=now - timedelta(days=15))
    _paid(rental, at=now - timedelta(days=1))
    invoice = order_with_invoice(usdc, gpu=gpu)
    Invoice.objects.filter(pk=invoice.pk).update(status=Invoice.Status.PAID)
    Order.objects.filter(pk=invoice.order_id).update(status=S.PAID)
    _paid(invoice.order, at=now)
    OrderFactory(gpu=gpu, status=S.CANCELLED)
    return {"gpu": gpu, "rental": rental, "invoice": invoice, "now": now}


def test_the_figures_come_from_paid_orders_and_slot_holds(activity):
    now = activity["now"]
    revenue = revenue_per_day(today=timezone.localdate(now))
    assert len(revenue) == 30
    assert revenue[-1][1] == Decimal("504.00") and revenue[-2][1] == Decimal("1008.00")
    assert sum(amount for _day, amount in revenue) == Decimal("1512.00")
    utilisation = dict(gpu_utilisation(now=now))
    assert utilisation["NVIDIA H100 SXM 80 GB"] == 25
    with override("en"):
        statuses = dict(orders_by_status())
    assert statuses["Active"] == statuses["Paid"] == statuses["Cancelled"] == 1


def test_the_dashboard_is_valid_html_with_its_svg_charts_and_no_external_asset(
    client, staff, activity, tmp_path
):
    client.force_login(staff)
    pages = {
        lang: client.get("/admin/dashboard/", HTTP_ACCEPT_LANGUAGE=lang).content.decode()
        for lang in ("fr", "en")
    }
    for html in pages.values():
        assert html.count('class="bar-chart"') == 5
        assets = re.findall(r'(?:src|href)="([^"]*)"', html)
        assert assets and not [url for url in assets if urlsplit(url).netloc or url[:2] == "//"]
    assert "Chiffre d\u2019affaires par jour" in pages["fr"]
    errors = vnu_errors({f"dashboard-{lang}": html for lang, html in pages.items()}, tmp_path)
    assert not errors, "\n".join(errors)


def test_only_staff_see_the_dashboard(client, customer):
    client.force_login(customer)
    response = client.get("/admin/dashboard/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_a_rental_started_an_hour_ago_shows_its_gpus_in_use_now(usdc):
    now = timezone.now()
    gpu = GpuModelFactory(name="NVIDIA H100 SXM 80 GB", units_total=4)
    rental = OrderFactory(gpu=gpu, quantity=2, status=S.ACTIVE, activated_at=now)
    SlotHold.objects.filter(order=rental).update(held_at=now - timedelta(hours=1))
    OrderFactory(gpu=gpu, quantity=1, status=S.AWAITING_PAYMENT)  # held, not rented
    # Over 30 days, an hour of 2 slots in 4 rounds to nothing; right now, half the GPUs run.
    assert dict(gpu_utilisation(now=now))["NVIDIA H100 SXM 80 GB"] < 1
    assert dict(gpu_in_use(now=now)) == {"NVIDIA H100 SXM 80 GB": 50}
