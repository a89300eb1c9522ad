import pytest

from catalog.services import catalog_seed

SEEDED_SLUGS = ("a100-80gb", "h100-sxm", "h100-pcie", "h200", "rtx-4090", "rtx-a6000", "rtx-3090")


@pytest.fixture
def seeded_catalog(db):
    catalog_seed()
