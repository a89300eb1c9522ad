"""Staff set a rate by hand in the admin: with a reason and an expiry, never editing one."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from payments.models import Rate

ADD = "/admin/payments/rate/add/"


@pytest.fixture
def admin_client(client, staff):
    client.force_login(staff)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    return client


def form(asset, *, expires_at, reason="Feeds down: price from our exchange", rate="2950"):
    local = timezone.localtime(expires_at)
    return {
        "asset": asset.pk,
        "currency": "EUR",
        "rate": rate,
        "expires_at_0": local.strftime("%Y-%m-%d"),
        "expires_at_1": local.strftime("%H:%M:%S"),
        "reason": reason,
    }


def test_staff_add_a_manual_rate_with_a_reason_and_an_expiry(usdc, admin_client, staff):
    eth = usdc.chain.assets.get(kind="native")
    eth.rate_refusal = "ETH/USD: stale"
    eth.save()
    response = admin_client.post(ADD, form(eth, expires_at=timezone.now() + timedelta(hours=3)))
    assert response.status_code == 302
    rate = Rate.objects.get(kind=Rate.Kind.MANUAL)
    assert (rate.asset, rate.rate, rate.created_by, rate.source) == (
        eth,
        Decimal("2950"),
        staff,
        "manual",
    )
    assert rate.reason == "Feeds down: price from our exchange"
    # History: the change page shows it without a save button.
    page = admin_client.get(f"/admin/payments/rate/{rate.pk}/change/")
    assert page.status_code == 200 and b'name="_save"' not in page.content


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"reason": "  "}, b"This field is required."),
        ({"expires_at": -1}, b"The expiry must be in the future."),
        ({"rate": "0"}, b"A rate is a positive amount."),
    ],
)
def test_a_manual_rate_without_reason_with_a_past_expiry_or_not_positive_is_refused(
    usdc, admin_client, change, message
):
    hours = change.pop("expires_at", 3)
    data = form(usdc, expires_at=timezone.now() + timedelta(hours=hours), **change)
    response = admin_client.post(ADD, data)
    assert response.status_code == 200 and message in response.content
    assert not Rate.objects.filter(kind=Rate.Kind.MANUAL).exists()
