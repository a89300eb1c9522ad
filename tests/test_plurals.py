"""Counts read right in French and English for 0, 1 and 2: confirmations, units, days."""

import pytest
from django.template.loader import render_to_string
from django.utils import translation

from orders.services import OrderError, quote_build
from tests.factories import EnvironmentFactory, GpuModelFactory

pytestmark = pytest.mark.django_db

EXPECTED = {
    "fr": {
        "confirmations": ["0 confirmation sur 3", "1 confirmation sur 3", "2 confirmations sur 3"],
        "units": ["0 disponible en", "1 disponible en", "2 disponibles en"],
        "days": ["0 jour", "1 jour", "2 jours"],
        "gpus": ["0 GPU", "1 GPU", "2 GPU"],
    },
    "en": {
        "confirmations": ["0 of 3 confirmations", "1 of 3 confirmations", "2 of 3 confirmations"],
        "units": ["0 available right", "1 available right", "2 available right"],
        "days": ["0 days", "1 day", "2 days"],
        "gpus": ["0 GPUs", "1 GPU", "2 GPUs"],
    },
}


def confirmations_line(count: int) -> str:
    row = {
        "transfer": {"status": "confirmed", "disposition": "credit", "asset": {"symbol": "USDC"}},
        "confirmations": count,
        "needed": 3,
        "percent": 0,
        "amount": "1",
    }
    html = render_to_string(
        "payments/_payment_status.html",
        {"payment": {"transfers": [row], "polling": False}, "order": {"number": "LG-X"}},
    )
    return " ".join(html.split())


def units_refusal(count: int) -> str:
    gpu = GpuModelFactory(units_total=8)
    pytorch = EnvironmentFactory(requires_details=False)
    with pytest.raises(OrderError) as refusal:
        quote_build(gpu=gpu, environment=pytorch, quantity=5, term_days=7, available_units=count)
    return str(refusal.value.message)


def quote_line(days: int, quantity: int) -> str:
    # The quote's line of the configurator, with any count (the store sells 3, 7 or 30 days).
    quote = {"days": days, "quantity": quantity, "daily_rate": 1, "currency": "EUR", "total": 1}
    return " ".join(render_to_string("orders/_quote.html", {"quote": quote}).split())


@pytest.mark.parametrize("language", ["fr", "en"])
def test_counts_read_right_for_zero_one_and_two(language):
    expected = EXPECTED[language]
    with translation.override(language):
        for count in (0, 1, 2):
            assert expected["confirmations"][count] in confirmations_line(count)
            assert expected["units"][count] in units_refusal(count)
            line = quote_line(count, count)
            assert expected["days"][count] in line, line
            assert expected["gpus"][count] in line, line
