"""What the catalog shows but does not own, registered by the app that owns it in its
AppConfig.ready() (catalog imports no app above it).

Units are held by orders: orders registers the annotation that counts them. With none
registered, every unit is shown free.
"""

from collections.abc import Callable

from django.db.models import F, QuerySet, Value

from catalog.models import GpuModel
from rental.hooks import Hooks

# annotate(gpus=) -> `gpus` annotated with `units_held` and `available_units`, in the same
# query. One app holds units; the first registered annotation is the one applied.
availability: Hooks[Callable[..., QuerySet[GpuModel]]] = Hooks()


def availability_annotate(gpus: QuerySet[GpuModel]) -> QuerySet[GpuModel]:
    annotate = next(iter(availability), None)
    if annotate is None:
        return gpus.annotate(units_held=Value(0), available_units=F("units_total"))
    return annotate(gpus=gpus)
