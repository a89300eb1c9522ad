"""Writes on hosts: staff edits keep each GPU model's `units_total` equal to the slots of its
active hosts (the figure the catalog shows as stock), and a freshly seeded catalog gets its
hosts."""

from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils.translation import gettext_lazy as _

from catalog.models import GpuModel
from hosts.local import SEEDED_DOMAIN, local_host_fields
from hosts.models import Host, SlotHold

# The driver a seeded host is taken to run until staff record the real machine's: the R550
# branch, whose CUDA 12.4 the seeded PyTorch image needs (migration 0002 gives seeded hosts the
# same).
SEEDED_DRIVER = {"nvidia_driver_version": "550.127.05", "cuda_max": Decimal("12.4")}


class HostError(Exception):
    def __init__(self, message, *, field: str | None = None):
        super().__init__(str(message))
        self.message, self.field = message, field


def gpu_units_sync(*, gpu_id: int) -> None:
    total = Host.objects.filter(gpu_id=gpu_id, is_active=True).aggregate(n=Sum("gpu_count"))["n"]
    GpuModel.objects.filter(pk=gpu_id).update(units_total=total or 0)


def host_check(*, host: Host) -> None:
    """Refuse an edit that would strand held slots: fewer GPUs than a held index, or another
    GPU model under running orders."""
    if host.pk is None:
        return
    held = SlotHold.objects.filter(host=host, released_at__isnull=True)
    highest = held.order_by("-index").values_list("index", flat=True).first()
    if highest is not None and host.gpu_count <= highest:
        raise HostError(
            _("Slot %(index)d is held by an order: keep at least %(count)d GPUs.")
            % {"index": highest, "count": highest + 1},
            field="gpu_count",
        )
    if held.exists() and held.exclude(order__gpu=host.gpu_id).exists():
        raise HostError(_("Orders of another GPU model hold slots here."), field="gpu")


def host_save(*, host: Host) -> Host:
    """Save `host` under its GPU model's row lock, the one allocation takes: no slot is held
    between the check and the save."""
    with transaction.atomic():
        GpuModel.objects.select_for_update().get(pk=host.gpu_id)
        previous_gpu_id = (
            Host.objects.filter(pk=host.pk).values_list("gpu_id", flat=True).first()
            if host.pk
            else None
        )
        host_check(host=host)
        host.save()
        # The pages of the orders on it name its SSH endpoint: rare edits, all pages afresh.
        gpu_units_sync(gpu_id=host.gpu_id)
        if previous_gpu_id is not None and previous_gpu_id != host.gpu_id:
            gpu_units_sync(gpu_id=previous_gpu_id)
    return host


def gpu_host_seed(*, gpu: GpuModel, units: int) -> Host | None:
    """One manual host for a GPU model the seed just created, with its seeded stock (the same
    shape as migration 0006 gives existing stock). Specs are those of a typical 8-GPU server,
    prorated: staff edit the real machines in the admin. Under `make run` it is the local
    sshd (hosts.local), so a customer reaches a machine with no staff."""
    if units <= 0 or gpu.hosts.exists():
        return None
    port = settings.LOCAL_GPU_HOST_PORT
    address = {"ssh_host": f"{gpu.slug}-1{SEEDED_DOMAIN}"}
    return Host.objects.create(
        name=f"{gpu.slug}-1",
        region="Paris",
        gpu=gpu,
        gpu_count=units,
        vcpus=16 * units,
        ram_gb=128 * units,
        disk_gb=1000 * units,
        network="25 Gbit/s",
        **SEEDED_DRIVER,
        **(local_host_fields(port=port) if port else address),
    )
