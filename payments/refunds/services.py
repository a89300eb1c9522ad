"""Writes on refunds: what is owed, the customer's address, the transaction staff paste and
the chain's verdict on it.

Every write takes the order's lock, then its invoices' (payments.locks), so the refunds of
one order change one at a time and in the one lock order; nothing here calls the RPC.
"""

import re

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django_stubs_ext import StrOrPromise
from eth_utils import is_checksum_address

from accounts.models import User
from orders.models import Order, OrderEvent
from orders.transitions import order_event_record
from payments.ledger import GOT_NOTHING, Ledger, invoice_ledger
from payments.locks import order_and_invoices_locked
from payments.models import Invoice, ScanCursor
from payments.refunds.models import REJECTIONS, Refund, RefundStatus
from payments.refunds.selectors import refund_address_changeable, refund_facts
from payments.services import PaymentError, tx_hash_clean
from rental.celery import enqueue_after_commit

Actor = OrderEvent.Actor
Kind = OrderEvent.Kind
ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")
# Statuses in which the refund is not sent yet: its amount and address may still change.
UNSENT = (RefundStatus.OWED, RefundStatus.ADDRESS_GIVEN)


def _event(*, refund: Refund, order: Order, kind: str, actor: str, **fields) -> None:
    order_event_record(order=order, kind=kind, actor=actor, data=refund_facts(refund), **fields)


def _owed_since(*, invoice: Invoice, ledger: Ledger) -> int | None:
    """The block a refund owed now is owed since: the latest the watcher has seen of the chain
    (any transfer at or below it was mined before), else the invoice's latest transfer. Not the
    payment's block: a staff refund, or more money owed, comes long after it, and a store
    transfer to that address in between (another matter) must prove nothing."""
    head = (
        ScanCursor.objects.filter(chain_id=invoice.asset.chain_id)
        .values_list("head_block", flat=True)
        .first()
    )
    known = [block for block in (head, ledger.last_block) if block is not None]
    return max(known) if known else None


def refunds_owed_sync(
    *, order: Order, invoices: list[Invoice], ledgers: dict[int, Ledger] | None = None
) -> None:
    """Bring each invoice's open refund to what its ledger owes now (payments.ledger).

    Runs under order_and_invoices_locked (the settlement's, or a staff refund's), with `order`
    and `invoices` read there (`ledgers`: those the caller read under the same locks). Safe to
    run again: it only writes what changed.
    """
    for invoice in invoices:
        ledger = (ledgers or {}).get(invoice.pk) or invoice_ledger(invoice=invoice)
        owed = ledger.owed(invoice=invoice, order=order)
        current = (
            Refund.objects.filter(invoice=invoice)
            .exclude(status=RefundStatus.CONFIRMED)
            .select_related("asset", "chain")
            .first()
        )
        if current is None and owed > 0:
            refund = Refund.objects.create(
                order=order,
                invoice=invoice,
                chain_id=invoice.asset.chain_id,
                asset_id=invoice.asset_id,
                amount=owed,
                owed_block=_owed_since(invoice=invoice, ledger=ledger),
            )
            _event(refund=refund, order=order, kind=Kind.REFUND_OWED, actor=Actor.SYSTEM)
        elif current is not None and refund_address_changeable(current) and current.amount != owed:
            # Not opened by staff yet: it follows the money (a further overpayment, a
            # reorganisation). Once pinned, what came since is owed in a refund of its own.
            # More owed: owed since now, as a new refund would be.
            since = {"owed_block": _owed_since(invoice=invoice, ledger=ledger)}
            Refund.objects.filter(pk=current.pk).update(
                amount=owed, **(since if owed > current.amount else {})
            )


def order_refund_owed_record(*, order: Order) -> None:
    """Staff refunded the order (orders.hooks, `order_refund_record`): all it received is owed."""
    with order_and_invoices_locked(order.pk) as (locked, invoices):
        refunds_owed_sync(order=locked, invoices=invoices)


