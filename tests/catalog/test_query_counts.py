from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import AdviceSection, Alternative, GpuModel
from tests.cache import cache_empty
from tests.factories import GpuModelFactory, OrderFactory

pytestmark = pytest.mark.django_db

PAGES = [
    "/fr/",
    "/en/",
    "/fr/gpus/h100-sxm/",
    "/en/gpus/h100-sxm/",
    "/fr/gpus/compare/",
    "/en/advisor/?peak_memory_gb=60&gpu_count=1&frequent_exchange=no&shortening_distorts=no",
]
# Fixed ceilings, so that a page slowly gaining queries is noticed even if it stays flat.
# The GPU page lists the environments with their images' versions: one query of its own.
CEILINGS = {"/fr/": 2, "/fr/gpus/h100-sxm/": 5, "/fr/gpus/compare/": 2}


def _grow_catalog_to_fifty_gpus():
    h100 = GpuModel.objects.get(slug="h100-sxm")
    for index in range(50 - GpuModel.objects.count()):
        gpu = GpuModelFactory(
            prices={3: Decimal("30.00"), 7: Decimal("25.00"), 30: Decimal("20.00")}
        )
        OrderFactory(gpu=gpu, quantity=1)
        AdviceSection.objects.create(gpu=h100, position=10 + index, title="t", body="b")
        Alternative.objects.create(gpu=h100, target=gpu, position=10 + index, reason="r")
    assert GpuModel.objects.count() == 50


def _rendered_afresh() -> None:
    """Drop the pages the per-view cache keeps: the counts are those of rendering."""
    cache_empty()


def _count_queries(client, url: str) -> int:
    _rendered_afresh()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


@pytest.mark.parametrize("url", PAGES)
def test_pages_run_the_same_number_of_queries_with_7_and_50_gpus(
    client, seeded_catalog, django_assert_num_queries, url
):
    client.get(url)  # warm-up: template loading and translation catalogs stay out of the count
    at_seven = _count_queries(client, url)
    _grow_catalog_to_fifty_gpus()
    _rendered_afresh()
    with django_assert_num_queries(at_seven):
        response = client.get(url)
    assert response.status_code == 200


@pytest.mark.parametrize(("url", "ceiling"), CEILINGS.items())
def test_pages_stay_under_their_query_ceiling(client, seeded_catalog, url, ceiling):
    client.get(url)
    assert _count_queries(client, url) <= ceiling
