"""The most one account may hold without paying, so that no account can hold the stock.

An order awaiting payment holds its GPUs until it expires: without a ceiling, one verified
account ordering everything free would empty the catalog for every other customer, and hold
it again each time its orders expire. An account that has never paid gets a lower ceiling.
"""

from django.conf import settings
from django.db.models import Count, Sum
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from orders.errors import OrderError
from orders.models import Order, OrderStatus

S = OrderStatus
# An order in these was paid: its account has paid the store at least once.
PAID_ONCE_STATUSES = (S.PAID, S.PROVISIONING, S.ACTIVE, S.COMPLETED)
UNPAID_LIMIT = _(
    "An account may hold at most %(orders)d unpaid orders and %(units)d GPUs at once: pay or "
    "cancel an unpaid order, then order again."
)


def unpaid_ceiling(*, user: User) -> dict[str, int]:
    paid_once = Order.objects.filter(user=user, status__in=PAID_ONCE_STATUSES).exists()
    if paid_once:
        return settings.ORDERS_UNPAID_CEILING
    return settings.ORDERS_NEW_ACCOUNT_UNPAID_CEILING


def unpaid_ceiling_check(*, user: User, quantity: int) -> None:
    """Raise OrderError `unpaid_limit` if one more order of `quantity` GPUs, unpaid, would
    take the account past its ceiling. Asked under the account's lock (order_create), so two
    orders sent at once are counted one after the other.

    Orders awaiting payment count; confirming ones do not: their money is on its way.
    Extensions hold no GPUs and are not counted."""
    held = Order.objects.filter(
        user=user, status=S.AWAITING_PAYMENT, extends__isnull=True
    ).aggregate(orders=Count("pk"), units=Sum("quantity"))
    ceiling = unpaid_ceiling(user=user)
    if held["orders"] + 1 > ceiling["orders"] or (held["units"] or 0) + quantity > ceiling["units"]:
        raise OrderError(UNPAID_LIMIT % ceiling, code="unpaid_limit")
