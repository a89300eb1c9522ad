from decimal import Decimal

import pytest
from django.core.management import call_command

from catalog import seed_data
from catalog.models import AdviceSection, Alternative, Environment, GpuModel, TermPrice
from tests.catalog.conftest import SEEDED_SLUGS

pytestmark = pytest.mark.django_db


def _snapshot():
    return {
        model.__name__: sorted(model.objects.values_list(), key=repr)
        for model in (GpuModel, TermPrice, AdviceSection, Alternative, Environment)
    }


def test_seed_catalog_loads_the_seven_gpus_and_two_environments():
    call_command("seed_catalog", verbosity=0)
    assert set(GpuModel.objects.values_list("slug", flat=True)) == set(SEEDED_SLUGS)
    assert set(Environment.objects.values_list("slug", flat=True)) == {"pytorch", "custom"}
    assert TermPrice.objects.count() == 7 * 3
    assert Environment.objects.get(slug="custom").requires_details
    assert not Environment.objects.get(slug="pytorch").requires_details


def test_running_seed_catalog_twice_changes_nothing():
    call_command("seed_catalog", verbosity=0)
    first = _snapshot()
    call_command("seed_catalog", verbosity=0)
    assert _snapshot() == first


def test_seed_catalog_keeps_what_staff_edited():
    call_command("seed_catalog", verbosity=0)
    GpuModel.objects.filter(slug="h200").update(units_total=2, is_active=False, display_order=1)
    TermPrice.objects.filter(gpu__slug="h200", term_days=7).update(daily_rate=Decimal("99.00"))
    Environment.objects.filter(slug="custom").update(is_active=False)

    call_command("seed_catalog", verbosity=0)

    h200 = GpuModel.objects.get(slug="h200")
    assert (h200.units_total, h200.is_active, h200.display_order) == (2, False, 1)
    assert h200.prices.get(term_days=7).daily_rate == Decimal("99.00")
    assert not Environment.objects.get(slug="custom").is_active


def test_seed_catalog_refreshes_specifications_and_texts_from_the_seed_module():
    call_command("seed_catalog", verbosity=0)
    GpuModel.objects.filter(slug="h200").update(memory_gb=1, tagline_en="typo")

    call_command("seed_catalog", verbosity=0)

    h200 = GpuModel.objects.get(slug="h200")
    assert h200.memory_gb == 141
    assert h200.tagline_en.startswith("141 GB")


def test_seed_catalog_puts_back_a_deleted_price_without_touching_the_others():
    call_command("seed_catalog", verbosity=0)
    TermPrice.objects.filter(gpu__slug="rtx-4090", term_days=30).delete()
    call_command("seed_catalog", verbosity=0)
    assert GpuModel.objects.get(slug="rtx-4090").prices.count() == 3


def test_prices_are_decimals_in_the_seed_and_in_the_database(seeded_catalog):
    for entry in seed_data.GPUS:
        assert set(entry["prices"]) == {3, 7, 30}
        assert all(isinstance(rate, Decimal) for rate in entry["prices"].values())
    for price in TermPrice.objects.all():
        assert isinstance(price.daily_rate, Decimal)
        assert isinstance(price.total_per_gpu, Decimal)


@pytest.mark.parametrize("slug", SEEDED_SLUGS)
def test_a_longer_term_never_costs_more_per_day(seeded_catalog, slug):
    rates = list(
        GpuModel.objects.get(slug=slug)
        .prices.order_by("term_days")
        .values_list("daily_rate", flat=True)
    )
    assert len(rates) == 3
    assert rates == sorted(rates, reverse=True)


def test_prices_follow_the_market_order_of_the_cards(seeded_catalog):
    def from_price(slug):
        return GpuModel.objects.get(slug=slug).prices.get(term_days=30).daily_rate

    assert (
        from_price("h200")
        > from_price("h100-sxm")
        > from_price("h100-pcie")
        > from_price("a100-80gb")
        > from_price("rtx-a6000")
        > from_price("rtx-4090")
        > from_price("rtx-3090")
    )


def test_alternatives_never_point_to_the_gpu_itself(seeded_catalog):
    for alternative in Alternative.objects.all():
        assert alternative.gpu_id != alternative.target_id
