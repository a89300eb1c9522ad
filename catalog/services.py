"""Writes to the catalog."""

from dataclasses import dataclass

from django.db import transaction

from catalog import seed_data
from catalog.models import AdviceSection, Alternative, Environment, GpuModel, TermPrice
from rental.hooks import answers

LANGUAGES = ("fr", "en")

# Which seeded columns a second run may overwrite:
# - specifications and copy (names, specs, taglines, advice, alternative reasons, environment
#   texts, images and their versions) come from catalog/seed_data.py, reviewed in git: the
#   seed is their source of truth, so a corrected text reaches every machine on the next
#   `make run`;
# - stock, the on-sale flag, display order and prices belong to staff once a row exists:
#   they are written only when the row is created, so a restart never undoes an admin edit.
GPU_SPEC_FIELDS = ("name", *GpuModel.SPECIFICATION_FIELDS)
GPU_STAFF_FIELDS = ("units_total", "display_order")


@dataclass(frozen=True)
class SeedReport:
    gpus_created: int
    environments_created: int
    prices_created: int


def _translated(field: str, texts: dict[str, str]) -> dict[str, str]:
    return {f"{field}_{language}": texts[language] for language in LANGUAGES}


def catalog_seed(
    *, gpus: list[dict] | None = None, environments: list[dict] | None = None
) -> SeedReport:
    """Loads the seed catalog; running it again changes nothing staff own (see above)."""
    gpus = seed_data.GPUS if gpus is None else gpus
    environments = seed_data.ENVIRONMENTS if environments is None else environments
    gpus_created = environments_created = prices_created = 0

    with transaction.atomic():
        by_slug: dict[str, GpuModel] = {}
        for entry in gpus:
            gpu, created = GpuModel.objects.update_or_create(
                slug=entry["slug"],
                defaults={
                    **{field: entry[field] for field in GPU_SPEC_FIELDS},
                    **_translated("tagline", entry["tagline"]),
                    **_translated("summary", entry["summary"]),
                },
                create_defaults={
                    **{field: entry[field] for field in GPU_SPEC_FIELDS},
                    **{field: entry[field] for field in GPU_STAFF_FIELDS},
                    **_translated("tagline", entry["tagline"]),
                    **_translated("summary", entry["summary"]),
                    "is_active": True,
                },
            )
            gpus_created += created
            if created:
                for seed_hosts in answers("catalog_seeded").values():
                    seed_hosts(gpu=gpu, units=entry["units_total"])
            by_slug[gpu.slug] = gpu
            for term_days, daily_rate in entry["prices"].items():
                _price, created = TermPrice.objects.get_or_create(
                    gpu=gpu, term_days=term_days, defaults={"daily_rate": daily_rate}
                )
                prices_created += created
            for position, (title, body) in enumerate(entry["advice"], start=1):
                AdviceSection.objects.update_or_create(
                    gpu=gpu,
                    position=position,
                    defaults={**_translated("title", title), **_translated("body", body)},
                )

        # Alternatives point at other seeded GPUs, so they wait until every GPU exists.
        for entry in gpus:
            for position, (target_slug, reason) in enumerate(entry["alternatives"], start=1):
                Alternative.objects.update_or_create(
                    gpu=by_slug[entry["slug"]],
                    target=by_slug[target_slug],
                    defaults={"position": position, **_translated("reason", reason)},
                )

        for entry in environments:
            texts = {
                **_translated("name", entry["name"]),
                **_translated("description", entry["description"]),
                **{field: entry[field] for field in seed_data.ENVIRONMENT_FACT_FIELDS},
                "requires_details": entry["requires_details"],
            }
            _environment, created = Environment.objects.update_or_create(
                slug=entry["slug"],
                defaults=texts,
                create_defaults={
                    **texts,
                    "display_order": entry["display_order"],
                    "is_active": True,
                },
            )
            environments_created += created

    return SeedReport(
        gpus_created=gpus_created,
        environments_created=environments_created,
        prices_created=prices_created,
    )
