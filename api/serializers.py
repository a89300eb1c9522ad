"""The order as partners see it: shared by the order endpoints and the webhook payloads."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.selectors import order_payment, order_refund
from catalog.vat import VatMode
from hosts.slots import slots_by_host
from orders.journal import journal_data, order_journal
from orders.models import Order, OrderEvent, OrderStatus
from payments.models import Invoice, Transfer
from payments.refunds.models import REJECTIONS, Refund, RefundStatus
from payments.refunds.selectors import refund_address_display
from payments.selectors import PaymentProgress, TransferProgress, in_asset_units


@extend_schema_field({"type": "string", "pattern": "^[0-9]+$", "example": "547826087"})
class BaseUnitsField(serializers.Field):
    """An integer amount in the asset's smallest unit, as a string: uint256 overflows JSON
    numbers in most languages."""

    def to_representation(self, value) -> str:
        return str(int(value))


class TransferOutputSerializer(serializers.Serializer):
    tx_hash = serializers.CharField(source="transfer.tx_hash")
    log_index = serializers.SerializerMethodField(help_text="Null for a native transfer.")
    amount = BaseUnitsField(source="transfer.amount")
    status = serializers.ChoiceField(source="transfer.status", choices=Transfer.Status.choices)
    block_number = serializers.IntegerField(source="transfer.block_number")
    confirmations = serializers.IntegerField(help_text="Capped at `confirmations_required`.")
    explorer_url = serializers.CharField(help_text="Empty when the chain has no explorer.")

    class Meta:
        ref_name = "Transfer"

    def get_log_index(self, row: TransferProgress) -> int | None:
        return None if row.transfer.is_native else row.transfer.log_index


class PaymentOutputSerializer(serializers.Serializer):
    asset = serializers.CharField(source="asset.slug", help_text="Payment asset id.")
    chain_id = serializers.IntegerField(source="chain.chain_id")
    network = serializers.CharField(source="chain.name")
    token_address = serializers.SerializerMethodField(help_text="Null for the native coin.")
    address = serializers.CharField(source="invoice.deposit_address", help_text="Pay here.")
    amount = BaseUnitsField(source="due", help_text="Amount due, base units.")
    amount_display = serializers.SerializerMethodField(
        help_text="Amount due in whole units, e.g. 547.83."
    )
    decimals = serializers.IntegerField(source="asset.decimals")
    uri = serializers.CharField(help_text="EIP-681 payment request for wallets (what is left).")
    rate = serializers.DecimalField(
        max_digits=24,
        decimal_places=8,
        help_text="The rate locked for this invoice: `fiat_currency` per whole unit of the asset.",
    )
    rate_source = serializers.CharField(help_text="Where the rate came from, e.g. a price feed.")
    rate_expires_at = serializers.DateTimeField(
        help_text="The rate holds until then; an invoice issued later is priced anew."
    )
    fiat_amount = serializers.DecimalField(
        max_digits=12, decimal_places=2, help_text="The order total `amount` converts."
    )
    fiat_currency = serializers.CharField(source="currency")
    status = serializers.ChoiceField(source="invoice.status", choices=Invoice.Status.choices)
    expires_at = serializers.DateTimeField(source="invoice.expires_at")
    monitor_until = serializers.DateTimeField(
        source="invoice.monitor_until", help_text="Late transfers are still seen until then."
    )
    received = BaseUnitsField(help_text="Confirmed amount received, base units.")
    pending = BaseUnitsField(help_text="Seen but not yet confirmed, base units.")
    left = BaseUnitsField(help_text="Still to send, base units.")
    confirmations = serializers.IntegerField(
        help_text="Of the least-confirmed transfer, capped at `confirmations_required`."
    )
    confirmations_required = serializers.IntegerField(source="required")
    head_block = serializers.IntegerField(
        allow_null=True, help_text="The chain head the watcher last saw."
    )
    flags = serializers.ListField(
        source="invoice.flags",
        child=serializers.ChoiceField(choices=[(flag, flag) for flag in Invoice.FLAGS]),
        help_text="Payment exceptions: underpaid, overpaid, paid_late, wrong_asset...",
    )
    transfers = TransferOutputSerializer(many=True)

    class Meta:
        ref_name = "Payment"

    def get_token_address(self, payment: PaymentProgress) -> str | None:
        return None if payment.asset.is_native else payment.asset.contract_address

    def get_amount_display(self, payment: PaymentProgress) -> str:
        return in_asset_units(payment.due, asset=payment.asset)


class RefundOutputSerializer(serializers.Serializer):
    amount = BaseUnitsField(help_text="Amount owed, base units.")
    amount_display = serializers.SerializerMethodField(help_text="Amount owed in whole units.")
    asset = serializers.CharField(source="asset.slug", help_text="Asset id of the refund.")
    decimals = serializers.IntegerField(source="asset.decimals")
    chain_id = serializers.IntegerField(source="chain.chain_id")
    network = serializers.CharField(source="chain.name")
    address = serializers.SerializerMethodField(
        help_text="Refund address (EIP-55 checksummed); empty until given."
    )
    tx_hash = serializers.CharField(help_text="The refund transaction; empty until sent.")
    status = serializers.ChoiceField(choices=RefundStatus.choices)
    rejection = serializers.ChoiceField(
        choices=list(REJECTIONS.items()),
        allow_blank=True,
        help_text="Why the last transaction was refused (status `rejected`); else empty.",
    )

    class Meta:
        ref_name = "Refund"

    def get_amount_display(self, refund: Refund) -> str:
        return in_asset_units(refund.amount, asset=refund.asset)

    def get_address(self, refund: Refund) -> str:
        return refund_address_display(refund)


class OrderEventOutputSerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        source="new_status", choices=OrderStatus.choices, help_text="Status after the event."
    )
    kind = serializers.ChoiceField(choices=OrderEvent.Kind.choices)
    at = serializers.DateTimeField(source="created_at")
    actor = serializers.ChoiceField(choices=OrderEvent.Actor.choices)
    reason = serializers.CharField()

    class Meta:
        ref_name = "OrderEvent"


class AccessOutputSerializer(serializers.Serializer):
    host = serializers.CharField(source="access_host")
    port = serializers.IntegerField(source="access_port", allow_null=True)
    user = serializers.CharField(source="access_user")
    notes = serializers.CharField(source="access_notes")

    class Meta:
        ref_name = "Access"


class JournalOutputSerializer(serializers.Serializer):
    """The order page's experiment-journal card, for machines (the JSON download too)."""

    order = serializers.CharField(help_text="The order number.")
    status = serializers.ChoiceField(choices=OrderStatus.choices)
    gpu = serializers.CharField(help_text="GPU slug.")
    gpu_name = serializers.CharField()
    gpu_count = serializers.IntegerField()
    host_and_slots = serializers.CharField(help_text="Empty until the machines are assigned.")
    environment = serializers.CharField(help_text="Environment slug.")
    environment_details = serializers.CharField()
    term_days = serializers.IntegerField()
    starts_at = serializers.CharField(allow_null=True, help_text="UTC, ISO 8601; null before.")
    ends_at = serializers.CharField(
        allow_null=True, help_text="UTC, ISO 8601; the actual end once ended early."
    )
    time_zone = serializers.CharField(help_text="IANA zone of the `_local` times.")
    starts_at_local = serializers.CharField(allow_null=True)
    ends_at_local = serializers.CharField(allow_null=True)
    price_paid = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = serializers.CharField()

    class Meta:
        ref_name = "Journal"


