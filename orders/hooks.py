"""Questions the order state machine asks the apps above it (payments), without importing them.

Each app registers its answers in its AppConfig.ready(). With nothing registered, an order
expires at its deadline and provisioning may always start.
"""

from collections.abc import Callable
from datetime import datetime

from orders.models import Order

# (order, now) -> False while a payment made before the deadline could still be unseen.
ExpiryCheck = Callable[[Order, datetime], bool]
# order -> why provisioning must wait (a message for staff), or None.
ProvisioningHold = Callable[[Order], str | None]

_expiry_checks: list[ExpiryCheck] = []
_provisioning_holds: list[ProvisioningHold] = []


def expiry_check_register(check: ExpiryCheck) -> None:
    if check not in _expiry_checks:
        _expiry_checks.append(check)


def provisioning_hold_register(hold: ProvisioningHold) -> None:
    if hold not in _provisioning_holds:
        _provisioning_holds.append(hold)


def order_may_expire(*, order: Order, now: datetime) -> bool:
    return all(check(order, now) for check in _expiry_checks)


def order_provisioning_hold(*, order: Order) -> str | None:
    return next(filter(None, (hold(order) for hold in _provisioning_holds)), None)
