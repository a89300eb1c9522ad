from decimal import ROUND_HALF_UP, Decimal

from django.core.validators import MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from catalog.images import MAX_REFERENCE, cuda_version, image_pinned_by_digest
from catalog.vat import CENT

TERM_CHOICES = [(3, _("3 days")), (7, _("7 days")), (30, _("30 days"))]
TERMS = tuple(days for days, _label in TERM_CHOICES)


def hourly_rate(daily_rate: Decimal) -> Decimal:
    """The hourly equivalent of a daily rate, to the cent: shown beside it, never charged
    (rentals are billed by the day), so rounding half up cannot under-state it."""
    return (Decimal(daily_rate) / 24).quantize(CENT, rounding=ROUND_HALF_UP)


class GpuModel(models.Model):
    """A GPU model the store rents, with its stock of identical units."""

    class FormFactor(models.TextChoices):
        SXM = "sxm", "SXM"
        PCIE = "pcie", "PCIe"

    slug = models.SlugField(_("slug"), unique=True, max_length=40)
    name = models.CharField(_("name"), max_length=80)
    architecture = models.CharField(_("architecture"), max_length=40)
    memory_gb = models.PositiveIntegerField(_("memory (GB)"))
    memory_type = models.CharField(_("memory type"), max_length=20)
    memory_bandwidth_gbps = models.PositiveIntegerField(_("memory bandwidth (GB/s)"))
    form_factor = models.CharField(_("form factor"), max_length=8, choices=FormFactor.choices)
    interconnect = models.CharField(_("interconnect"), max_length=120)
    precisions = models.CharField(
        _("supported precisions"), max_length=120, help_text=_("e.g. FP64, TF32, BF16, FP8")
    )
    power_watts = models.PositiveIntegerField(_("power (W)"))
    units_total = models.PositiveIntegerField(
        _("units in stock"), help_text=_("Units the store can rent out at the same time.")
    )
    is_active = models.BooleanField(_("on sale"), default=True)
    display_order = models.PositiveSmallIntegerField(_("display order"), default=100)
    # Translated through modeltranslation (catalog/translation.py).
    tagline = models.CharField(_("tagline"), max_length=200)
    summary = models.TextField(_("summary"))

    # The technical specification: one section in the admin, and columns the seed
    # (catalog/services.py) keeps in step with catalog/seed_data.py.
    SPECIFICATION_FIELDS = (
        "architecture",
        "memory_gb",
        "memory_type",
        "memory_bandwidth_gbps",
        "form_factor",
        "interconnect",
        "precisions",
        "power_watts",
    )

    class Meta:
        ordering = ["display_order", "name"]
        verbose_name = _("GPU model")
        verbose_name_plural = _("GPU models")

    def __str__(self) -> str:
        return self.name


