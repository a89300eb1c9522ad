"""Crypto payments: chains, assets, rates, invoices and the transfers the watcher saw."""

import os
import re
from decimal import Decimal
from typing import TypedDict

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from orders.models import Order


class _Digits(TypedDict):
    max_digits: int
    decimal_places: int


# uint256 amounts overflow bigint: base units live in NUMERIC(78, 0). Typed so that
# `**BASE_UNITS` passes as DecimalField's two keyword arguments.
BASE_UNITS: _Digits = {"max_digits": 78, "decimal_places": 0}
# Native coin transfers have no log index; this sentinel keeps them in the same unique key.
# Ether sent by a contract inside a transaction (an internal transfer) takes the sentinels
# below it: NATIVE_LOG_INDEX - n for the n-th call of the transaction's trace.
NATIVE_LOG_INDEX = -1


class Chain(models.Model):
    chain_id = models.PositiveBigIntegerField(_("chain id"), unique=True)
    name = models.CharField(_("name"), max_length=60)
    rpc_url_env = models.CharField(
        _("RPC URL variable"),
        max_length=80,
        blank=True,
        help_text=_("Name of the environment variable holding the RPC URL (it may hold a key)."),
    )
    default_rpc_url = models.CharField(
        _("default RPC URL"),
        max_length=200,
        blank=True,
        help_text=_("Used when the variable is unset; meant for the local devnet only."),
    )
    public_rpc_url = models.URLField(
        _("public RPC URL"),
        blank=True,
        help_text=_(
            "Given to customers' wallets that do not know this network yet. Never a URL "
            "holding a key: every visitor can read it."
        ),
    )

    class FinalityTag(models.TextChoices):
        NONE = "", _("Confirmation count")
        SAFE = "safe", _("Block tag “safe”")
        FINALIZED = "finalized", _("Block tag “finalized”")

    confirmations = models.PositiveSmallIntegerField(_("confirmations required"), default=12)
    # Where the chain's RPC answers the tag, a transfer counts once its block is at or below
    # that tag's block; else after `confirmations` blocks (payments/presets.py cites both).
    finality_tag = models.CharField(
        _("finality rule"), max_length=10, choices=FinalityTag.choices, blank=True, default=""
    )
    block_time_seconds = models.DecimalField(
        _("block time (s)"), max_digits=6, decimal_places=2, default=Decimal("12")
    )
    explorer_tx_url = models.CharField(
        _("explorer link template"),
        max_length=200,
        blank=True,
        help_text=_("With {tx}, e.g. https://etherscan.io/tx/{tx}"),
    )
    is_devnet = models.BooleanField(
        _("test network"),
        default=False,
        help_text=_("Deposit addresses come from the public test key: never real money."),
    )
    is_active = models.BooleanField(_("active"), default=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("chain")
        verbose_name_plural = _("chains")

    def __str__(self) -> str:
        return f"{self.name} ({self.chain_id})"

    @property
    def rpc_url(self) -> str:
        if self.rpc_url_env and os.environ.get(self.rpc_url_env):
            return os.environ[self.rpc_url_env]
        return self.default_rpc_url

    def explorer_link(self, tx_hash: str) -> str:
        return self.explorer_tx_url.replace("{tx}", tx_hash) if self.explorer_tx_url else ""


class PriceFeed(models.Model):
    """A Chainlink data feed on a chain, read with latestRoundData through the chain's RPC.

    A model rather than fields on Asset: one EUR/USD feed converts every asset of its chain,
    one sequencer-uptime feed guards them all, and each feed has its own decimals and heartbeat.
    """

    class Role(models.TextChoices):
        PRICE = "price", _("Asset price in USD")
        FIAT = "fiat", _("Store currency in USD")
        SEQUENCER = "sequencer", _("L2 sequencer uptime")

    chain = models.ForeignKey(
        Chain, on_delete=models.CASCADE, related_name="price_feeds", verbose_name=_("chain")
    )
    pair = models.CharField(_("pair"), max_length=30, help_text="ETH/USD, EUR/USD, sequencer")
    role = models.CharField(_("role"), max_length=10, choices=Role.choices)
    # Lower-case hex, like token contracts.
    address = models.CharField(_("feed contract"), max_length=42)
    decimals = models.PositiveSmallIntegerField(_("decimals"), default=8)
    heartbeat_seconds = models.PositiveIntegerField(
        _("heartbeat (s)"),
        help_text=_("The feed updates at least this often; an older answer is refused."),
    )

    class Meta:
        ordering = ["chain", "pair"]
        verbose_name = _("price feed")
        verbose_name_plural = _("price feeds")
        constraints = [
            models.UniqueConstraint(fields=["chain", "pair"], name="one_feed_per_pair"),
            models.UniqueConstraint(
                fields=["chain"], condition=Q(role="sequencer"), name="one_sequencer_feed"
            ),
            models.CheckConstraint(
                condition=Q(address__regex=r"^0x[0-9a-f]{40}$"), name="feed_address_lower_hex"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.pair} · {self.chain.name}"

    def clean(self) -> None:
        self.address = self.address.lower()
        if not re.fullmatch(r"0x[0-9a-f]{40}", self.address):
            raise ValidationError(
                {"address": _("A contract address is 0x followed by 40 hex digits.")}
            )


class Asset(models.Model):
    class Kind(models.TextChoices):
        NATIVE = "native", _("Native coin")
        ERC20 = "erc20", _("ERC-20 token")

    slug = models.SlugField(_("id"), max_length=40, unique=True, help_text="usdc-ethereum")
    chain = models.ForeignKey(
        Chain, on_delete=models.PROTECT, related_name="assets", verbose_name=_("chain")
    )
    kind = models.CharField(_("kind"), max_length=8, choices=Kind.choices)
    symbol = models.CharField(_("symbol"), max_length=12)
    name = models.CharField(_("name"), max_length=60)
    # Lower-case hex; blank for the native coin.
    contract_address = models.CharField(_("token contract"), max_length=42, blank=True)
    decimals = models.PositiveSmallIntegerField(_("decimals"))
    is_active = models.BooleanField(_("offered at checkout"), default=True)
    price_feed = models.ForeignKey(
        PriceFeed,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        limit_choices_to={"role": PriceFeed.Role.PRICE},
        verbose_name=_("price feed (USD)"),
        help_text=_("Without one, only a manual rate prices this asset."),
    )
    is_stablecoin = models.BooleanField(
        _("stablecoin"),
        default=False,
        help_text=_("Refused while its USD feed is outside the peg band (depeg guard)."),
    )
    # Why the last feed refresh refused this asset's rate (blank: it did not); new invoices
    # then wait for a good reading or a manual rate.
    rate_refusal = models.CharField(_("rate refused because"), max_length=300, blank=True)
    rate_checked_at = models.DateTimeField(_("rate last checked"), null=True, blank=True)
    # The feed rate that moved beyond PAYMENTS_RATE_MAX_MOVE (payments.rates): while set, no
    # feed rate prices this asset, and staff see it in their queue until they confirm it.
    rate_held = models.ForeignKey(
        "Rate",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        editable=False,
        verbose_name=_("rate held"),
    )

    class Meta:
        ordering = ["chain", "symbol"]
        verbose_name = _("asset")
        verbose_name_plural = _("assets")
        constraints = [
            models.UniqueConstraint(
                fields=["chain", "contract_address"],
                condition=Q(kind="erc20"),
                name="one_asset_per_token_contract",
            ),
            models.UniqueConstraint(
                fields=["chain"], condition=Q(kind="native"), name="one_native_asset_per_chain"
            ),
            models.CheckConstraint(
                condition=(Q(kind="native", contract_address="") | ~Q(kind="native"))
                & (~Q(kind="erc20") | ~Q(contract_address="")),
                name="token_contract_only_for_erc20",
            ),
            models.CheckConstraint(
                condition=Q(contract_address=Lower("contract_address")),
                name="token_contract_in_lower_case",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.symbol} · {self.chain.name}"

    def clean(self) -> None:
        # Explorers show checksummed (mixed-case) addresses; logs come in lower case.
        self.contract_address = self.contract_address.lower()
        if self.contract_address and not re.fullmatch(r"0x[0-9a-f]{40}", self.contract_address):
            raise ValidationError(
                {"contract_address": _("A contract address is 0x followed by 40 hex digits.")}
            )
        feed = self.price_feed if self.price_feed_id else None
        if feed is not None and feed.chain_id != self.chain_id:
            raise ValidationError({"price_feed": _("Choose a price feed of the asset's chain.")})

    @property
    def is_native(self) -> bool:
        return self.kind == self.Kind.NATIVE


class Rate(models.Model):
    """What one whole unit of an asset is worth in the store currency, at a time."""

    class Kind(models.TextChoices):
        FEED = "feed", _("Price feeds")
        MANUAL = "manual", _("Set by staff")

    asset = models.ForeignKey(
        Asset, on_delete=models.CASCADE, related_name="rates", verbose_name=_("asset")
    )
    currency = models.CharField(_("currency"), max_length=3)
    rate = models.DecimalField(_("rate"), max_digits=24, decimal_places=8)
    source = models.CharField(_("source"), max_length=60)
    fetched_at = models.DateTimeField(_("time"), default=timezone.now)
    kind = models.CharField(_("kind"), max_length=8, choices=Kind.choices, default="feed")
    # No invoice is issued at this rate from then on: a feed rate lasts while its feeds are
    # within their heartbeat (and it was read recently); a manual one until staff said.
    expires_at = models.DateTimeField(_("valid until"))
    # The oldest `updatedAt` among the feeds that made this rate.
    feed_updated_at = models.DateTimeField(_("feeds updated"), null=True, blank=True)
    reason = models.TextField(_("reason"), blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("set by"),
    )
    # The last feed read that gave this rate: a move is measured from a rate read this late.
    read_at = models.DateTimeField(_("last read"), null=True, blank=True, editable=False)
    # A feed rate that moved beyond the band from the trusted rate before it: it priced nothing
    # unless staff confirmed it, and a rate held and not confirmed is never a rate to trust.
    held = models.BooleanField(_("held"), default=False, editable=False)
    confirmed_at = models.DateTimeField(_("confirmed"), null=True, blank=True, editable=False)
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        editable=False,
        verbose_name=_("confirmed by"),
    )

    class Meta:
        ordering = ["-fetched_at"]
        get_latest_by = "fetched_at"
        verbose_name = _("rate")
        verbose_name_plural = _("rates")
        indexes = [models.Index(fields=["asset", "currency", "-fetched_at"])]
        constraints = [models.CheckConstraint(condition=Q(rate__gt=0), name="rate_positive")]

    def __str__(self) -> str:
        return f"1 {self.asset.symbol} = {self.rate} {self.currency}"


class Invoice(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        PAID = "paid", _("Paid")
        # Replaced by an invoice in another asset, or settled by other means.
        CLOSED = "closed", _("Closed")

    FLAGS = (
        "underpaid",
        "overpaid",
        "paid_late",
        "wrong_asset",
        "multiple",
        "marked",
        "review",
        "funds_lost",
    )

    order = models.ForeignKey(
        Order, on_delete=models.PROTECT, related_name="invoices", verbose_name=_("order")
    )
    asset = models.ForeignKey(
        Asset, on_delete=models.PROTECT, related_name="invoices", verbose_name=_("asset")
    )
    status = models.CharField(_("status"), max_length=8, choices=Status.choices, default="open")
    deposit_address = models.CharField(_("deposit address"), max_length=42, unique=True)
    derivation_index = models.PositiveIntegerField(_("derivation index"), unique=True)
    amount_due = models.DecimalField(_("amount due (base units)"), **BASE_UNITS)
    rate = models.ForeignKey(
        Rate, on_delete=models.PROTECT, related_name="+", verbose_name=_("rate")
    )
    locked_rate = models.DecimalField(_("locked rate"), max_digits=24, decimal_places=8)
    fiat_amount = models.DecimalField(_("order total"), max_digits=12, decimal_places=2)
    currency = models.CharField(_("currency"), max_length=3)
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    expires_at = models.DateTimeField(_("pay before"))
    monitor_until = models.DateTimeField(_("watched until"))
    # Confirmed, and seen but not yet confirmed, counted transfers (base units).
    amount_received = models.DecimalField(_("received"), default=0, **BASE_UNITS)
    amount_pending = models.DecimalField(_("pending"), default=0, **BASE_UNITS)
    closed_at = models.DateTimeField(_("closed"), null=True, blank=True)
    # ETH sent by contracts leaves no transaction naming the address: up to this block, the
    # address's balance was explained by its recorded transfers
    # (payments/watcher/internal_transfers.py).
    balance_explained_block = models.PositiveBigIntegerField(
        _("balance explained up to block"), null=True, blank=True
    )
    underpaid = models.BooleanField(_("underpaid"), default=False)
    overpaid = models.BooleanField(_("overpaid (refund owed)"), default=False)
    paid_late = models.BooleanField(_("paid late"), default=False)
    wrong_asset = models.BooleanField(_("wrong asset"), default=False)
    multiple = models.BooleanField(_("several transfers"), default=False)
    marked = models.BooleanField(_("marked paid by staff"), default=False)
    review = models.BooleanField(_("needs staff review"), default=False)
    # The order was paid, then the money left the chain (reorganisation): provisioning waits.
    funds_lost = models.BooleanField(_("funds lost after payment"), default=False)
    marked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("marked by"),
    )
    marked_reason = models.TextField(_("reason"), blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("invoice")
        verbose_name_plural = _("invoices")
        constraints = [
            models.UniqueConstraint(
                fields=["order"], condition=Q(status="open"), name="one_open_invoice_per_order"
            ),
        ]
        indexes = [models.Index(fields=["status", "monitor_until"])]

    def __str__(self) -> str:
        return f"{self.order.number} · {self.asset.symbol}"

    @property
    def amount_left(self) -> Decimal:
        return max(self.amount_due - self.amount_received - self.amount_pending, Decimal(0))

    @property
    def flags(self) -> list[str]:
        return [flag for flag in self.FLAGS if getattr(self, flag)]


class Transfer(models.Model):
    class Status(models.TextChoices):
        SEEN = "seen", _("Seen")
        CONFIRMED = "confirmed", _("Confirmed")
        ORPHANED = "orphaned", _("Orphaned")

    class Disposition(models.TextChoices):
        # What the transfer means for its invoice, decided once when it is recorded.
        CREDIT = "credit", _("Counts toward the invoice")
        WRONG_ASSET = "wrong_asset", _("Wrong asset")
        CLOSED_INVOICE = "closed_invoice", _("Invoice closed")
        UNMONITORED = "unmonitored", _("After the watch period")

    chain = models.ForeignKey(
        Chain, on_delete=models.PROTECT, related_name="transfers", verbose_name=_("chain")
    )
    tx_hash = models.CharField(_("transaction"), max_length=66)
    log_index = models.IntegerField(_("log index"))
    block_number = models.PositiveBigIntegerField(_("block"))
    block_hash = models.CharField(_("block hash"), max_length=66)
    block_time = models.DateTimeField(_("block time"))
    from_address = models.CharField(_("from"), max_length=42)
    to_address = models.CharField(_("to"), max_length=42, db_index=True)
    asset = models.ForeignKey(
        Asset, on_delete=models.PROTECT, related_name="transfers", verbose_name=_("asset")
    )
    amount = models.DecimalField(_("amount (base units)"), **BASE_UNITS)
    invoice = models.ForeignKey(
        Invoice,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="transfers",
        verbose_name=_("invoice"),
    )
    disposition = models.CharField(
        _("disposition"), max_length=16, choices=Disposition.choices, default="credit"
    )
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default="seen")
    seen_at = models.DateTimeField(_("seen"), default=timezone.now)
    confirmed_at = models.DateTimeField(_("confirmed"), null=True, blank=True)

    class Meta:
        ordering = ["block_number", "log_index"]
        verbose_name = _("transfer")
        verbose_name_plural = _("transfers")
        constraints = [
            models.UniqueConstraint(
                fields=["chain", "tx_hash", "log_index"], name="transfer_recorded_once"
            ),
        ]
        indexes = [models.Index(fields=["chain", "status", "block_number"])]

    def __str__(self) -> str:
        return f"{self.tx_hash}:{self.log_index}"

    @property
    def is_native(self) -> bool:
        return self.log_index <= NATIVE_LOG_INDEX


class ScanCursor(models.Model):
    """The last block of a chain whose transfers are all recorded, and its hash."""

    chain = models.OneToOneField(Chain, on_delete=models.CASCADE, related_name="cursor")
    block_number = models.PositiveBigIntegerField(_("block"))
    block_hash = models.CharField(_("block hash"), max_length=66)
    # Adapts to what the RPC accepts: halved on "range too large", grown back on success.
    block_range = models.PositiveIntegerField(_("blocks per request"), default=100)
    head_block = models.PositiveBigIntegerField(_("chain head"), null=True, blank=True)
    # Timestamp of the cursor's block: orders expire once it is past their deadline. Unknown
    # (null) until a scan moves the cursor, e.g. right after a reorganisation took it back.
    block_time = models.DateTimeField(_("block time"), null=True, blank=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)
    # The end of the last scan that met no RPC error (a new cursor counts as just scanned):
    # /healthz/ready judges the watcher by its age, without calling the RPC itself.
    scanned_at = models.DateTimeField(_("last successful scan"), default=timezone.now)
    last_error = models.TextField(_("last error"), blank=True)

    class Meta:
        verbose_name = _("scan cursor")
        verbose_name_plural = _("scan cursors")

    def __str__(self) -> str:
        return f"{self.chain.name} @ {self.block_number}"


class ScannedBlock(models.Model):
    """Recent scanned block hashes: where a reorg walks back to find the common ancestor."""

    chain = models.ForeignKey(Chain, on_delete=models.CASCADE, related_name="+")
    number = models.PositiveBigIntegerField()
    hash = models.CharField(max_length=66)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["chain", "number"], name="one_hash_per_height"),
        ]

    def __str__(self) -> str:
        return f"{self.number} {self.hash}"


class PaymentClaim(models.Model):
    """The customer pressed "I've paid"."""

    order = models.ForeignKey(
        Order, on_delete=models.CASCADE, related_name="payment_claims", verbose_name=_("order")
    )
    invoice = models.ForeignKey(
        Invoice,
        on_delete=models.CASCADE,
        related_name="claims",
        null=True,
        blank=True,
        verbose_name=_("invoice"),
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("customer"),
    )
    tx_hash = models.CharField(_("transaction"), max_length=66, blank=True)
    created_at = models.DateTimeField(_("time"), default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("payment claim")
        verbose_name_plural = _("payment claims")

    def __str__(self) -> str:
        return f"{self.order.number} @ {self.created_at:%Y-%m-%d %H:%M}"


# Refunds live in their own module; imported here so Django registers the model.
from payments.refunds.models import Refund  # noqa: E402, F401
