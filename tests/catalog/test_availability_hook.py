"""The catalog shows availability without importing orders: orders answers catalog.hooks."""

import pytest

from catalog.selectors import catalog_gpus
from tests.factories import GpuModelFactory, OrderFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalog_without_orders(settings):
    """The catalog as it is when no app answers with an availability annotation."""
    settings.HOOKS = {**settings.HOOKS, "catalog_availability": {}}


def test_the_catalog_shows_the_units_orders_leave_free():
    gpu = GpuModelFactory(units_total=4)
    OrderFactory(gpu=gpu, quantity=3)
    assert catalog_gpus().get(pk=gpu.pk).available_units == 1


def test_with_no_app_holding_units_every_unit_shows_free(catalog_without_orders):
    gpu = GpuModelFactory(units_total=4)
    OrderFactory(gpu=gpu, quantity=3)
    shown = catalog_gpus().get(pk=gpu.pk)
    assert (shown.units_held, shown.available_units) == (0, 4)
