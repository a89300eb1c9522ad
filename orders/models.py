import ipaddress
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, models, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from catalog.models import TERMS, Environment, GpuModel
from catalog.vat import VatSplit, price_split
from rental.text import refuse_control_characters_but_lines


class OrderStatus(models.TextChoices):
    AWAITING_PAYMENT = "awaiting_payment", _("Awaiting payment")
    CONFIRMING = "confirming", _("Payment confirming")
    PAID = "paid", _("Paid")
    PROVISIONING = "provisioning", _("Provisioning")
    ACTIVE = "active", _("Active")
    COMPLETED = "completed", _("Completed")
    EXPIRED = "expired", _("Expired")
    CANCELLED = "cancelled", _("Cancelled")
    REFUNDED = "refunded", _("Refunded")


S = OrderStatus

# The one table of allowed transitions (DESIGN.md, "Order lifecycle").
ALLOWED_TRANSITIONS: dict[str, frozenset[str]] = {
    S.AWAITING_PAYMENT: frozenset({S.CONFIRMING, S.EXPIRED, S.CANCELLED}),
    S.CONFIRMING: frozenset({S.PAID, S.AWAITING_PAYMENT}),
    S.PAID: frozenset({S.PROVISIONING, S.REFUNDED}),
    S.PROVISIONING: frozenset({S.ACTIVE, S.REFUNDED}),
    S.ACTIVE: frozenset({S.COMPLETED}),
    # A late payment can still revive an expired order while its units are free.
    S.EXPIRED: frozenset({S.CANCELLED, S.CONFIRMING}),
    S.COMPLETED: frozenset(),
    S.CANCELLED: frozenset(),
    S.REFUNDED: frozenset(),
}

# Statuses whose orders hold their units. An order awaiting payment holds them past its
# deadline too, until it actually expires: a payment made in time may be seen late, and the
# expiry waits for the watcher to have read the chain past the deadline (orders.hooks).
HOLDING_STATUSES = (S.AWAITING_PAYMENT, S.CONFIRMING, S.PAID, S.PROVISIONING, S.ACTIVE)

# The provisioning problem of an order whose SSH keys were all deleted after it was placed
# (a deleted key is never installed): only the customer can solve it, by adding a key.
NO_SSH_KEY_PROBLEM = "the order has no SSH public key"


def holding_orders_q(prefix: str = "") -> Q:
    """Orders that hold units; `prefix` lets a GPU query reach its orders."""
    return Q(**{f"{prefix}status__in": HOLDING_STATUSES})


# A rental in these statuses can be extended (orders.extensions); an extension in these is
# still to be paid, and money for it may be in flight.
EXTENDABLE_STATUSES = (S.PAID, S.PROVISIONING, S.ACTIVE)
UNPAID_STATUSES = (S.AWAITING_PAYMENT, S.CONFIRMING)

# Easy to read aloud: no 0/O, 1/I/L. 31^8 numbers, drawn at random (not sequential).
NUMBER_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


def order_number_new() -> str:
    body = "".join(secrets.choice(NUMBER_ALPHABET) for _ in range(8))
    return f"LG-{body[:4]}-{body[4:]}"


class OrderManager(models.Manager["Order"]):
    def create_numbered(self, **fields) -> "Order":
        """Insert an order under a number drawn at random; a number already taken is drawn
        again. Any other conflict (a form token used twice) raises IntegrityError."""
        for _attempt in range(5):
            number = order_number_new()
            try:
                with transaction.atomic():
                    return self.create(number=number, **fields)
            except IntegrityError:
                if not self.filter(number=number).exists():
                    raise
        raise RuntimeError("Could not draw a free order number.")


