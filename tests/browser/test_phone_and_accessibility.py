import pytest
from axe_playwright_python.sync_playwright import Axe

from orders.models import Order
from tests.browser.conftest import PHONE, log_in, screenshot
from tests.factories import UserFactory
from tests.pages import ANONYMOUS_PAGES, LANGUAGES, customer_pages

pytestmark = [pytest.mark.browser, pytest.mark.chain, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct-Horse-battery-9"

# Elements a visitor can use; each must be on screen horizontally, not clipped.
CONTROLS = "a[href], button, input:not([type=hidden]), select, textarea, svg"
# Measured in the page in one call: a round trip per control (Playwright's `:visible` and
# bounding_box) took most of this test's time. Visible as Playwright means it: rendered
# (not in a closed <details>, for one), not `visibility: hidden`, a box of some size.
# Wide tables scroll in their own box; the skip link shows on focus.
CONTROLS_OFF_SCREEN = """([selector, width]) => [...document.querySelectorAll(selector)]
    .filter(el => !el.closest(".table-wrap, .skip-link, .visually-hidden"))
    .filter(el => {
        const box = el.getBoundingClientRect();
        return el.checkVisibility() && getComputedStyle(el).visibility === "visible"
            && box.width > 0 && box.height > 0
            && (box.x < 0 || box.x + box.width > width + 1);
    })
    .map(el => el.outerHTML.slice(0, 120))"""


# What sticks out on the right, deepest first: the element to look at when a page scrolls.
WIDEST = """[...document.querySelectorAll('body *')]
    .filter(el => el.getBoundingClientRect().right > window.innerWidth + 1)
    .reverse().slice(0, 3).map(el => el.outerHTML.slice(0, 160))"""


@pytest.fixture
def customer_site(catalog, devnet):
    """A customer with an API key and orders in each payment state, and their pages."""
    customer = UserFactory(password=PASSWORD)
    return customer, customer_pages(devnet=devnet, customer=customer)


def _assert_fits_the_phone(page, name: str) -> None:
    overflow = page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"{name} scrolls sideways by {overflow}px: {page.evaluate(WIDEST)}"
    off_screen = page.evaluate(CONTROLS_OFF_SCREEN, [CONTROLS, PHONE["width"]])
    assert not off_screen, f"{name}: off screen: {off_screen}"


def _walk(page, pages: dict[str, str], lang: str) -> None:
    for name, url in pages.items():
        url = url.format(lang=lang)
        assert page.goto(url).status == 200, url
        _assert_fits_the_phone(page, f"{lang}-{name}")
        screenshot(page, f"phone-{lang}-{name}")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_phone_pages_have_no_horizontal_scroll_and_every_control_is_reachable(
    phone, customer_site, lang
):
    customer, pages = customer_site
    _walk(phone, ANONYMOUS_PAGES, lang)
    log_in(phone, customer.email, PASSWORD, lang)
    _walk(phone, pages, lang)

    # Orders are cards on a phone: each one's total and status on screen, not scrolled away.
    phone.goto(pages["orders"].format(lang=lang))
    total_and_status = ".orders-table tbody td:nth-child(5), .orders-table tbody td:nth-child(6)"
    cells = phone.locator(total_and_status).all()
    assert len(cells) == 2 * Order.objects.filter(user=customer).count()
    for cell in cells:
        box = cell.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], cell.inner_text()


def test_the_phone_check_finds_a_control_clipped_off_screen(phone, catalog):
    phone.goto("/fr/")
    _assert_fits_the_phone(phone, "home")
    phone.evaluate(
        """() => {
            const clipped = document.createElement("div");
            clipped.style.overflow = "hidden";
            const button = document.createElement("button");
            button.textContent = "Hors cadre";
            button.style.marginLeft = "400px";
            clipped.append(button);
            document.querySelector("main").append(clipped);
        }"""
    )
    with pytest.raises(AssertionError, match="Hors cadre"):
        _assert_fits_the_phone(phone, "home")


def test_the_phone_menu_folds_and_opens_without_javascript(browser, live_server, catalog):
    phone = browser.new_context(
        viewport=PHONE, locale="fr-FR", base_url=live_server.url, java_script_enabled=False
    ).new_page()
    phone.goto("/fr/")
    compare = phone.locator(".main-nav").get_by_role("link", name="Comparer")
    header = phone.locator(".site-header").bounding_box()
    assert not compare.is_visible() and header["height"] <= 80, "one line, links folded"

    phone.get_by_text("Menu", exact=True).click()
    screenshot(phone, "phone-menu-open")
    compare.click()

    phone.wait_for_url("**/fr/gpus/compare/")
    phone.context.close()


def test_wide_screens_show_the_menu_links_without_a_toggle(desktop, catalog):
    desktop.goto("/fr/")
    assert desktop.locator(".main-nav").get_by_role("link", name="Comparer").is_visible()
    assert not desktop.get_by_text("Menu", exact=True).is_visible()


def test_pages_have_no_serious_accessibility_violations(desktop, customer_site):
    axe = Axe()
    customer, pages = customer_site
    log_in(desktop, customer.email, PASSWORD)
    for name, url in pages.items():
        desktop.goto(url.format(lang="fr"))
        results = axe.run(desktop)
        serious = [
            (violation["id"], violation["impact"], len(violation["nodes"]))
            for violation in results.response["violations"]
            if violation["impact"] in ("serious", "critical")
        ]
        assert not serious, f"{name}: {serious}"