class SlotsOutputSerializer(serializers.Serializer):
    host = serializers.CharField(help_text="Host name.")
    gpus = serializers.ListField(
        child=serializers.IntegerField(), help_text="GPU indices on that host (CUDA order)."
    )

    class Meta:
        ref_name = "Slots"


class PricedOutputSerializer(serializers.Serializer):
    """How a total splits for the account asking, as its facture will split it: prices are
    VAT included (TTC); a business account with an EU VAT number from outside France pays
    no VAT (reverse charge), its total being the amount excluding VAT."""

    total = serializers.DecimalField(
        max_digits=12,
        decimal_places=2,
        help_text="The amount to pay, VAT included (TTC): daily_rate x days x quantity. Kept "
        "for compatibility: the same as `total_incl_vat`.",
    )
    total_incl_vat = serializers.DecimalField(
        source="vat.total", max_digits=12, decimal_places=2, help_text="Total VAT included."
    )
    total_excl_vat = serializers.DecimalField(
        source="vat.total_excl_vat",
        max_digits=12,
        decimal_places=2,
        help_text="Total excluding VAT (HT).",
    )
    vat_rate = serializers.DecimalField(
        source="vat.rate",
        max_digits=5,
        decimal_places=2,
        help_text="VAT rate in percent; 0 under the franchise or in reverse charge.",
    )
    vat_amount = serializers.DecimalField(
        source="vat.vat_amount", max_digits=12, decimal_places=2, help_text="The VAT in `total`."
    )
    vat_mode = serializers.ChoiceField(source="vat.mode", choices=VatMode.choices)


