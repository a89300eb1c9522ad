"""Questions orders asks the apps above it (payments), without importing them.

Each app registers its answers in its AppConfig.ready() (rental.hooks). With nothing
registered, an order expires at its deadline, provisioning may always start, an unpaid order
may always be cancelled and the order page shows the order alone.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from orders.models import Order, OrderEvent
from rental.hooks import Hooks


@dataclass(frozen=True)
class PageSection:
    """A part of the order page another app renders: its template and that template's
    variables (the page's own, `order` included, are there too)."""

    template: str
    context: dict = field(default_factory=dict)


# check(order=, now=) -> False while a payment made before the deadline could still be unseen.
expiry_checks: Hooks[Callable[..., bool]] = Hooks()
# hold(order=) -> why provisioning must wait (a message for staff), or None.
provisioning_holds: Hooks[Callable[..., str | None]] = Hooks()
# check(order=) -> True once money reached the order: then it can no longer be cancelled.
funds_received_checks: Hooks[Callable[..., bool]] = Hooks()
# record(order=) once staff refunded a paid order, in that transaction: what was received is
# owed back (payments holds the money, so it records the refund).
refund_records: Hooks[Callable[..., object]] = Hooks()
# close(order=) once the order is cancelled, in that transaction, under the order's lock: the
# app holding its payment requests closes the open one (it stays watched, money reaching it is
# flagged and owed back).
cancel_records: Hooks[Callable[..., object]] = Hooks()
# keys(order=) -> the OpenSSH public key lines of the order, installed on its hosts by
# automatic provisioning (the app that stores customers' keys answers; all answers add up).
public_key_sources: Hooks[Callable[..., list[str]]] = Hooks()
# section(order=) -> the PageSection the app adds to the order page, in registration order.
page_sections: Hooks[Callable[..., PageSection]] = Hooks()
# section(order=) -> the PageSection the app adds to the order's admin page (payments: its
# invoices, transfers, flags, claims and refunds; billing: the legal invoices and their PDF).
admin_sections: Hooks[Callable[..., PageSection]] = Hooks()
# section(order=) -> what the app adds to the order's e-mails (a text template), or None.
email_sections: Hooks[Callable[..., PageSection | None]] = Hooks()
# files(event=) -> [(filename, content, mimetype)] attached to the e-mail of that order event
# (the invoice's PDF to the "paid" one).
email_attachments: Hooks[Callable[..., list[tuple[str, bytes, str]]]] = Hooks()


def order_may_expire(*, order: Order, now: datetime) -> bool:
    return all(check(order=order, now=now) for check in expiry_checks)


def order_provisioning_hold(*, order: Order) -> str | None:
    return next(filter(None, (hold(order=order) for hold in provisioning_holds)), None)


def order_funds_received(*, order: Order) -> bool:
    return any(check(order=order) for check in funds_received_checks)


def order_refund_record(*, order: Order) -> None:
    for record in refund_records:
        record(order=order)


def order_cancel_record(*, order: Order) -> None:
    for record in cancel_records:
        record(order=order)


def order_public_keys(*, order: Order) -> list[str]:
    return [key for source in public_key_sources for key in source(order=order)]


def order_page_sections(
    *, order: Order, given: Mapping[str, PageSection] | None = None
) -> list[PageSection]:
    """The sections of the order page; `given` ones (a form with its errors, built by the app
    that handled the request) replace the registered section of the same name."""
    given = given or {}
    return [given.get(name) or section(order=order) for name, section in page_sections.items()]


def order_admin_sections(*, order: Order) -> list[PageSection]:
    return [section(order=order) for section in admin_sections]


def order_email_sections(*, order: Order) -> list[PageSection]:
    return [section for hook in email_sections if (section := hook(order=order)) is not None]


def order_email_attachments(*, event: OrderEvent) -> list[tuple[str, bytes, str]]:
    return [attachment for hook in email_attachments for attachment in hook(event=event)]


@dataclass(frozen=True)
class VersionParts:
    """SQL over the order's row `o` (orders.versions): when the order's pages change by the
    clock alone (timestamps, or NULL)."""

    deadlines: list[str] = field(default_factory=list)


# parts() -> VersionParts of the app's rows on the order's pages.
order_version_parts: Hooks[Callable[[], VersionParts]] = Hooks()
