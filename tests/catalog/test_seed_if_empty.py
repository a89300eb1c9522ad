"""`seed_catalog --if-empty`, run by every deployment: it loads the catalog into an empty
database and never touches one that staff already run."""

from io import StringIO

import pytest
from django.core.management import call_command

from catalog.models import Environment, GpuModel, TermPrice
from tests.catalog.conftest import SEEDED_SLUGS

pytestmark = pytest.mark.django_db


def test_if_empty_seeds_an_empty_database():
    call_command("seed_catalog", "--if-empty", verbosity=0)
    assert set(GpuModel.objects.values_list("slug", flat=True)) == set(SEEDED_SLUGS)
    assert Environment.objects.count() == 2 and TermPrice.objects.count() == 7 * 3


def test_if_empty_never_overwrites_what_staff_edited():
    call_command("seed_catalog", verbosity=0)
    GpuModel.objects.filter(slug="h200").update(memory_gb=1, tagline_en="Staff wording")
    TermPrice.objects.filter(gpu__slug="h200", term_days=3).delete()

    out = StringIO()
    call_command("seed_catalog", "--if-empty", stdout=out)

    h200 = GpuModel.objects.get(slug="h200")
    assert (h200.memory_gb, h200.tagline_en) == (1, "Staff wording")
    assert not h200.prices.filter(term_days=3).exists()
    assert "left as it is" in out.getvalue()
