import re

import pytest
from django.urls import reverse
from django.utils import translation

from catalog.models import GpuModel
from catalog.templatetags.catalog_format import money
from hosts.models import Host
from tests.catalog.conftest import SEEDED_SLUGS
from tests.factories import OrderFactory

pytestmark = pytest.mark.django_db


def _visible(html: str) -> str:
    # Only ASCII whitespace: French amounts keep their non-breaking spaces.
    return re.sub(r"[ \t\r\n]+", " ", re.sub(r"<[^>]+>", " ", html))


def _url(name: str, language: str, **kwargs) -> str:
    with translation.override(language):
        return reverse(name, kwargs=kwargs or None)


@pytest.mark.parametrize("language", ["fr", "en"])
@pytest.mark.parametrize("slug", SEEDED_SLUGS)
def test_every_gpu_page_shows_memory_prices_for_each_term_and_availability(
    client, seeded_catalog, slug, language
):
    gpu = GpuModel.objects.get(slug=slug)
    response = client.get(_url("catalog:gpu_detail", language, slug=slug))
    assert response.status_code == 200
    page = _visible(response.content.decode())
    unit = "\u00a0Go" if language == "fr" else " GB"
    assert f"{gpu.memory_gb}{unit} {gpu.memory_type}" in page
    for price in gpu.prices.all():
        with translation.override(language):
            assert money(price.daily_rate) in page
            assert money(price.total_per_gpu) in page
    available = "unités disponibles" if language == "fr" else "units available now"
    assert f"{gpu.units_total} {available}" in page


def test_gpu_page_in_french_writes_amounts_the_french_way(client, seeded_catalog):
    page = client.get("/fr/gpus/h100-sxm/").content.decode()
    assert "78,00\u00a0€" in page
    assert "1\u00a0860,00\u00a0€" in page  # 30 days at 62.00


def test_gpu_page_in_english_writes_amounts_the_english_way(client, seeded_catalog):
    page = client.get("/en/gpus/h100-sxm/").content.decode()
    assert "€78.00" in page
    assert "€1,860.00" in page  # 30 days at 62.00


def test_held_units_are_not_shown_as_available(client, seeded_catalog):
    gpu = GpuModel.objects.get(slug="h200")
    OrderFactory(gpu=gpu, quantity=3)
    page = _visible(client.get("/en/gpus/h200/").content.decode())
    assert f"{gpu.units_total - 3} units available now" in page


def test_a_sold_out_gpu_says_so(client, seeded_catalog):
    Host.objects.filter(gpu__slug="h200").update(is_active=False)
    page = client.get("/en/gpus/h200/").content.decode()
    assert "Out of stock right now" in page


def test_gpu_page_offers_advice_alternatives_and_a_prefilled_configurator(client, seeded_catalog):
    page = client.get("/en/gpus/h100-sxm/").content.decode()
    assert "Measure a complete training step" in page
    assert 'href="/en/gpus/h200/"' in page
    assert "memory per card, not communication" in page
    configure = reverse("orders:configure", kwargs={"slug": "h100-sxm"})
    assert f'href="{configure}?environment=pytorch&amp;quantity=1&amp;term=7"' in page


@pytest.mark.parametrize("language", ["fr", "en"])
def test_an_inactive_gpu_answers_404(client, seeded_catalog, language):
    GpuModel.objects.filter(slug="rtx-3090").update(is_active=False)
    response = client.get(_url("catalog:gpu_detail", language, slug="rtx-3090"))
    assert response.status_code == 404


@pytest.mark.parametrize("language", ["fr", "en"])
def test_an_unknown_slug_answers_404(client, seeded_catalog, language):
    response = client.get(f"/{language}/gpus/gtx-1080/")
    assert response.status_code == 404


def test_an_inactive_gpu_disappears_from_the_catalog_and_from_alternatives(client, seeded_catalog):
    GpuModel.objects.filter(slug="h200").update(is_active=False)
    home = client.get("/en/").content.decode()
    detail = client.get("/en/gpus/h100-sxm/").content.decode()
    assert "/en/gpus/h200/" not in home
    assert "/en/gpus/h200/" not in detail


@pytest.mark.parametrize("language", ["fr", "en"])
def test_catalog_home_has_a_card_per_gpu_with_memory_price_and_availability(
    client, seeded_catalog, language
):
    response = client.get(f"/{language}/")
    assert response.status_code == 200
    page = response.content.decode()
    for gpu in GpuModel.objects.all():
        assert f'href="/{language}/gpus/{gpu.slug}/"' in page
    text = _visible(page)
    assert ("à partir de" if language == "fr" else "from") in text
    assert ("76,00\u00a0€" if language == "fr" else "€76.00") in text


@pytest.mark.parametrize("language", ["fr", "en"])
def test_comparison_page_lists_every_gpu_and_draws_an_accessible_chart(
    client, seeded_catalog, language
):
    response = client.get(f"/{language}/gpus/compare/")
    assert response.status_code == 200
    page = response.content.decode()
    for gpu in GpuModel.objects.all():
        assert gpu.name in page
    assert page.count("<svg") == 2
    assert 'role="img"' in page
    assert "<title id=" in page and "<desc id=" in page
    # H200: 76.00 a day for 141 GB.
    assert ("0,54\u00a0€" if language == "fr" else "€0.54") in page
    # The daily rates are TTC, and the page says so (issue 35).
    assert ("Prix par jour TTC" if language == "fr" else "Price per day incl. VAT") in page
