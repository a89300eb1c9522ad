"""The one lock order for orders and their invoices: the orders first, by id, then their
invoices, by id.

Every path that locks an order and its invoices (or writes an invoice while the order must not
move) takes them here, so two workers always queue for the same first row and never hold what
the other waits for. Inserting a row that points at an invoice (a transfer, a claim) takes a
key-share lock on it: that counts too, so those paths lock through here first. Order-only paths
in `orders` lock the order alone, which keeps the same order.
"""

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from django.db import transaction

from orders.models import Order
from payments.models import Invoice


@contextmanager
def order_and_invoices_locked(order_id: int) -> Iterator[tuple[Order, list[Invoice]]]:
    """`with order_and_invoices_locked(order.pk) as (order, invoices):` in one transaction,
    the order locked first, then its invoices by id (both read fresh under the lock)."""
    with orders_and_invoices_locked([order_id]) as (orders, invoices):
        if not orders:
            raise Order.DoesNotExist(f"No order {order_id}.")
        yield orders[0], invoices


@contextmanager
def orders_and_invoices_locked(
    order_ids: Iterable[int],
) -> Iterator[tuple[list[Order], list[Invoice]]]:
    """The same for several orders (a scan crediting many): all the orders by id, then all
    their invoices by id. Orders that do not exist are left out."""
    with transaction.atomic():
        orders = list(Order.objects.select_for_update().filter(pk__in=order_ids).order_by("pk"))
        invoices = list(
            Invoice.objects.select_for_update()
            .filter(order_id__in=[order.pk for order in orders])
            .order_by("pk")
        )
        yield orders, invoices