class OrderOutputSerializer(PricedOutputSerializer):
    number = serializers.CharField(help_text="The order number: your reference everywhere.")
    status = serializers.ChoiceField(choices=OrderStatus.choices)
    gpu = serializers.CharField(source="gpu.slug", help_text="GPU slug.")
    environment = serializers.CharField(source="environment.slug", help_text="Environment slug.")
    environment_details = serializers.CharField()
    quantity = serializers.IntegerField()
    term_days = serializers.IntegerField()
    daily_rate = serializers.DecimalField(
        max_digits=10, decimal_places=2, help_text="Per GPU per day, VAT included."
    )
    currency = serializers.CharField()
    created_at = serializers.DateTimeField()
    payment_deadline = serializers.DateTimeField(
        help_text="Pay before this time. The order stays `awaiting_payment` (its units held) "
        "until the watcher has read the chain past it, then expires if nothing came in time."
    )
    ends_at = serializers.DateTimeField(
        allow_null=True,
        help_text="When the rental ends (or ended, if stopped early); null until active.",
    )
    ssh_keys = serializers.SerializerMethodField(
        help_text="Ids of the SSH keys installed on the machines (`GET /ssh-keys/`)."
    )
    extends = serializers.CharField(
        source="extends_number",  # api.selectors.api_orders_for_user
        allow_null=True,
        default=None,
        help_text="For an extension: the number of the rental it extends; null for a rental.",
    )
    extensions = serializers.SerializerMethodField(
        help_text="The numbers of the rental's extensions, oldest first (`POST "
        "/orders/{number}/extensions/`); once paid, each moved `ends_at` by its `term_days`."
    )
    events = OrderEventOutputSerializer(many=True, help_text="The timeline, oldest first.")
    slots = serializers.SerializerMethodField(
        help_text="The GPUs the order holds, by host (one host when one had enough free); "
        "after the order ends, the ones it held last."
    )
    access = serializers.SerializerMethodField(
        help_text="How to reach the machines; null until the order is active."
    )
    payment = serializers.SerializerMethodField(
        help_text="Payment instructions and progress; null if no invoice was issued."
    )

    refund = serializers.SerializerMethodField(
        help_text="A refund owed to you (overpayment, cancelled after payment): give its "
        "address with `POST /orders/{number}/refund-address/`. Null when none is owed."
    )

    journal = serializers.SerializerMethodField(
        help_text="The experiment-journal card of the order page; null until paid."
    )

    class Meta:
        ref_name = "Order"

    @extend_schema_field(JournalOutputSerializer(allow_null=True))
    def get_journal(self, order: Order) -> dict | None:
        card = order_journal(order=order)
        return journal_data(card) if card else None

    def get_extensions(self, order: Order) -> list[str]:
        extensions = sorted(order.extensions.all(), key=lambda each: (each.created_at, each.pk))
        return [extension.number for extension in extensions]

    def get_ssh_keys(self, order: Order) -> list[int]:
        return [key.pk for key in order.ssh_keys.all()]

    @extend_schema_field(SlotsOutputSerializer(many=True))
    def get_slots(self, order: Order) -> list[dict]:
        grouped = slots_by_host(order.slot_holds.all())
        return [{"host": host, "gpus": gpus} for host, gpus in grouped.items()]

    @extend_schema_field(AccessOutputSerializer(allow_null=True))
    def get_access(self, order: Order) -> dict | None:
        if not order.has_access_details:
            return None
        return AccessOutputSerializer(order).data

    @extend_schema_field(PaymentOutputSerializer(allow_null=True))
    def get_payment(self, order: Order) -> dict | None:
        payment = order_payment(order=order)
        return PaymentOutputSerializer(payment).data if payment else None

    @extend_schema_field(RefundOutputSerializer(allow_null=True))
    def get_refund(self, order: Order) -> dict | None:
        refund = order_refund(order=order)
        return RefundOutputSerializer(refund).data if refund else None


def order_representation(order: Order) -> dict:
    return OrderOutputSerializer(order).data
