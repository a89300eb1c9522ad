import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.browser.conftest import log_in, screenshot
from tests.factories import OrderFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct-Horse-battery-9"

# Elements a visitor can use; each must be on screen horizontally, not clipped.
CONTROLS = ", ".join(
    f"{selector}:visible"
    for selector in ("a[href]", "button", "input:not([type=hidden])", "select", "textarea")
)


def _pages(customer_order):
    return {
        "catalog": "/fr/",
        "gpu": "/fr/gpus/h100-sxm/",
        "configurator": "/fr/gpus/h100-sxm/configure/",
        "order": f"/fr/account/orders/{customer_order.number}/",
    }


@pytest.fixture
def customer_order(catalog):
    from catalog.models import Environment, GpuModel

    customer = UserFactory(password=PASSWORD)
    return OrderFactory(
        user=customer,
        gpu=GpuModel.objects.get(slug="h100-sxm"),
        environment=Environment.objects.get(slug="pytorch"),
    )


def test_phone_pages_have_no_horizontal_scroll_and_every_control_is_reachable(
    phone, customer_order
):
    log_in(phone, customer_order.user.email, PASSWORD)
    for name, url in _pages(customer_order).items():
        phone.goto(url)
        overflow = phone.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{name} scrolls sideways by {overflow}px"
        width = phone.viewport_size["width"]
        for control in phone.locator(CONTROLS).all():
            if control.evaluate("el => !!el.closest('.table-wrap, .skip-link')"):
                continue  # wide tables scroll in their own box; the skip link shows on focus
            box = control.bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= width + 1, (
                f"{name}: {control.evaluate('el => el.outerHTML.slice(0, 120)')} is off screen"
            )
        screenshot(phone, f"phone-{name}")


def test_pages_have_no_serious_accessibility_violations(desktop, customer_order):
    axe = Axe()
    log_in(desktop, customer_order.user.email, PASSWORD)
    for name, url in _pages(customer_order).items():
        desktop.goto(url)
        results = axe.run(desktop)
        serious = [
            (violation["id"], violation["impact"], len(violation["nodes"]))
            for violation in results.response["violations"]
            if violation["impact"] in ("serious", "critical")
        ]
        assert not serious, f"{name}: {serious}"