class TermPrice(models.Model):
    """The daily rate of one GPU for one term, in the store currency."""

    gpu = models.ForeignKey(GpuModel, on_delete=models.CASCADE, related_name="prices")
    term_days = models.PositiveSmallIntegerField(_("term (days)"), choices=TERM_CHOICES)
    daily_rate = models.DecimalField(
        _("daily rate"),
        max_digits=10,
        decimal_places=2,
        validators=[MinValueValidator(Decimal("0.01"))],
    )

    class Meta:
        ordering = ["gpu", "term_days"]
        verbose_name = _("price")
        verbose_name_plural = _("prices")
        constraints = [
            models.UniqueConstraint(fields=["gpu", "term_days"], name="one_price_per_gpu_and_term"),
            models.CheckConstraint(
                condition=models.Q(term_days__in=TERMS), name="term_is_3_7_or_30_days"
            ),
            models.CheckConstraint(
                condition=models.Q(daily_rate__gt=0), name="daily_rate_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.gpu} · {self.term_days} d · {self.daily_rate}"

    @property
    def total_per_gpu(self) -> Decimal:
        return self.daily_rate * self.term_days

    @property
    def hourly_rate(self) -> Decimal:
        return hourly_rate(self.daily_rate)


class AdviceSection(models.Model):
    """One section of practical advice on a GPU page."""

    gpu = models.ForeignKey(GpuModel, on_delete=models.CASCADE, related_name="advice")
    position = models.PositiveSmallIntegerField(_("position"), default=0)
    title = models.CharField(_("title"), max_length=160)
    body = models.TextField(_("text"), help_text=_("Paragraphs separated by a blank line."))

    class Meta:
        ordering = ["gpu", "position"]
        verbose_name = _("advice section")
        verbose_name_plural = _("advice sections")

    def __str__(self) -> str:
        return self.title


class Alternative(models.Model):
    """Another GPU worth a look from this one's page, and the diagnosis that points to it."""

    gpu = models.ForeignKey(GpuModel, on_delete=models.CASCADE, related_name="alternatives")
    target = models.ForeignKey(GpuModel, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveSmallIntegerField(_("position"), default=0)
    reason = models.CharField(_("when it fits"), max_length=300)

    class Meta:
        ordering = ["gpu", "position"]
        verbose_name = _("alternative")
        verbose_name_plural = _("alternatives")
        constraints = [
            models.UniqueConstraint(fields=["gpu", "target"], name="one_alternative_per_pair"),
            models.CheckConstraint(
                condition=~models.Q(gpu=models.F("target")), name="alternative_is_another_gpu"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.gpu} → {self.target}"


def cuda_version_field(verbose_name, **options) -> models.DecimalField:
    """A CUDA version: major.minor with a one-digit minor (10.0 ... 12.9, 13.0), as nvidia-smi
    prints it, so that a decimal compares two as the driver does."""
    return models.DecimalField(
        verbose_name, max_digits=4, decimal_places=1, validators=[MinValueValidator(1)], **options
    )


class Environment(models.Model):
    """What a rental's container starts from: an image the store pinned by digest, with what
    is in it (the facts the pages show), or the customer's own (`requires_details`)."""

    slug = models.SlugField(_("slug"), unique=True, max_length=40)
    name = models.CharField(_("name"), max_length=80)
    description = models.TextField(_("description"))
    image = models.CharField(
        _("image"),
        max_length=MAX_REFERENCE,
        blank=True,
        validators=[image_pinned_by_digest],
        help_text=_("Pinned by digest: registry/name:tag@sha256:… Empty for the customer's own."),
    )
    os_name = models.CharField(_("operating system"), max_length=40, blank=True)
    python_version = models.CharField(_("Python"), max_length=20, blank=True)
    cuda_version = models.CharField(_("CUDA"), max_length=20, blank=True)
    cudnn_version = models.CharField(_("cuDNN"), max_length=20, blank=True)
    pytorch_version = models.CharField(_("PyTorch"), max_length=20, blank=True)
    jupyterlab_version = models.CharField(_("JupyterLab"), max_length=20, blank=True)
    cuda_required = cuda_version_field(
        _("CUDA the host's driver must support"),
        null=True,
        blank=True,
        help_text=_(
            "The lowest CUDA version the host's NVIDIA driver must support (e.g. 12.4): the "
            "environment is never placed on a host that supports less. Empty: no requirement."
        ),
    )
    requires_details = models.BooleanField(
        _("customer describes it"),
        default=False,
        help_text=_("The customer gives the image or the requirements file when ordering."),
    )
    is_active = models.BooleanField(_("offered"), default=True)
    display_order = models.PositiveSmallIntegerField(_("display order"), default=100)

    # What the pages list, in this order, with their labels (blank ones are left out).
    FACT_FIELDS = (
        "os_name",
        "python_version",
        "cuda_version",
        "cudnn_version",
        "pytorch_version",
        "jupyterlab_version",
    )

    class Meta:
        ordering = ["display_order", "slug"]
        verbose_name = _("environment")
        verbose_name_plural = _("environments")
        constraints = [
            # An environment on offer starts something: its image, or the customer's.
            models.CheckConstraint(
                condition=models.Q(requires_details=True)
                | ~models.Q(image="")
                | models.Q(is_active=False),
                name="offered_environment_has_an_image",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def facts(self) -> list[tuple[str, str]]:
        """(label, version) of what the image holds, for the pages."""
        labels = {field.name: field.verbose_name for field in self._meta.concrete_fields}
        return [
            (str(labels[name]), getattr(self, name))
            for name in self.FACT_FIELDS
            if getattr(self, name)
        ]

    @property
    def cuda_required_label(self) -> str:
        return cuda_version(self.cuda_required)
