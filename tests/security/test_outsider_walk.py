"""Walk every URL the project serves as another customer, and prove nothing of the victim leaks."""

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from orders.models import Order, OrderEvent
from tests.factories import OrderFactory

pytestmark = pytest.mark.django_db

PARAM = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>")


def _routes(patterns=None, prefix=""):
    """Every route as a string with <converter:name> placeholders, language prefix included."""
    for pattern in patterns if patterns is not None else get_resolver().url_patterns:
        route = str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            if route.startswith("^") or "(?P" in route:
                route = "fr/"  # the i18n_patterns resolver: its regex is the active language
            yield from _routes(pattern.url_patterns, prefix + route)
        elif isinstance(pattern, URLPattern):
            yield prefix + route.lstrip("^").rstrip("$").replace("\\Z", "")


def _fill(route: str, values: dict[str, str]) -> str | None:
    def value(match):
        return values.get(match.group("name"), "1")

    if "(?P" in route or "\\" in route:
        return None  # a raw regex (static files, admin internals): not a page of ours
    return "/" + PARAM.sub(value, route)


@pytest.fixture
def victim_order(customer):
    # A last name no outsider shares (Faker can draw the same one for both).
    customer.last_name = "Victimsdottir"
    customer.save(update_fields=["last_name"])
    return OrderFactory(user=customer, environment_details="victim-secret-image:1.0")


def test_every_url_as_an_outsider_shows_nothing_of_another_customer(client, outsider, victim_order):
    victim = victim_order.user
    secrets = [victim.email, victim_order.number, "victim-secret-image", victim.last_name]
    values = {
        "number": victim_order.number,
        "slug": "test-gpu-0",
        "object_id": str(victim_order.pk),
    }
    checked = 0
    for route in sorted(set(_routes())):
        url = _fill(route, values)
        if url is None or url.startswith("/admin/"):
            continue
        for method in ("get", "post"):
            client.force_login(outsider)  # the logout URL is walked too
            response = getattr(client, method)(url)
            assert response.status_code < 500, (method, url, response.status_code)
            body = response.content.decode(errors="replace")
            leaked = [secret for secret in secrets if secret and secret in body]
            assert not leaked, (method, url, leaked)
            checked += 1
    victim_order.refresh_from_db()
    assert victim_order.status == Order.Status.AWAITING_PAYMENT
    assert not OrderEvent.objects.filter(order=victim_order).exclude(actor="system").exists()
    assert checked > 30


def test_the_admin_turns_away_a_customer(client, outsider, victim_order):
    client.force_login(outsider)
    for url in (
        "/admin/",
        "/admin/orders/order/",
        f"/admin/orders/order/{victim_order.pk}/change/",
    ):
        response = client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"]
