"""The experiment-journal card: what a customer pastes into their lab notebook to tie the
hardware, the period and the results of a run to the order number.

One list of rows feeds every form of it (the page, plain text, Markdown), and the JSON (download
and API) carries the same facts, so they cannot drift apart.
"""

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from django.db.models import Prefetch, prefetch_related_objects
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from catalog.formatting import money
from hosts.models import SlotHold
from hosts.slots import slots_by_host
from orders.models import Order, OrderStatus

S = OrderStatus
# A journal entry describes a rental that was paid for: before that there is nothing to link
# results to, and a refunded order never ran.
JOURNAL_STATUSES = frozenset({S.PAID, S.PROVISIONING, S.ACTIVE, S.COMPLETED})


def order_slots_display(*, order: Order) -> str:
    """The hosts and GPU slots the rental runs (or ran) on, in one line: "gpu-par-1: GPU 0, 1"
    ('' while it holds none). One query, none where the caller prefetched them (the API's
    order selector does, for `slots`)."""
    prefetch_related_objects(
        [order], Prefetch("slot_holds", queryset=SlotHold.objects.select_related("host"))
    )
    grouped = slots_by_host(order.slot_holds.all())
    return "; ".join(
        f"{host}: GPU {', '.join(str(index) for index in indices)}"
        for host, indices in grouped.items()
    )


@dataclass(frozen=True)
class JournalCard:
    order: Order
    host_and_slots: str
    time_zone: str  # the customer's (the active one), next to UTC
    # The term and the price with the paid extensions': what the run was given and cost.
    rental_days: int
    price_paid: Decimal

    @property
    def starts_at(self) -> datetime | None:
        return self.order.activated_at

    @property
    def ends_at(self) -> datetime | None:
        return self.order.ends_at


def order_journal(*, order: Order) -> JournalCard | None:
    """The order's journal card; None until it is paid. Uses at most two queries (its slots,
    its extensions) beyond the order's GPU and environment (selected with it by the order
    selectors), none where they were prefetched. An
    extension has none: its rental's card is the one that ran."""
    if order.status not in JOURNAL_STATUSES or order.is_extension:
        return None
    # From the extensions prefetched with the order (the API's selector), else one query.
    paid = [each for each in order.extensions.all() if each.status == S.PAID]
    return JournalCard(
        order=order,
        host_and_slots=order_slots_display(order=order),
        time_zone=str(timezone.get_current_timezone()),
        rental_days=order.term_days + sum(each.term_days for each in paid),
        price_paid=order.total + sum((each.total for each in paid), Decimal(0)),
    )


def _moment(value: datetime | None, *, zone: str, pending: str) -> str:
    if value is None:
        return pending
    utc = value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    local = timezone.localtime(value).strftime("%Y-%m-%d %H:%M")
    return f"{utc} ({local} {zone})"


def journal_rows(card: JournalCard) -> list[tuple[str, str]]:
    """(label, value) in the active language, in the card's order."""
    order = card.order
    return [
        (pgettext("experiment journal", "Order"), order.number),
        ("GPU", f"{order.quantity} \N{MULTIPLICATION SIGN} {order.gpu.name}"),
        (_("Host and slots"), card.host_and_slots or _("not assigned yet")),
        (_("Environment"), order.environment.name),
        (
            pgettext("experiment journal", "Start"),
            _moment(card.starts_at, zone=card.time_zone, pending=_("not started yet")),
        ),
        (
            pgettext("experiment journal", "End"),
            _moment(
                card.ends_at,
                zone=card.time_zone,
                pending=_("%(days)d days after the start") % {"days": card.rental_days},
            ),
        ),
        (_("Price paid"), money(card.price_paid, order.currency)),
    ]


def _labelled(label: str, value: str = "") -> str:
    # Translated: French puts a non-breaking space before the colon.
    return (_("%(label)s: %(value)s") % {"label": label, "value": value}).rstrip()


def journal_text(card: JournalCard) -> str:
    lines = [_labelled(label, value) for label, value in journal_rows(card)]
    details = card.order.environment_details
    if details:
        lines += ["", _labelled(_("Your image or requirements")), details]
    return "\n".join(lines)


def _fence(text: str) -> str:
    # Longer than any run of backticks in the text, so the text cannot close the block.
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def journal_markdown(card: JournalCard) -> str:
    (order_label, number), *facts = journal_rows(card)
    lines = [f"### {order_label} {number}", ""]
    lines += ["- " + _labelled(f"**{label}**", value) for label, value in facts]
    details = card.order.environment_details
    if details:
        fence = _fence(details)
        heading = _labelled(f"**{_('Your image or requirements')}**")
        lines += ["", heading, "", fence, details, fence]
    return "\n".join(lines)


def _iso(value: datetime | None, *, local: bool = False) -> str | None:
    if value is None:
        return None
    moment = timezone.localtime(value) if local else value.astimezone(UTC)
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def journal_data(card: JournalCard) -> dict:
    """The card for machines (JSON download, API): same facts, no translated text."""
    order = card.order
    return {
        "order": order.number,
        "status": order.status,
        "gpu": order.gpu.slug,
        "gpu_name": order.gpu.name,
        "gpu_count": order.quantity,
        "host_and_slots": card.host_and_slots,
        "environment": order.environment.slug,
        "environment_details": order.environment_details,
        "term_days": card.rental_days,
        "starts_at": _iso(card.starts_at),
        "ends_at": _iso(card.ends_at),
        "time_zone": card.time_zone,
        "starts_at_local": _iso(card.starts_at, local=True),
        "ends_at_local": _iso(card.ends_at, local=True),
        "price_paid": str(card.price_paid),
        "currency": order.currency,
    }


def journal_for_page(*, order: Order) -> dict[str, str] | None:
    """The card's two copyable forms for the order page; None until the order is paid."""
    card = order_journal(order=order)
    if card is None:
        return None
    return {"text": journal_text(card), "markdown": journal_markdown(card)}