class Order(models.Model):
    Status = OrderStatus

    number = models.CharField(_("order number"), max_length=16, unique=True, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="orders",
        verbose_name=_("customer"),
    )
    gpu = models.ForeignKey(
        GpuModel, on_delete=models.PROTECT, related_name="orders", verbose_name="GPU"
    )
    environment = models.ForeignKey(
        Environment, on_delete=models.PROTECT, related_name="+", verbose_name=_("environment")
    )
    environment_details = models.TextField(
        _("environment details"), blank=True, validators=[refuse_control_characters_but_lines]
    )
    quantity = models.PositiveIntegerField(_("quantity"))
    term_days = models.PositiveSmallIntegerField(_("term (days)"))
    # Price snapshot: what the customer accepted, whatever the catalog says later.
    daily_rate = models.DecimalField(_("daily rate"), max_digits=10, decimal_places=2)
    total = models.DecimalField(_("total"), max_digits=12, decimal_places=2)
    currency = models.CharField(_("currency"), max_length=3)
    status = models.CharField(
        _("status"), max_length=20, choices=OrderStatus.choices, default=S.AWAITING_PAYMENT
    )
    payment_deadline = models.DateTimeField(_("pay before"))
    created_at = models.DateTimeField(_("created"), default=timezone.now, editable=False)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)
    activated_at = models.DateTimeField(_("activated"), null=True, blank=True)
    ends_at = models.DateTimeField(_("ends"), null=True, blank=True)
    # The most urgent end-of-rental reminder already sent, in hours before `ends_at` (one of
    # orders.reminders.ENDING_REMINDERS_HOURS); null: none yet. Whatever moves `ends_at` later
    # (a paid extension) sets it back to null, so the new end is announced again.
    ending_notice_hours = models.PositiveSmallIntegerField(null=True, blank=True, editable=False)
    access_host = models.CharField(_("host"), max_length=255, blank=True)
    access_port = models.PositiveIntegerField(_("port"), null=True, blank=True)
    access_user = models.CharField(_("user"), max_length=64, blank=True)
    access_notes = models.TextField(_("access notes"), blank=True)
    # The one-time token of the configurator form that placed it: the same form sent twice
    # (Back, double click, replay) finds this order instead of holding more units.
    form_token = models.CharField(max_length=43, blank=True, default="", editable=False)
    # An extension is an order of its own, paid like any other, that adds its term to the
    # rental it extends (orders.extensions); it holds no slots and names no keys.
    extends = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="extensions",
        verbose_name=_("extends"),
        editable=False,
    )
    # The public keys installed on the rental's machines, chosen when ordering.
    ssh_keys = models.ManyToManyField(
        "accounts.SshKey", blank=True, related_name="orders", verbose_name=_("SSH keys")
    )
    # Automatic provisioning (hosts.provisioning): why it is stuck, for staff and the customer;
    # a custom environment's staff go-ahead; when access was revoked and its data removed.
    provisioning_problem = models.CharField(_("provisioning problem"), max_length=255, blank=True)
    environment_confirmed_at = models.DateTimeField(
        _("environment confirmed"), null=True, blank=True
    )
    access_revoked_at = models.DateTimeField(_("access revoked"), null=True, blank=True)
    data_purged_at = models.DateTimeField(_("data removed"), null=True, blank=True)
    # What the host's `grant` answered (deploy/host/locagpu-host): how the rental runs there
    # (`container`, or `shared` on a development machine), its container and workspace volume,
    # and its JupyterLab on the first host. The token is the owner's secret: only the owner's
    # JupyterLab redirect (orders.views.order_jupyter) reads it, never the API nor an event.
    access_mode = models.CharField(_("runtime on the host"), max_length=16, blank=True)
    rental_container = models.CharField(_("container"), max_length=64, blank=True)
    rental_volume = models.CharField(_("workspace volume"), max_length=80, blank=True)
    jupyter_scheme = models.CharField(_("JupyterLab scheme"), max_length=5, blank=True)
    jupyter_port = models.PositiveIntegerField(_("JupyterLab port"), null=True, blank=True)
    jupyter_token = models.CharField(max_length=128, blank=True, editable=False)
    # Each host's answer to `status`: {host name: {"container": running|exited|absent,
    # "volume": present|absent}}, refreshed by provisioning, revocation, purge and staff
    # (hosts.provisioning.state); read, never asked, when a page shows it.
    host_state = models.JSONField(_("state on the hosts"), default=dict, blank=True)
    host_state_read_at = models.DateTimeField(_("state read"), null=True, blank=True)
    # The terms of sale the customer accepted when ordering, with the express request to
    # start before the withdrawal period ends (catalog.legal): the version, when, and a keyed
    # hash of the client's address. Empty on orders placed before the checkbox existed.
    terms_version = models.CharField(_("terms of sale version"), max_length=20, blank=True)
    terms_accepted_at = models.DateTimeField(_("terms accepted"), null=True, blank=True)
    terms_ip_hash = models.CharField(_("IP address hash"), max_length=64, blank=True)

    objects = OrderManager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("order")
        verbose_name_plural = _("orders")
        indexes = [
            models.Index(fields=["gpu", "status"]),
            models.Index(fields=["user", "-created_at"]),
            models.Index(fields=["status", "payment_deadline"]),
            models.Index(fields=["status", "ends_at"]),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(quantity__gte=1), name="order_quantity_positive"),
            models.CheckConstraint(condition=Q(term_days__in=TERMS), name="order_term_3_7_30"),
            models.UniqueConstraint(
                fields=["form_token"], condition=~Q(form_token=""), name="order_form_token_once"
            ),
        ]

    def __str__(self) -> str:
        return self.number

    @property
    def payment_window_closed(self) -> bool:
        return self.payment_deadline <= timezone.now()

    @property
    def lacks_ssh_key(self) -> bool:
        return self.provisioning_problem == NO_SSH_KEY_PROBLEM

    @property
    def is_extension(self) -> bool:
        return self.extends_id is not None

    @property
    def has_access_details(self) -> bool:
        return self.status == S.ACTIVE and bool(self.access_host)

    @property
    def has_jupyter(self) -> bool:
        return self.has_access_details and bool(self.jupyter_origin)

    @property
    def jupyter_origin(self) -> str:
        """Where the rental's JupyterLab answers: under a host name of its own, its container's
        name below its host's (a wildcard DNS name and certificate on real hosts; below
        `localhost`, loopback in every browser, on this machine's). Browsers keep cookies per
        host name, not per port: on one name for all, the rentals of a host would share their
        JupyterLab logins and a renter's own server on its port would receive the others'
        (and, on this machine, the store's session). Empty where none may be offered: an IP
        address has no name to give each rental, plain HTTP off this machine carries the
        token in clear."""
        if not (self.jupyter_port and self.jupyter_token and self.rental_container):
            return ""
        try:
            address = ipaddress.ip_address(self.access_host)
        except ValueError:
            address = None
        if (address is not None and address.is_loopback) or self.access_host == "localhost":
            name = f"{self.rental_container}.localhost"
        elif address is not None or self.jupyter_scheme != "https":
            return ""
        else:
            name = f"{self.rental_container}.{self.access_host}"
        return f"{self.jupyter_scheme}://{name}:{self.jupyter_port}"

    @property
    def runs_shared(self) -> bool:
        """On a development host's shared mode: no container, no isolation, no GPU."""
        return self.access_mode == "shared"

    @property
    def data_purge_due(self):
        """When the purge removes the rental's files from its hosts: the retention after the
        term's end (its revocation when it never started); None when nothing is kept."""
        # Granted by the host script (its answer's mode; or revoked by it, before the mode
        # was recorded): staff's manual hosts keep no files for the store to remove.
        granted = bool(self.access_mode) or self.access_revoked_at is not None
        ended = self.ends_at or self.access_revoked_at
        if self.status not in (S.COMPLETED, S.REFUNDED) or not granted or ended is None:
            return None
        if self.data_purged_at is not None:
            return None
        return ended + timedelta(days=settings.RENTAL_DATA_RETENTION_DAYS)

    @property
    def files_downloadable(self) -> bool:
        """The ended rental's files can be downloaded from its hosts until the purge."""
        due = self.data_purge_due
        return due is not None and timezone.now() < due

    @property
    def vat(self) -> VatSplit:
        """The total split for its buyer as their facture splits it (read with the user)."""
        return price_split(total=self.total, buyer_vat_number=self.user.vat_number)


