"""The machines the GPUs live in, and the slots (GPU indices) orders hold on them.

A host of `gpu_count` GPUs has slots 0..gpu_count-1. An order holds concrete slots from the
moment it is created until it leaves the holding statuses (hosts.slots); released holds stay
as history (`released_at`), and a partial unique constraint makes holding one slot twice
impossible, whatever the code above it does."""

from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from catalog.models import GpuModel, cuda_version_field


class Host(models.Model):
    class Provisioning(models.TextChoices):
        MANUAL = "manual", _("Manual (staff type the access details)")
        SSH = "ssh", _("Automatic over SSH")

    name = models.SlugField(_("name"), max_length=60, unique=True)
    region = models.CharField(_("region"), max_length=60)
    gpu = models.ForeignKey(
        GpuModel, on_delete=models.PROTECT, related_name="hosts", verbose_name=_("GPU model")
    )
    gpu_count = models.PositiveSmallIntegerField(
        _("number of GPUs"), help_text=_("Its slots are numbered 0 to this number minus one.")
    )
    vcpus = models.PositiveIntegerField(_("vCPUs"), null=True, blank=True)
    ram_gb = models.PositiveIntegerField(_("RAM (GB)"), null=True, blank=True)
    disk_gb = models.PositiveIntegerField(_("NVMe disk (GB)"), null=True, blank=True)
    network = models.CharField(_("network"), max_length=60, blank=True)
    # What `nvidia-smi` prints in its header: the driver, and the highest CUDA it runs.
    nvidia_driver_version = models.CharField(
        _("NVIDIA driver"),
        max_length=20,
        blank=True,
        validators=[
            RegexValidator(
                r"^[0-9]{3}(\.[0-9]{1,3}){1,2}$", _("Write the driver version as 550.127.05.")
            )
        ],
    )
    cuda_max = cuda_version_field(
        _("highest CUDA supported"),
        null=True,
        blank=True,
        help_text=_(
            'The "CUDA Version" nvidia-smi prints (e.g. 12.4). Empty: not recorded yet, and '
            "no environment that needs CUDA is placed here."
        ),
    )
    ssh_host = models.CharField(
        _("SSH host"), max_length=255, help_text=_("The address customers connect to.")
    )
    ssh_port = models.PositiveIntegerField(_("SSH port"), default=22)
    provisioning = models.CharField(
        _("provisioning"), max_length=8, choices=Provisioning.choices, default=Provisioning.MANUAL
    )
    provisioning_user = models.CharField(
        _("provisioning account"),
        max_length=64,
        default="root",
        help_text=_("The account the store logs in as to run deploy/host/locagpu-host."),
    )
    is_active = models.BooleanField(_("active"), default=True)

    class Meta:
        db_table = "orders_host"
        ordering = ["gpu", "name"]
        verbose_name = _("host")
        verbose_name_plural = _("hosts")
        constraints = [
            models.CheckConstraint(condition=Q(gpu_count__gte=1), name="host_has_a_gpu"),
        ]

    def __str__(self) -> str:
        return self.name


class SlotHold(models.Model):
    order = models.ForeignKey(
        "orders.Order", on_delete=models.CASCADE, related_name="slot_holds", verbose_name=_("order")
    )
    host = models.ForeignKey(
        Host, on_delete=models.PROTECT, related_name="holds", verbose_name=_("host")
    )
    index = models.PositiveSmallIntegerField(_("GPU index"))
    held_at = models.DateTimeField(_("held since"), default=timezone.now)
    released_at = models.DateTimeField(_("released"), null=True, blank=True)

    class Meta:
        db_table = "orders_slothold"
        ordering = ["host", "index"]
        verbose_name = _("slot hold")
        verbose_name_plural = _("slot holds")
        constraints = [
            models.UniqueConstraint(
                fields=["host", "index"],
                condition=Q(released_at__isnull=True),
                name="slot_held_once",
            ),
        ]
        indexes = [models.Index(fields=["order", "released_at"])]

    def __str__(self) -> str:
        # As staff name the machine and its GPU (« h100-sxm-1 · GPU 0 »), never by ids.
        return f"{self.host.name} · GPU {self.index}"