def refund_address_clean(*, address: str, confirmation: str = "") -> str:
    """The refund address in lower case, or PaymentError (code `address`) with the reason.

    A checksummed address (EIP-55) proves itself; mixed case that fails the checksum is a
    typo; one without checksum (all lower or upper case) is accepted only when typed twice.
    """
    address, confirmation = (address or "").strip(), (confirmation or "").strip()
    if not ADDRESS.match(address):
        raise PaymentError(
            _("An address is 0x followed by 40 hexadecimal characters (0-9, a-f)."),
            code="address",
        )
    digits = address[2:]
    has_checksum = is_checksum_address(address)
    if not has_checksum and digits not in (digits.lower(), digits.upper()):
        raise PaymentError(
            _(
                "This address fails its checksum (the mix of capitals): it holds a typo. "
                "Copy it again from your wallet."
            ),
            code="address",
        )
    if confirmation and confirmation.lower() != address.lower():
        raise PaymentError(_("The two addresses differ."), code="address")
    if not has_checksum and not confirmation:
        raise PaymentError(
            _("This address has no checksum capitals: type it a second time to confirm it."),
            code="address",
        )
    if int(digits, 16) == 0:
        raise PaymentError(_("Funds sent to the zero address are lost."), code="address")
    if Invoice.objects.filter(deposit_address=address.lower()).exists():
        raise PaymentError(
            _("This is one of our deposit addresses: give an address of yours."), code="address"
        )
    return address.lower()


def refund_address_set(
    *, order: Order, address: str, confirmation: str = "", user: User, actor: str
) -> list[Refund]:
    """The customer gives (or corrects) the address of the refunds not sent yet."""
    address = refund_address_clean(address=address, confirmation=confirmation)
    now = timezone.now()
    with order_and_invoices_locked(order.pk) as (order, _invoices):
        refunds = list(
            Refund.objects.filter(order=order, amount__gt=0)
            .exclude(status=RefundStatus.CONFIRMED)
            .select_related("asset", "chain")
        )
        if not refunds:
            raise PaymentError(_("No refund is owed on this order."), code="no_refund")
        if not any(refund.status in UNSENT for refund in refunds):
            raise PaymentError(
                _("The refund was sent already: its address can no longer change."),
                code="refund_sent",
            )
        if not any(refund_address_changeable(refund) for refund in refunds):
            raise PaymentError(
                _(
                    "Our team is sending the refund to the address you gave: it can no longer "
                    "change."
                ),
                code="refund_pinned",
            )
        changed = []
        for refund in refunds:
            if not refund_address_changeable(refund) or (
                refund.status == RefundStatus.ADDRESS_GIVEN and refund.address == address
            ):
                continue
            refund.address, refund.status, refund.address_given_at = (
                address,
                RefundStatus.ADDRESS_GIVEN,
                now,
            )
            refund.save(update_fields=["address", "status", "address_given_at"])
            _event(
                refund=refund,
                order=order,
                kind=Kind.REFUND_ADDRESS_GIVEN,
                actor=actor,
                actor_user=user,
            )
            changed.append(refund)
    return changed


SUBMITTABLE: dict[str, StrOrPromise] = {
    RefundStatus.OWED: _("The customer has not given a refund address yet."),
    RefundStatus.SENT: _("A transaction is being checked for this refund already."),
    RefundStatus.CONFIRMED: _("This refund is done."),
}


def refund_open(*, refund: Refund) -> Refund:
    """Staff open the refund to pay it: its address (and amount) are pinned from now on, so
    what staff are shown is what they pay and what the chain check expects."""
    with order_and_invoices_locked(refund.order_id):
        unpinned = Refund.objects.filter(
            pk=refund.pk, status__in=[*UNSENT, RefundStatus.REJECTED], pinned_at=None
        )
        unpinned.exclude(address="").update(pinned_at=timezone.now())
        return Refund.objects.select_related("order", "asset", "chain").get(pk=refund.pk)