class OrderEvent(models.Model):
    """One line of an order's timeline: a status change or a payment fact, with who did it."""

    class Kind(models.TextChoices):
        STATUS = "status", _("Status change")
        PAYMENT_CLAIMED = "payment_claimed", _("Customer reported a payment")
        TRANSFER_SEEN = "transfer_seen", _("Transfer seen on chain")
        TRANSFER_CONFIRMED = "transfer_confirmed", _("Transfer confirmed")
        TRANSFER_ORPHANED = "transfer_orphaned", _("Transfer removed by a reorganisation")
        PAYMENT_FLAGGED = "payment_flagged", _("Payment needs attention")
        REFUND_OWED = "refund_owed", _("Refund owed")
        REFUND_ADDRESS_GIVEN = "refund_address_given", _("Refund address given")
        REFUND_SENT = "refund_sent", _("Refund sent, checking on chain")
        REFUND_CONFIRMED = "refund_confirmed", _("Refund confirmed on chain")
        REFUND_REJECTED = "refund_rejected", _("Refund transaction refused")
        PROVISIONING = "provisioning", _("Host preparation")
        PROVISIONING_FAILED = "provisioning_failed", _("Host preparation failed")
        ENVIRONMENT_CONFIRMED = "environment_confirmed", _("Custom environment confirmed")
        EXTENDED = "extended", _("Rental extended")
        ACCESS_REVOKED = "access_revoked", _("Access revoked")
        DATA_PURGED = "data_purged", _("Rental data removed")
        NOTE = "note", _("Note")

    class Actor(models.TextChoices):
        CUSTOMER = "customer", _("Customer")
        STAFF = "staff", _("Staff")
        SYSTEM = "system", _("System")
        PARTNER = "partner", _("Partner API")

    order = models.ForeignKey(
        Order, on_delete=models.CASCADE, related_name="events", verbose_name=_("order")
    )
    kind = models.CharField(_("kind"), max_length=24, choices=Kind.choices, default=Kind.STATUS)
    old_status = models.CharField(
        _("from status"), max_length=20, choices=OrderStatus.choices, blank=True
    )
    new_status = models.CharField(
        _("to status"), max_length=20, choices=OrderStatus.choices, blank=True
    )
    actor = models.CharField(_("by"), max_length=10, choices=Actor.choices)
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("person"),
    )
    reason = models.TextField(_("reason"), blank=True)
    data = models.JSONField(_("details"), default=dict, blank=True)
    created_at = models.DateTimeField(_("time"), default=timezone.now, db_index=True)
    # Set once the event was claimed: its deliveries made, its e-mail sent; a second run skips it.
    dispatched_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name = _("order event")
        verbose_name_plural = _("order events")

    def __str__(self) -> str:
        if self.kind == self.Kind.STATUS and self.old_status != self.new_status:
            return gettext("%(kind)s, from %(old)s to %(new)s") % {
                "kind": self.get_kind_display(),
                "old": self.get_old_status_display() or gettext("new order"),
                "new": self.get_new_status_display(),
            }
        return str(self.get_kind_display())

    @property
    def reason_display(self) -> str:
        # Reasons the system writes are stored in English (gettext_noop) and translated when
        # shown; a reason staff typed has no translation and reads as they wrote it.
        return gettext(self.reason) if self.reason else ""


