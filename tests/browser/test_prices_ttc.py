"""A consumer reads prices VAT included (TTC), the price excluding VAT and the rate a line
below; a business account reads the price excluding VAT (HT) first: on the configurator and
on the order page, in French and in English."""

import re
from decimal import Decimal

import pytest
from django.utils import translation
from playwright.sync_api import expect

from catalog.formatting import money
from catalog.models import TermPrice
from orders.models import Order
from tests.browser.conftest import log_in, order_now, screenshot
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct-Horse-battery-9"
NBSP = "\N{NO-BREAK SPACE}"
BUSINESS = {
    "company_name": "Calculs Lyonnais SARL",
    "billing_address": "5 place Bellecour\n69002 Lyon",
    "country": "FR",
    "vat_number": "FR40303265045",
}
# What each reader sees first, and the line below: {ttc}, {ht} are the amounts.
SAID = {
    ("fr", "consumer"): (f"{{ttc}}{NBSP}TTC", f"{{ht}}{NBSP}HT · TVA 20{NBSP}%"),
    ("fr", "business"): (f"{{ht}}{NBSP}HT", f"{{ttc}}{NBSP}TTC · TVA 20{NBSP}%"),
    ("en", "consumer"): ("{ttc} incl. VAT", "{ht} excl. VAT · VAT 20 %"),
    ("en", "business"): ("{ht} excl. VAT", "{ttc} incl. VAT · VAT 20 %"),
}


@pytest.mark.parametrize(("lang", "account"), list(SAID))
def test_the_configurator_and_the_order_page_say_ttc_and_ht(desktop, catalog, lang, account):
    customer = UserFactory(
        password=PASSWORD, language=lang, **(BUSINESS if account == "business" else {})
    )
    rate = TermPrice.objects.get(gpu__slug="h100-sxm", term_days=7).daily_rate
    total = rate * 7 * 2
    with translation.override(lang):
        excl_vat = (total / Decimal("1.2")).quantize(Decimal("0.01"))
        amounts = {"ttc": money(total), "ht": money(excl_vat)}
    first, below = (text.format(**amounts) for text in SAID[lang, account])
    page = desktop
    log_in(page, customer.email, PASSWORD, lang=lang)

    page.goto(f"/{lang}/gpus/h100-sxm/configure/")
    page.check("input[name=environment][value=pytorch]")
    page.fill("input[name=quantity]", "2")
    page.check("input[name=term][value='7']")
    expect(page.get_by_test_id("quote-total")).to_have_text(first)
    expect(page.get_by_test_id("quote-total-vat")).to_have_text(below)
    screenshot(page, f"prices-{lang}-{account}-configurator")
    order_now(page)

    page.wait_for_url(re.compile(rf"/{lang}/account/orders/LG-[A-Z0-9-]+/$"))
    order = Order.objects.get(user=customer)
    expect(page.get_by_test_id("order-number")).to_have_text(order.number)
    expect(page.get_by_test_id("order-total")).to_have_text(first)
    expect(page.get_by_test_id("order-total-vat")).to_have_text(below)
    screenshot(page, f"prices-{lang}-{account}-order")
