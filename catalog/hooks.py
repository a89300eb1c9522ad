"""What the catalog shows but does not own, answered by the app that owns it (settings.HOOKS,
rental.hooks: catalog imports no app above it).

Units are held by orders: orders answers with the annotation that counts them. With no answer,
every unit is shown free. Units live on hosts' machines: the seed tells hosts which GPU models
it created (`catalog_seeded`: seeded(gpu=, units=) for each, with its seeded stock).
"""

from django.db.models import F, QuerySet, Value

from catalog.models import GpuModel
from rental.hooks import answers


def availability_annotate(gpus: QuerySet[GpuModel]) -> QuerySet[GpuModel]:
    """`gpus` annotated with `units_held` and `available_units`, in the same query. One app
    holds units: the first annotation named (`catalog_availability`) is the one applied."""
    annotate = next(iter(answers("catalog_availability").values()), None)
    if annotate is None:
        return gpus.annotate(units_held=Value(0), available_units=F("units_total"))
    return annotate(gpus=gpus)