class OrderEventDelivery(models.Model):
    """One subscriber's share of an event's dispatch (orders.events), made when the event is
    claimed. The subscriber runs in the transaction that sets `done_at`: what it writes commits
    with it, once; a failure rolls back its own work only, and is kept to be tried again."""

    event = models.ForeignKey(
        OrderEvent,
        on_delete=models.CASCADE,
        related_name="deliveries",
        verbose_name=_("order event"),
    )
    # Its name in settings.HOOKS["order_event_with_claim"].
    subscriber = models.CharField(_("subscriber"), max_length=64)
    done_at = models.DateTimeField(_("done"), null=True, blank=True)
    attempts = models.PositiveIntegerField(_("attempts"), default=0)
    last_error = models.TextField(_("last error"), blank=True)
    # When the beat's sweep tries it next, if still not done.
    retry_at = models.DateTimeField(_("next attempt"))

    class Meta:
        ordering = ["event", "id"]
        verbose_name = _("order event delivery")
        verbose_name_plural = _("order event deliveries")
        constraints = [
            models.UniqueConstraint(
                fields=["event", "subscriber"], name="order_event_delivery_once"
            ),
        ]
        indexes = [
            models.Index(
                fields=["retry_at"],
                condition=Q(done_at__isnull=True),
                name="order_event_delivery_pending",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event} → {self.subscriber}"
