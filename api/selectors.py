"""Reads for the API: each selector brings what its serializer needs in a fixed number of
queries."""

from functools import cache

from django.db.models import F, Prefetch, QuerySet

from accounts.models import ApiKey, User
from accounts.selectors import email_verified_subquery
from accounts.services import api_key_hash
from catalog.models import Environment, GpuModel
from catalog.selectors import active_environments
from hosts.models import SlotHold
from orders.models import Order
from orders.stock import gpus_with_availability
from payments.models import Asset
from payments.refunds.models import Refund
from payments.refunds.selectors import refund_current, refunds_with_facts
from payments.selectors import (
    PaymentProgress,
    assets_offered,
    invoices_with_progress,
    payment_progress,
)


@cache
def _keys_with_their_account() -> QuerySet[ApiKey]:
    """Built once per process (never evaluated itself: each request filters a copy): resolving
    the subquery again at every request cost about as much as running the query."""
    return ApiKey.objects.select_related("user").annotate(
        user_email_verified=email_verified_subquery(user_path="user")
    )


def api_key_for_raw_key(*, raw_key: str) -> ApiKey | None:
    """The key with its account and, as `user_email_verified`, whether the account's address
    is verified (writes need it): one query for everything a request asks of its key."""
    try:
        return _keys_with_their_account().get(key_hash=api_key_hash(raw_key))
    except ApiKey.DoesNotExist:
        return None


def api_gpus() -> QuerySet[GpuModel]:
    return gpus_with_availability().filter(is_active=True).prefetch_related("prices")


def api_environments() -> QuerySet[Environment]:
    return active_environments()


def api_payment_assets() -> QuerySet[Asset]:
    return assets_offered()


def api_orders_for_user(*, user: User, status: str | None = None) -> QuerySet[Order]:
    """The account's orders with what OrderOutputSerializer reads. Through the account's own
    manager, each order's `user` is that account, not joined again; of the rental an extension
    extends, only its number (`extends_number`): joining the whole order again cost about as
    much as the rest of the query."""
    orders = (
        user.orders.select_related("gpu", "environment")
        .annotate(extends_number=F("extends__number"))
        .prefetch_related(
            "events",
            # What the answer reads of them, oldest first: their numbers and, for the journal,
            # the term and total of the paid ones.
            Prefetch(
                "extensions",
                queryset=Order.objects.order_by("created_at", "pk").only(
                    "number", "created_at", "extends_id", "status", "term_days", "total"
                ),
            ),
            "ssh_keys",
            Prefetch("slot_holds", queryset=SlotHold.objects.select_related("host")),
            Prefetch("invoices", queryset=invoices_with_progress()),
            Prefetch("refunds", queryset=refunds_with_facts()),
        )
    )
    if status:
        orders = orders.filter(status=status)
    return orders


def api_order_for_user(*, user: User, number: str) -> Order | None:
    """The user's order with that number, in any case as on the order page; None for anyone
    else's, so it reads as a 404."""
    return api_orders_for_user(user=user).filter(number=number.upper()).first()


def order_payment(*, order: Order) -> PaymentProgress | None:
    """The order's payment progress, as the order page shows it; None without an invoice.

    Expects `order` from api_orders_for_user (invoices and their transfers prefetched).
    """
    return payment_progress(order=order, invoices=order.invoices.all())


def order_refund(*, order: Order) -> Refund | None:
    """The refund the order shows (open, else the latest done); None when none is owed.

    Expects `order` from api_orders_for_user (refunds prefetched).
    """
    return refund_current(order=order, refunds=order.refunds.all())
