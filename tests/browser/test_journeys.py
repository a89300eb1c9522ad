import re

import pytest
from django.utils import translation
from playwright.sync_api import expect

from catalog.formatting import money
from catalog.models import TermPrice
from orders.models import Order, OrderStatus
from tests.browser.conftest import log_in, order_now, screenshot, staff_log_in
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct-Horse-battery-9"


def test_english_customer_orders_a_custom_environment_then_cancels_it(desktop, catalog):
    customer = UserFactory(language="en", password=PASSWORD)
    page = desktop
    log_in(page, customer.email, PASSWORD, lang="en")

    page.goto("/en/gpus/rtx-a6000/configure/")
    page.check("input[name=environment][value=custom]")
    page.fill("textarea[name=environment_details]", "ghcr.io/acme/trainer:2.3")
    page.fill("input[name=quantity]", "2")
    page.check("input[name=term][value='3']")
    rate = TermPrice.objects.get(gpu__slug="rtx-a6000", term_days=3).daily_rate
    with translation.override("en"):
        total = f"{money(rate * 3 * 2)} incl. VAT"
    # The price follows the form without a reload.
    expect(page.get_by_test_id("quote-total")).to_have_text(total)
    order_now(page)

    page.wait_for_url(re.compile(r"/en/account/orders/LG-[A-Z0-9-]+/$"))
    order = Order.objects.get(user=customer)
    expect(page.get_by_test_id("order-number")).to_have_text(order.number)
    expect(page.get_by_test_id("order-total")).to_have_text(total)
    assert order.environment.slug == "custom" and order.quantity == 2 and order.term_days == 3
    screenshot(page, "journey-en-order")

    page.once("dialog", lambda dialog: dialog.accept())  # "Cancel this order?"
    page.click("text=Cancel this order")
    expect(page.get_by_test_id("order-status")).to_contain_text("Cancelled")
    order.refresh_from_db()
    assert order.status == OrderStatus.CANCELLED


def test_staff_provisions_and_activates_an_order_and_the_customer_sees_the_access(desktop, catalog):
    from catalog.models import Environment, GpuModel
    from tests.factories import OrderFactory

    customer = UserFactory(password=PASSWORD)
    staff = UserFactory(password=PASSWORD, is_staff=True, is_superuser=True)
    order = OrderFactory(
        user=customer,
        gpu=GpuModel.objects.get(slug="h100-sxm"),
        environment=Environment.objects.get(slug="pytorch"),
        status=OrderStatus.PAID,
    )
    page = desktop
    staff_log_in(page, staff, PASSWORD)

    page.goto("/admin/orders/order/")
    page.fill("#searchbar", order.number)
    page.press("#searchbar", "Enter")
    page.click(f"text={order.number}")
    page.click("a.button:has-text('Lancer la préparation')")
    page.click("input[type=submit]")
    expect(page.locator(".messagelist")).to_contain_text("fait")
    page.click("a.button:has-text('Activer avec les accès')")
    page.fill("input[name=host]", "gpu-node-07.locagpu.test")
    page.fill("input[name=port]", "2207")
    page.fill("input[name=user]", "ada")
    page.fill("textarea[name=notes]", "Deux H100 reliés en NVLink sur le même nœud.")
    screenshot(page, "journey-staff-activate")
    page.click("input[type=submit]")
    order.refresh_from_db()
    assert order.status == OrderStatus.ACTIVE
    assert list(order.events.values_list("actor_user__email", flat=True)) == [staff.email] * 2

    page.context.clear_cookies()
    log_in(page, customer.email, PASSWORD)
    page.goto(f"/fr/account/orders/{order.number}/")
    expect(page.get_by_test_id("access-host")).to_have_text("gpu-node-07.locagpu.test")
    expect(page.locator("text=ssh -p 2207 ada@gpu-node-07.locagpu.test")).to_be_visible()
    screenshot(page, "journey-customer-access")


def test_the_api_docs_page_renders_under_the_content_security_policy(desktop, catalog):
    desktop.goto("/api/docs/")
    expect(desktop.locator(".swagger-ui .opblock").first).to_be_visible()
    assert desktop.locator(".opblock-summary-path").count() >= 10
