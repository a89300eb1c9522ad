"""Questions orders asks the apps above it (payments), without importing them.

The answers are named in settings.HOOKS (rental.hooks). With none named, an order expires at
its deadline, provisioning may always start, an unpaid order may always be cancelled and the
order page shows the order alone.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from orders.models import Order, OrderEvent
from rental.hooks import answers


@dataclass(frozen=True)
class PageSection:
    """A part of the order page another app renders: its template and that template's
    variables (the page's own, `order` included, are there too)."""

    template: str
    context: dict = field(default_factory=dict)


# The questions, each answered by the functions settings.HOOKS names for it:
# order_may_expire: check(order=, now=) -> False while a payment made before the deadline
#   could still be unseen.
# order_provisioning_hold: hold(order=) -> why provisioning must wait (for staff), or None.
# order_funds_received: check(order=) -> True once money reached the order: then it can no
#   longer be cancelled.
# order_refund_record: record(order=) once staff refunded a paid order, in that transaction:
#   what was received is owed back (payments holds the money, so it records the refund).
# order_cancel_record: close(order=) once the order is cancelled, in that transaction, under
#   the order's lock: the app holding its payment requests closes the open one (it stays
#   watched, money reaching it is flagged and owed back).
# order_page_sections: section(order=) -> the PageSection the app adds to the order page.
# order_admin_sections: section(order=) -> the PageSection the app adds to the order's admin
#   page (payments: its invoices, transfers, flags, claims and refunds; billing: the legal
#   invoices and their PDF).
# order_email_sections: section(order=) -> what the app adds to the order's e-mails (a text
#   template), or None.
# order_email_attachments: files(event=) -> [(filename, content, mimetype)] attached to the
#   e-mail of that order event (the invoice's PDF to the "paid" one).


def order_may_expire(*, order: Order, now: datetime) -> bool:
    return all(check(order=order, now=now) for check in answers("order_may_expire").values())


def order_provisioning_hold(*, order: Order) -> str | None:
    holds = answers("order_provisioning_hold").values()
    return next(filter(None, (hold(order=order) for hold in holds)), None)


def order_funds_received(*, order: Order) -> bool:
    return any(check(order=order) for check in answers("order_funds_received").values())


def order_refund_record(*, order: Order) -> None:
    for record in answers("order_refund_record").values():
        record(order=order)


def order_cancel_record(*, order: Order) -> None:
    for record in answers("order_cancel_record").values():
        record(order=order)


def order_page_sections(
    *, order: Order, given: Mapping[str, PageSection] | None = None
) -> list[PageSection]:
    """The sections of the order page; `given` ones (a form with its errors, built by the app
    that handled the request) replace the registered section of the same name."""
    given = given or {}
    sections = answers("order_page_sections").items()
    return [given.get(name) or section(order=order) for name, section in sections]


def order_admin_sections(*, order: Order) -> list[PageSection]:
    return [section(order=order) for section in answers("order_admin_sections").values()]


def order_email_sections(*, order: Order) -> list[PageSection]:
    hooks = answers("order_email_sections").values()
    return [section for hook in hooks if (section := hook(order=order)) is not None]


def order_email_attachments(*, event: OrderEvent) -> list[tuple[str, bytes, str]]:
    hooks = answers("order_email_attachments").values()
    return [attachment for hook in hooks for attachment in hook(event=event)]