def refund_tx_submit(*, refund: Refund, tx_hash: str, address: str, staff_user: User) -> Refund:
    """Staff paid the refund from the store's wallet to `address` (the one they were shown)
    and paste its hash: checked on chain next (payments.refunds.verify), never taken on trust.
    Raises PaymentError with the reason; a refund whose address is not `address` is refused,
    never re-targeted."""
    tx_hash = tx_hash_clean(tx_hash)
    if not tx_hash:
        raise PaymentError(_("Paste the hash of the refund transaction."), code="tx_hash")
    with order_and_invoices_locked(refund.order_id) as (order, _invoices):
        refund = Refund.objects.select_related("asset", "chain").get(pk=refund.pk)
        if refund.status in SUBMITTABLE:
            raise PaymentError(SUBMITTABLE[refund.status], code="not_submittable")
        if refund.address != (address or "").strip().lower():
            raise PaymentError(
                _(
                    "The refund address is not the one this page showed: reload the refund and "
                    "check it before sending anything."
                ),
                code="address_changed",
            )
        used = _("This transaction already proves another refund.")
        if (
            Refund.objects.filter(chain_id=refund.chain_id, tx_hash=tx_hash)
            .filter(status__in=[RefundStatus.SENT, RefundStatus.CONFIRMED])
            .exists()
        ):
            raise PaymentError(used, code="already_used")
        refund.status, refund.tx_hash, refund.staff_user = RefundStatus.SENT, tx_hash, staff_user
        refund.sent_at, refund.rejection, refund.amount_sent = timezone.now(), "", None
        refund.pinned_at = refund.pinned_at or refund.sent_at
        refund.block_number = None
        try:
            with transaction.atomic():
                refund.save()
        except IntegrityError:
            # Pasted for another order's refund at the same moment: the constraint decides.
            raise PaymentError(used, code="already_used") from None
        _event(
            refund=refund,
            order=order,
            kind=Kind.REFUND_SENT,
            actor=Actor.STAFF,
            actor_user=staff_user,
        )
        enqueue_after_commit("payments.tasks.refund_verify_task", refund.pk)
    return refund


def _invoice_close(*, invoice: Invoice) -> None:
    """The money of an order that got nothing went back: its invoice closes, so whatever
    reaches its address later is flagged and owed back in full, never credited."""
    if invoice.status != Invoice.Status.CLOSED:
        invoice.status, invoice.closed_at = Invoice.Status.CLOSED, timezone.now()
        invoice.save(update_fields=["status", "closed_at"])


def refund_verdict_record(
    *, refund: Refund, tx_hash: str, rejection: str, amount_sent: int, block_number: int | None
) -> bool:
    """The chain's answer on the refund's transaction (payments.refunds.verify): confirmed
    (no `rejection`) or refused with its reason. False if the refund moved on meanwhile (staff
    pasted another hash, or another check recorded it first)."""
    with order_and_invoices_locked(refund.order_id) as (order, invoices):
        confirmed = not rejection
        now = timezone.now()
        fields = {
            "status": RefundStatus.CONFIRMED if confirmed else RefundStatus.REJECTED,
            "rejection": rejection,
            "amount_sent": amount_sent,
            "block_number": block_number,
            "confirmed_at": now if confirmed else None,
        }
        if not Refund.objects.filter(
            pk=refund.pk, status=RefundStatus.SENT, tx_hash=tx_hash
        ).update(**fields):
            return False
        refund = Refund.objects.select_related("asset", "chain").get(pk=refund.pk)
        if confirmed:
            _event(refund=refund, order=order, kind=Kind.REFUND_CONFIRMED, actor=Actor.SYSTEM)
            if order.status in GOT_NOTHING:
                _invoice_close(invoice=next(i for i in invoices if i.pk == refund.invoice_id))
            # Money received since the refund was computed is owed in a refund of its own.
            refunds_owed_sync(order=order, invoices=invoices)
        else:
            _event(
                refund=refund,
                order=order,
                kind=Kind.REFUND_REJECTED,
                actor=Actor.SYSTEM,
                reason=REJECTIONS[rejection],
            )
    return True
