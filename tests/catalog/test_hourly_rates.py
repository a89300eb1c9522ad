"""Each daily price comes with its hourly equivalent: the daily rate / 24, rounded half up to
the cent, on the GPU page, in the configurator and in the API."""

import re
from decimal import Decimal

import pytest

from catalog.models import TermPrice, hourly_rate

pytestmark = pytest.mark.django_db


def _visible(html: str) -> str:
    return re.sub(r"[ \t\r\n]+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.mark.parametrize(
    ("daily", "hourly"),
    [
        ("72.00", "3.00"),
        ("25.00", "1.04"),  # 1.0416…
        ("0.60", "0.03"),  # exactly 0.025: half up, not to even
        ("61.00", "2.54"),  # 2.5416…
    ],
)
def test_the_hourly_rate_is_the_daily_rate_over_24_rounded_half_up(daily, hourly):
    assert hourly_rate(Decimal(daily)) == Decimal(hourly)
    assert TermPrice(term_days=7, daily_rate=Decimal(daily)).hourly_rate == Decimal(hourly)


@pytest.mark.parametrize(
    ("language", "shown"),
    [("fr", "soit 3,00\u00a0€/h"), ("en", "i.e. €3.00/h")],
)
def test_the_gpu_page_shows_an_hourly_equivalent_next_to_each_daily_price(
    client, gpu, language, shown
):
    page = _visible(client.get(f"/{language}/gpus/{gpu.slug}/").content.decode())
    assert shown in page  # 72.00 a day, 7-day term
    assert page.count("/h") >= gpu.prices.count()


@pytest.mark.parametrize(
    ("language", "shown"),
    [("fr", "soit 2,50\u00a0€/h"), ("en", "i.e. €2.50/h")],
)
def test_the_configurator_shows_an_hourly_equivalent_for_each_term_and_in_the_quote(
    client, gpu, language, shown
):
    # 60.00 a day for 30 days; 3.33 and 3.00 for the others.
    page = _visible(client.get(f"/{language}/gpus/{gpu.slug}/configure/").content.decode())
    assert shown in page
    assert ("3,33" if language == "fr" else "3.33") in page
    quote = client.get(
        f"/{language}/gpus/{gpu.slug}/configure/",
        {"environment": "pytorch", "quantity": 2, "term": 30},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert shown in _visible(quote)
