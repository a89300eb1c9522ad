"""Invoices (factures) and credit notes (avoirs): legal documents, numbered without gap,
never changed once issued. Not to be mixed up with payments.Invoice, the crypto payment
request (deposit address, amount due) an order is paid through."""

from datetime import date

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from catalog.vat import VatMode
from orders.models import Order


class DocumentImmutable(Exception):
    """An issued document is never changed nor deleted: a refund issues a credit note."""


class DocumentKind(models.TextChoices):
    INVOICE = "invoice", _("Invoice")
    CREDIT_NOTE = "credit_note", _("Credit note")


# Number prefix per kind: F-2026-000001, AV-2026-000001.
PREFIXES = {DocumentKind.INVOICE: "F", DocumentKind.CREDIT_NOTE: "AV"}


class BillingSequence(models.Model):
    """The last number given for a kind of document in a year. Its row is locked by the
    transaction that issues a document and released by its commit: numbers follow each other
    without gap even when payments settle at once, and a rolled-back issue gives its number
    back."""

    kind = models.CharField(max_length=12, choices=DocumentKind.choices)
    year = models.PositiveSmallIntegerField()
    last_number = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["kind", "year"], name="one_sequence_per_kind_year")
        ]

    def __str__(self) -> str:
        return f"{PREFIXES[DocumentKind(self.kind)]}-{self.year}: {self.last_number}"


class DocumentQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise DocumentImmutable("An issued invoice or credit note cannot be changed.")

    def service_period_fix(self, *, start: date, end: date) -> int:
        """The one thing an issued document receives later: the service period it left open
        when the order was paid before its service started, written once, when it starts."""
        still_open = list(self.filter(service_start__isnull=True).values_list("pk", flat=True))
        fixed = models.QuerySet.update(
            self.filter(pk__in=still_open), service_start=start, service_end=end
        )
        # Rendered without the period: the next download renders it again (billing.pdfs).
        DocumentPdf.objects.filter(document__in=still_open).delete()
        return fixed

    def delete(self):
        raise DocumentImmutable("An issued invoice or credit note cannot be deleted.")


class BillingDocument(models.Model):
    """One invoice or credit note, with everything it says copied in when it was issued:
    later changes to the customer's account, the catalog or the settings never reach it."""

    Kind = DocumentKind

    kind = models.CharField(_("kind"), max_length=12, choices=DocumentKind.choices)
    number = models.CharField(_("number"), max_length=20, unique=True)
    year = models.PositiveSmallIntegerField(_("year"))
    sequence_number = models.PositiveIntegerField(_("number in the year"))
    order = models.ForeignKey(
        Order, on_delete=models.PROTECT, related_name="billing_documents", verbose_name=_("order")
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="billing_documents",
        verbose_name=_("customer"),
    )
    # A credit note names the invoice it cancels.
    credited_invoice = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="credit_notes",
        verbose_name=_("invoice credited"),
    )
    issued_at = models.DateTimeField(_("issued"), default=timezone.now)
    # Empty until the service starts (an order paid before its machines are handed over).
    service_start = models.DateField(_("service from"), null=True, blank=True)
    service_end = models.DateField(_("service to"), null=True, blank=True)
    seller = models.JSONField(_("seller"))
    buyer = models.JSONField(_("buyer"))
    # [{"description", "quantity", "unit", "unit_price_excl_vat", "total_excl_vat"}]
    lines = models.JSONField(_("lines"))
    vat_mode = models.CharField(_("VAT"), max_length=16, choices=VatMode.choices)
    vat_rate = models.DecimalField(_("VAT rate (%)"), max_digits=5, decimal_places=2)
    total_excl_vat = models.DecimalField(_("total excl. VAT"), max_digits=12, decimal_places=2)
    vat_amount = models.DecimalField(_("VAT amount"), max_digits=12, decimal_places=2)
    total = models.DecimalField(_("total incl. VAT"), max_digits=12, decimal_places=2)
    currency = models.CharField(_("currency"), max_length=3)
    # {"asset", "symbol", "network", "chain_id", "tx_hashes", "rate", "rate_source", ...}
    payment = models.JSONField(_("payment"), default=dict)

    objects = DocumentQuerySet.as_manager()

    class Meta:
        ordering = ["-issued_at", "-id"]
        verbose_name = _("invoice or credit note")
        verbose_name_plural = _("invoices and credit notes")
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "year", "sequence_number"], name="billing_number_once"
            ),
            # One invoice per order, one credit note per invoice: the event that issues them
            # may be handled twice, the second finds the document there.
            models.UniqueConstraint(fields=["order", "kind"], name="one_document_per_order_kind"),
            models.CheckConstraint(
                condition=Q(kind="invoice", credited_invoice__isnull=True)
                | Q(kind="credit_note", credited_invoice__isnull=False),
                name="credit_note_names_its_invoice",
            ),
        ]
        indexes = [models.Index(fields=["user", "-issued_at"])]

    def __str__(self) -> str:
        return self.number

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise DocumentImmutable("An issued invoice or credit note cannot be changed.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise DocumentImmutable("An issued invoice or credit note cannot be deleted.")

    @property
    def is_credit_note(self) -> bool:
        return self.kind == DocumentKind.CREDIT_NOTE

    @property
    def is_business(self) -> bool:
        return bool(self.buyer.get("company_name") or self.buyer.get("vat_number"))

    @property
    def filename(self) -> str:
        return f"{self.number}.pdf"


class DocumentPdf(models.Model):
    """The PDF a document is handed out as, rendered once and stored (billing.pdfs): a
    download reads it instead of running WeasyPrint again. A column rather than a file: it is
    written, backed up and restored with the document it renders, and every web process reads
    it without a shared volume. A table of its own: the document's row stays immutable (its
    triggers untouched), and lists and exports never load the bytes."""

    document = models.OneToOneField(
        BillingDocument,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="stored_pdf",
        verbose_name=_("document"),
    )
    content = models.BinaryField(_("PDF"))
    rendered_at = models.DateTimeField(_("rendered"), default=timezone.now)

    class Meta:
        verbose_name = _("stored PDF")
        verbose_name_plural = _("stored PDFs")

    def __str__(self) -> str:
        return self.document.filename
