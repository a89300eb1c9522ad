import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.browser.conftest import PHONE, log_in, screenshot
from tests.factories import OrderFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct-Horse-battery-9"

# Elements a visitor can use; each must be on screen horizontally, not clipped.
CONTROLS = ", ".join(
    f"{selector}:visible"
    for selector in ("a[href]", "button", "input:not([type=hidden])", "select", "textarea", "svg")
)
PUBLIC_PAGES = {
    "catalog": "/fr/",
    "gpu": "/fr/gpus/h100-sxm/",
    "gpu-en": "/en/gpus/rtx-3090/",
    "compare": "/fr/gpus/compare/",
    "advisor": "/fr/advisor/",
    "advisor-result": (
        "/fr/advisor/?peak_memory_gb=300&gpu_count=2&frequent_exchange=yes&shortening_distorts=no"
    ),
    "advisor-errors": "/fr/advisor/?peak_memory_gb=-3&gpu_count=deux",
    "configurator": "/fr/gpus/h100-sxm/configure/",
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


def _pages(order) -> dict[str, str]:
    return {**PUBLIC_PAGES, "order": f"/fr/account/orders/{order.number}/"}


def _assert_fits_the_phone(page, name: str) -> None:
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"{name} scrolls sideways by {overflow}px"
    for control in page.locator(CONTROLS).all():
        if control.evaluate("el => !!el.closest('.table-wrap, .skip-link, .visually-hidden')"):
            continue  # wide tables scroll in their own box; the skip link shows on focus
        box = control.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"] + 1, (
            f"{name}: {control.evaluate('el => el.outerHTML.slice(0, 120)')} is off screen"
        )


def test_phone_pages_have_no_horizontal_scroll_and_every_control_is_reachable(
    phone, customer_order
):
    log_in(phone, customer_order.user.email, PASSWORD)
    for name, url in _pages(customer_order).items():
        assert phone.goto(url).status == 200, name
        _assert_fits_the_phone(phone, name)
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
