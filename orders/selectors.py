from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.db.models import QuerySet, Sum
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from catalog.models import Environment, GpuModel
from orders.errors import OrderError
from orders.models import UNPAID_STATUSES, Order, OrderEvent, OrderStatus

S = OrderStatus
# The path a rental normally follows; shown as the steps of the timeline.
HAPPY_PATH = (S.AWAITING_PAYMENT, S.CONFIRMING, S.PAID, S.PROVISIONING, S.ACTIVE, S.COMPLETED)
# An extension has no machines of its own: once paid, it is done.
EXTENSION_PATH = (S.AWAITING_PAYMENT, S.CONFIRMING, S.PAID)
FINAL_STATUSES = frozenset({S.COMPLETED, S.EXPIRED, S.CANCELLED, S.REFUNDED})


def orders_for_user(*, user: User) -> QuerySet[Order]:
    return Order.objects.filter(user=user).select_related("gpu", "environment", "extends")


def daily_rate_for_term(*, gpu: GpuModel, term_days: int) -> Decimal:
    """Today's catalog rate of `gpu` for `term_days`."""
    # gpu.prices: the configurator has them prefetched already; elsewhere, one query.
    for price in gpu.prices.all():
        if price.term_days == term_days:
            return price.daily_rate
    raise OrderError(_("This term is not available for this GPU."), field="term_days")


def order_rental_days(*, order: Order) -> int:
    """The days the rental runs once active: its term and its paid extensions'."""
    paid = order.extensions.filter(status=S.PAID).aggregate(days=Sum("term_days"))["days"]
    return order.term_days + (paid or 0)


def rental_extensions(*, rental: Order) -> list[Order]:
    """The extensions of `rental`, oldest first."""
    return list(rental.extensions.order_by("created_at", "pk"))


@dataclass(frozen=True)
class RentalTotals:
    """What a rental comes to with its extensions: the days and the amount paid for (its
    term and its paid extensions'), apart from what still waits for its payment."""

    extensions: list[Order]
    days: int
    total: Decimal
    unpaid_days: int
    unpaid_total: Decimal


def rental_totals(*, rental: Order) -> RentalTotals:
    """The totals of `rental` with its extensions, in one query. An extension expired,
    cancelled or refunded is listed and counts for nothing."""
    extensions = rental_extensions(rental=rental)
    paid = [each for each in extensions if each.status == S.PAID]
    unpaid = [each for each in extensions if each.status in UNPAID_STATUSES]
    return RentalTotals(
        extensions=extensions,
        days=rental.term_days + sum(each.term_days for each in paid),
        total=rental.total + sum((each.total for each in paid), Decimal(0)),
        unpaid_days=sum(each.term_days for each in unpaid),
        unpaid_total=sum((each.total for each in unpaid), Decimal(0)),
    )


def rental_unpaid_extension(*, rental: Order) -> Order | None:
    """The extension of `rental` still awaiting payment or confirming, if any (one at most)."""
    return rental.extensions.filter(status__in=UNPAID_STATUSES).first()


# The rows of other tables an order's pages show, read along with the order (one query).
ORDER_PAGE_RELATED = ("gpu", "environment", "extends")


def order_for_user_or_404(
    *, user: User, number: str, related: tuple[str, ...] = ORDER_PAGE_RELATED
) -> Order:
    """The customer's own order. Another customer's number is a 404, exactly like a number
    that does not exist; numbers are read case-insensitively (they are read aloud).
    `related`: what is read along with it; a poll that shows less reads less (each join
    costs the query's building and reading in every poll of every open page)."""
    orders = Order.objects.filter(user=user)
    if related:  # select_related() naming nothing would join every foreign key
        orders = orders.select_related(*related)
    return get_object_or_404(orders, number=number.upper())


def order_placed_by_form(*, user: User, form_token: str) -> Order | None:
    return Order.objects.filter(user=user, form_token=form_token).first()


# How far back an unpaid order of the same configuration is offered back instead of a new one.
RESUME_WINDOW = timedelta(minutes=30)


def unpaid_order_like(
    *,
    user: User,
    gpu: GpuModel,
    environment: Environment,
    quantity: int,
    term_days: int,
    environment_details: str,
) -> Order | None:
    """The customer's latest order of this very configuration still waiting for money."""
    now = timezone.now()
    return (
        Order.objects.filter(
            user=user,
            gpu=gpu,
            environment=environment,
            quantity=quantity,
            term_days=term_days,
            environment_details=environment_details.strip(),
            status=S.AWAITING_PAYMENT,
            created_at__gte=now - RESUME_WINDOW,
            payment_deadline__gt=now,
        )
        .order_by("-created_at")
        .first()
    )


@dataclass(frozen=True)
class TimelineStep:
    status: str
    label: str | Promise  # lazy: translated when the page renders
    state: str  # "done", "current", "upcoming" or "stopped"
    at: datetime | None


def order_timeline(*, order: Order, events: list[OrderEvent]) -> list[TimelineStep]:
    """The steps of the order's life, with the time each was reached.

    A detour (expired, cancelled, refunded) ends the path where it happened; a status that
    was left and re-entered (a reorg sends `confirming` back) shows its latest time.
    """
    reached: dict[str, datetime] = {}
    for event in events:
        if event.kind == OrderEvent.Kind.STATUS:
            reached[event.new_status] = event.created_at
    labels = dict(OrderStatus.choices)
    current = order.status
    path = EXTENSION_PATH if order.is_extension else HAPPY_PATH
    final = FINAL_STATUSES | {S.PAID} if order.is_extension else FINAL_STATUSES
    steps: list[TimelineStep] = []
    if current in path:
        position = path.index(current)
        for index, status in enumerate(path):
            if index < position:
                state = "done"
            elif index == position:
                state = "done" if current in final else "current"
            else:
                state = "upcoming"
            steps.append(TimelineStep(status, labels[status], state, reached.get(status)))
        return steps
    for status in path:
        if status in reached:
            steps.append(TimelineStep(status, labels[status], "done", reached[status]))
    steps.append(TimelineStep(current, labels[current], "stopped", reached.get(current)))
    return steps


def order_is_final(*, order: Order) -> bool:
    if order.is_extension and order.status == S.PAID:
        return True
    return order.status in FINAL_STATUSES


def order_events_for_user(*, user: User, number: str) -> list[OrderEvent]:
    """The events of the customer's own order `number` (as order_for_user_or_404 finds it),
    oldest first; none for anyone else's."""
    return list(OrderEvent.objects.filter(order__user=user, order__number=number.upper()))


def order_page_context(*, order: Order, events: list[OrderEvent] | None = None) -> dict:
    """What the order page shows besides the payment section, in a fixed number of queries.
    `events`: the order's, oldest first, when the caller has them."""
    events = list(order.events.all()) if events is None else events
    return {
        "order": order,
        "events": events,
        "timeline": order_timeline(order=order, events=events),
        "is_final": order_is_final(order=order),
        "live_marker": order_live_marker(events=events),
    }


def order_live_marker(*, events: list[OrderEvent]) -> str:
    """Changes with each event of the order and once it is dispatched (the facture and the
    e-mails are made then): the page's poll brings its other parts again when it does."""
    dispatched = sum(event.dispatched_at is not None for event in events)
    return f"{max((event.pk for event in events), default=0)}.{dispatched}"


def order_public_keys(*, order: Order) -> list[str]:
    """The public keys the order names (accounts' SSH keys), as its machines install them."""
    return [key.public_key for key in order.ssh_keys.all()]
