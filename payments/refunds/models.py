"""A refund owed to a customer, and the on-chain transaction that proves it was paid."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from orders.models import Order
from payments.models import BASE_UNITS, Asset, Chain, Invoice


class RefundStatus(models.TextChoices):
    OWED = "owed", _("Owed: waiting for the customer's address")
    ADDRESS_GIVEN = "address_given", _("Address given: to send")
    SENT = "sent", _("Sent: checking on chain")
    CONFIRMED = "confirmed", _("Refunded (confirmed on chain)")
    REJECTED = "rejected", _("Transaction refused: send or paste another")


# Why a pasted transaction does not prove the refund (code -> reason, translated on display).
REJECTIONS = {
    "not_found": gettext_noop("the transaction is not on this network"),
    "reverted": gettext_noop("the transaction failed (reverted) and moved nothing"),
    "wrong_asset": gettext_noop("the transaction sent another currency than the one owed"),
    "wrong_address": gettext_noop("the transaction sent nothing to the refund address"),
    "amount_too_small": gettext_noop("the transaction sent less than the amount owed"),
    "already_used": gettext_noop("the transaction already proves another refund"),
    "wrong_sender": gettext_noop("the transaction was not sent from one of the store's wallets"),
    "too_early": gettext_noop("the transaction was mined before the refund was owed"),
}


class Refund(models.Model):
    Status = RefundStatus

    order = models.ForeignKey(
        Order, on_delete=models.PROTECT, related_name="refunds", verbose_name=_("order")
    )
    invoice = models.ForeignKey(
        Invoice, on_delete=models.PROTECT, related_name="refunds", verbose_name=_("invoice")
    )
    # The chain is the asset's; kept here so a transaction hash is unique per chain.
    chain = models.ForeignKey(Chain, on_delete=models.PROTECT, related_name="+")
    asset = models.ForeignKey(
        Asset, on_delete=models.PROTECT, related_name="+", verbose_name=_("asset")
    )
    amount = models.DecimalField(_("amount owed (base units)"), **BASE_UNITS)
    # Lower-case hex; shown checksummed.
    address = models.CharField(_("refund address"), max_length=42, blank=True)
    tx_hash = models.CharField(_("transaction"), max_length=66, blank=True)
    status = models.CharField(
        _("status"), max_length=16, choices=RefundStatus.choices, default=RefundStatus.OWED
    )
    rejection = models.CharField(
        _("refused because"), max_length=20, blank=True, choices=list(REJECTIONS.items())
    )
    amount_sent = models.DecimalField(
        _("amount sent (base units)"), null=True, blank=True, **BASE_UNITS
    )
    block_number = models.PositiveBigIntegerField(_("block"), null=True, blank=True)
    staff_user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("sent by"),
    )
    created_at = models.DateTimeField(_("owed since"), default=timezone.now)
    # The block of the latest transfer that made it owed: only a transaction mined after it
    # proves the refund (an older transfer of the store's to that address proves nothing).
    owed_block = models.PositiveBigIntegerField(_("owed since block"), null=True, blank=True)
    address_given_at = models.DateTimeField(_("address given"), null=True, blank=True)
    # Staff opened the refund to pay it: from then on its address and amount never change.
    pinned_at = models.DateTimeField(_("address pinned"), null=True, blank=True)
    sent_at = models.DateTimeField(_("sent"), null=True, blank=True)
    confirmed_at = models.DateTimeField(_("confirmed"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("refund")
        verbose_name_plural = _("refunds")
        constraints = [
            # Owed amounts of an invoice add up into its one open refund.
            models.UniqueConstraint(
                fields=["invoice"], condition=~Q(status="confirmed"), name="one_open_refund"
            ),
            # A transaction proves one refund at most.
            models.UniqueConstraint(
                fields=["chain", "tx_hash"],
                condition=Q(status__in=["sent", "confirmed"]),
                name="refund_tx_used_once",
            ),
            models.CheckConstraint(condition=Q(amount__gte=0), name="refund_amount_not_negative"),
            models.CheckConstraint(
                condition=Q(address=Lower("address")), name="refund_address_in_lower_case"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.order.number} · {self.asset.symbol}"
