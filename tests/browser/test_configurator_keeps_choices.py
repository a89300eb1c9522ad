"""The configurator keeps every choice across the language switch and Back, Back + Order
places no second order, and a signed-in customer reaches the payment instructions in three
page loads from the catalog."""

import re

import pytest
from playwright.sync_api import expect

from orders.models import Order
from tests.browser.conftest import count_page_loads, log_in, order_now
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct-Horse-battery-9"
DESCRIPTION = "ghcr.io/acme/trainer:2.3 (CUDA 12.4)"


def expect_choices(page, *, description: str) -> None:
    expect(page.locator("input[name=environment][value=custom]")).to_be_checked()
    expect(page.locator("textarea[name=environment_details]")).to_have_value(description)
    expect(page.locator("input[name=quantity]")).to_have_value("3")
    expect(page.locator("input[name=term][value='30']")).to_be_checked()


def test_the_language_switch_and_back_keep_every_configurator_choice(desktop, catalog):
    page = desktop
    page.goto("/fr/gpus/rtx-a6000/configure/")
    page.check("input[name=environment][value=custom]")
    page.fill("textarea[name=environment_details]", DESCRIPTION)
    page.fill("input[name=quantity]", "3")
    page.check("input[name=term][value='30']")
    # The price answer puts the choices in the address and in the language links.
    choices = r"\?environment=custom&quantity=3&term=30$"
    expect(page).to_have_url(re.compile(choices))
    english = re.compile(r"^/en/gpus/rtx-a6000/configure/" + choices)
    expect(page.locator("a[hreflang=en]")).to_have_attribute("href", english)

    page.click("a[hreflang=en]")
    page.wait_for_url(re.compile(r"/en/gpus/rtx-a6000/configure/\?"))
    expect(page.locator("h1")).to_contain_text("Configure")
    expect_choices(page, description=DESCRIPTION)

    page.go_back()
    page.wait_for_url(re.compile(r"/fr/gpus/rtx-a6000/configure/\?"))
    expect_choices(page, description=DESCRIPTION)
    page.reload()
    expect_choices(page, description=DESCRIPTION)


def test_back_then_order_again_places_no_second_order(desktop, catalog):
    customer = UserFactory(password=PASSWORD)
    page = desktop
    log_in(page, customer.email, PASSWORD)
    page.goto("/fr/gpus/rtx-a6000/configure/?environment=pytorch&quantity=2&term=7")
    order_now(page)
    page.wait_for_url(re.compile(r"/fr/account/orders/LG-[A-Z0-9-]+/$"))
    order = Order.objects.get(user=customer)

    page.go_back()
    page.wait_for_url(re.compile(r"/fr/gpus/rtx-a6000/configure/"))
    expect(page.locator("input[name=quantity]")).to_have_value("2")
    order_now(page)
    # The same page sent again finds its order; a reloaded one is offered the unpaid order.
    resume = page.get_by_test_id("resume-order")
    expect(page.get_by_test_id("order-number").or_(resume)).to_be_visible()
    if resume.is_visible():
        resume.click()
    expect(page.get_by_test_id("order-number")).to_have_text(order.number)
    assert Order.objects.filter(user=customer).count() == 1


def test_a_signed_in_customer_reaches_the_payment_instructions_in_three_page_loads(
    desktop, catalog, usdc
):
    customer = UserFactory(password=PASSWORD)
    page = desktop
    log_in(page, customer.email, PASSWORD)
    page.goto("/fr/")
    loads = count_page_loads(page)
    page.click("a[href='/fr/gpus/h100-sxm/']")
    page.locator("a[href^='/fr/gpus/h100-sxm/configure/']").first.click()
    order_now(page)
    page.wait_for_url(re.compile(r"/fr/account/orders/LG-[A-Z0-9-]+/$"))
    page.check(f"input[name=asset][value='{usdc.slug}']")
    page.click("text=Afficher les instructions de paiement")
    expect(page.get_by_test_id("payment-address")).to_be_visible()
    assert len(loads) <= 3, loads
