"""In the browser: Order without the terms of sale ticked says why and places nothing; ticked,
the order is placed with the acceptance recorded."""

import re

import pytest
from playwright.sync_api import expect

from catalog.legal import TERMS_OF_SALE
from orders.models import Order
from tests.browser.conftest import log_in, order_now
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct-Horse-battery-9"


def test_the_order_button_needs_the_terms_of_sale_ticked(desktop, catalog):
    customer = UserFactory(password=PASSWORD)
    page = desktop
    log_in(page, customer.email, PASSWORD)
    page.goto("/fr/gpus/rtx-a6000/configure/?environment=pytorch&quantity=2&term=7")
    expect(page.get_by_test_id("terms-link")).to_have_attribute("href", "/fr/legal/cgv/")

    page.click("button.order-button")
    expect(page.locator(".consent .errorlist")).to_contain_text("Cochez cette case pour commander")
    expect(page.locator("input[name=quantity]")).to_have_value("2")
    assert not Order.objects.exists()

    order_now(page)
    page.wait_for_url(re.compile(r"/fr/account/orders/LG-[A-Z0-9-]+/$"))
    order = Order.objects.get(user=customer)
    assert order.quantity == 2
    assert order.terms_version == TERMS_OF_SALE.version
    assert order.terms_accepted_at is not None and len(order.terms_ip_hash) == 64
