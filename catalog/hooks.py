"""What the catalog shows but does not own, registered by the app that owns it in its
AppConfig.ready() (catalog imports no app above it).

Units are held by orders: orders registers the annotation that counts them. With none
registered, every unit is shown free. Units live in hosts, which orders owns too: the seed
tells it which GPU models it created.
"""

from collections.abc import Callable

from django.db.models import F, QuerySet, Value

from catalog.models import GpuModel
from rental.hooks import Hooks

# annotate(gpus=) -> `gpus` annotated with `units_held` and `available_units`, in the same
# query. One app holds units; the first registered annotation is the one applied.
availability: Hooks[Callable[..., QuerySet[GpuModel]]] = Hooks()
# seeded(gpu=, units=) for each GPU model the seed creates, with its seeded stock: the app
# that turns stock into machines (orders' hosts) creates them.
seeded: Hooks[Callable[..., object]] = Hooks()


def availability_annotate(gpus: QuerySet[GpuModel]) -> QuerySet[GpuModel]:
    annotate = next(iter(availability), None)
    if annotate is None:
        return gpus.annotate(units_held=Value(0), available_units=F("units_total"))
    return annotate(gpus=gpus)
