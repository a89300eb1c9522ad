"""The order page and its polls redo no work whose result did not change."""

import pytest
import segno
from django.db import connection
from django.test.utils import CaptureQueriesContext

from payments.templatetags.payment_qr import _svg, payment_qr
from tests.payments.helpers import order_with_invoice


def test_a_payment_requests_qr_code_is_drawn_once_not_on_every_view(monkeypatch):
    drawn = []
    make = segno.make

    def drawing(*args, **kwargs):
        drawn.append(args[0])
        return make(*args, **kwargs)

    monkeypatch.setattr(segno, "make", drawing)
    _svg.cache_clear()
    uri = "ethereum:0x5fbdb2315678afecb367f032d93f642f64180aa3@31337/transfer?address=0x1&uint256=5"
    first = payment_qr(uri)
    assert payment_qr(uri) == first
    assert payment_qr(uri + "0") != first  # what is left changed: a new code
    assert drawn == [uri, uri + "0"]


def _second_visit(client, customer, usdc, path: str, headers=None) -> tuple[str, list[str]]:
    """The page at `path` of the customer's order awaiting payment, asked a second time (the
    first loads templates and translations): its HTML and its queries."""
    invoice = order_with_invoice(usdc, user=customer)
    client.force_login(customer)
    url = f"/fr/account/orders/{invoice.order.number}/{path}"
    client.get(url, headers=headers)
    with CaptureQueriesContext(connection) as queries:
        page = client.get(url, headers=headers)
    assert page.status_code == 200
    return page.content.decode(), [query["sql"] for query in queries]


@pytest.mark.django_db
def test_the_order_page_lists_the_currencies_without_a_server_side_cursor(client, customer, usdc):
    """A server-side cursor (DECLARE, FETCH, CLOSE) is three round trips for a few rows."""
    html, queries = _second_visit(client, customer, usdc, "")
    assert 'value="usdc-devnet"' in html
    assert not [sql for sql in queries if sql.startswith("DECLARE")]


@pytest.mark.django_db
def test_the_payment_poll_reads_the_order_alone(client, customer, usdc):
    """It shows no GPU, environment nor account: its order query joins no other table."""
    _html, queries = _second_visit(
        client, customer, usdc, "payment/status/", {"HX-Request": "true"}
    )
    order_queries = [sql for sql in queries if sql.split(" FROM ")[1].startswith('"orders_order"')]
    assert len(order_queries) == 1
    assert " JOIN " not in order_queries[0]
