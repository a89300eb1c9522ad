"""The partner API's busiest endpoints run a fixed, small number of queries."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from hosts.models import SlotHold
from orders.models import OrderEvent, OrderStatus
from tests.factories import GpuModelFactory, OrderFactory
from tests.payments.helpers import order_with_invoice, transfer_recorded

pytestmark = pytest.mark.django_db

QUOTE = {"gpu": "h100-sxm", "environment": "pytorch", "quantity": 1, "term_days": 7}


def _count(request) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = request()
    assert response.status_code == 200, response.content[:300]
    return len(queries)


def test_a_quote_reads_the_key_and_account_once_and_the_gpu_with_its_stock(api, gpu, pytorch):
    """Key and account (with its verified address), GPU with live stock, environment, the
    term's price."""
    api.post("/api/v1/quotes/", QUOTE, format="json")
    assert _count(lambda: api.post("/api/v1/quotes/", QUOTE, format="json")) == 4


def test_the_gpu_list_runs_the_same_queries_with_7_and_30_gpus(api, gpu):
    for _ in range(6):
        GpuModelFactory()
    api.get("/api/v1/gpus/")
    few = _count(lambda: api.get("/api/v1/gpus/"))
    for _ in range(23):
        GpuModelFactory()
    assert _count(lambda: api.get("/api/v1/gpus/")) == few
    assert few <= 4  # the key with its account, then the GPUs with their stock and prices


def test_an_order_runs_the_same_queries_whatever_its_history(api, customer, usdc):
    invoice = order_with_invoice(usdc, user=customer)
    url = f"/api/v1/orders/{invoice.order.number}/"
    api.get(url)
    few = _count(lambda: api.get(url))
    for index in range(20):
        OrderEvent.objects.create(
            order=invoice.order, kind="note", actor=OrderEvent.Actor.SYSTEM, reason="r"
        )
        transfer_recorded(invoice, amount=1, index=index)
    # The key with its account, then order, events, extensions, invoices with transfers, SSH
    # keys, refunds, slots: one query each.
    assert _count(lambda: api.get(url)) == few
    assert few <= 10


def test_an_active_orders_slots_are_read_once_for_slots_and_the_journal(api, customer, gpu):
    now = timezone.now()
    order = OrderFactory(
        user=customer, gpu=gpu, status=OrderStatus.ACTIVE, activated_at=now, ends_at=now
    )
    with CaptureQueriesContext(connection) as queries:
        body = api.get(f"/api/v1/orders/{order.number}/").json()
    assert body["slots"] and body["journal"]["host_and_slots"]
    slot_table = SlotHold._meta.db_table
    assert sum(f'"{slot_table}"' in query["sql"] for query in queries.captured_queries) == 1
