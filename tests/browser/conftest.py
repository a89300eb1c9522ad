"""Real Chromium (Debian's package) driven by Playwright against pytest-django's live server."""

import io
import os
from pathlib import Path

import pytest
import zxingcpp
from django.core.management import call_command
from PIL import Image
from playwright.sync_api import sync_playwright

from payments.models import Invoice
from tests.accounts.two_factor import authenticator_for, second_factor_type_in
from tests.anvil import anvil_with_contracts
from tests.factories import UserFactory
from tests.payments.helpers import order_with_invoice

# Playwright's sync API runs an event loop in this thread; Django's ORM calls from the test
# body are still synchronous and safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1280, "height": 900}

pytestmark = pytest.mark.browser


@pytest.fixture(scope="package")
def anvil():
    """The pages compare chain time with the wall clock (deadlines, watch periods), so the
    browser tests get a chain of their own: the session's runs ahead once tests move its time."""
    yield from anvil_with_contracts()


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class PageProblems(list):
    """Console errors and Content-Security-Policy refusals seen while a page was open."""


# htmx logs these when the form's newer quote request supersedes an older one (hx-sync).
EXPECTED_CONSOLE = ("htmx:sendAbort", "htmx:afterRequest")


def _record(problems: PageProblems, page, message) -> None:
    if message.type == "error" and message.text not in EXPECTED_CONSOLE:
        problems.append(f"{page.url}: {message.text}")


def _page(browser, live_server, viewport):
    """A French page of the given size; the test fails if it logged a problem."""
    context = browser.new_context(viewport=viewport, locale="fr-FR", base_url=live_server.url)
    context.set_default_timeout(15_000)
    page = context.new_page()
    problems = PageProblems()
    page.on("console", lambda message: _record(problems, page, message))
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.problems = problems
    yield page
    context.close()
    assert not problems, problems


@pytest.fixture
def desktop(browser, live_server):
    yield from _page(browser, live_server, DESKTOP)


@pytest.fixture
def phone(browser, live_server):
    yield from _page(browser, live_server, PHONE)


@pytest.fixture
def catalog(transactional_db):
    call_command("seed_catalog", verbosity=0)


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    # caret="initial": hiding the caret injects a style element, which the CSP refuses.
    page.screenshot(path=str(path), full_page=True, caret="initial")
    return path


def displayed_qr(page, selector: str) -> str:
    """What zxing-cpp (not segno, which drew it) reads from a screenshot of the QR element."""
    png = page.locator(selector).screenshot(caret="initial")
    # Only QR codes are looked for: reading every format, zxing-cpp once also found a short
    # linear barcode ("4498") in the modules of a QR code. It may also report one code twice
    # (found at two positions): one text is one code.
    found = zxingcpp.read_barcodes(
        Image.open(io.BytesIO(png)), formats=zxingcpp.BarcodeFormat.QRCode
    )
    texts = {code.text for code in found}
    assert len(texts) == 1, f"the displayed QR code cannot be read: {texts!r}"
    return texts.pop()


def count_page_loads(page) -> list[str]:
    """The addresses of the documents the page loads from now on. htmx swaps and its address
    updates (same-document navigations, which "framenavigated" would count) are not loads; a
    redirect chain ends in one load."""
    loads: list[str] = []
    page.on("domcontentloaded", lambda loaded: loads.append(loaded.url))
    return loads


def log_in(page, email: str, password: str, lang: str = "fr") -> None:
    page.goto(f"/{lang}/accounts/login/")
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", password)
    page.click("form.form button[type=submit]")
    page.wait_for_url(f"**/{lang}/account/**")


def open_unpaid_order(page, asset, password: str) -> Invoice:
    """A new French customer's order, invoiced in `asset`, open on its page."""
    customer = UserFactory(password=password, language="fr")
    invoice = order_with_invoice(asset, user=customer)
    log_in(page, customer.email, password)
    page.goto(f"/fr/account/orders/{invoice.order.number}/")
    return invoice


def staff_log_in(page, staff, password: str) -> None:
    """Staff log in through the store's login page (its limits apply), then the code of their
    authenticator app, before any admin page."""
    phone = authenticator_for(staff)
    page.goto("/admin/login/?next=/admin/")
    page.fill("input[name=login]", staff.email)
    page.fill("input[name=password]", password)
    page.click("form.form button[type=submit]")
    second_factor_type_in(page, phone)
    page.wait_for_url("**/admin/")


def order_now(page) -> None:
    """On the configurator: tick the terms of sale, as ordering requires, and press Order."""
    page.check("input[name=accept_terms]")
    page.click("button.order-button")


def sign_up(page, *, first_name: str, last_name: str, email: str, password: str) -> None:
    """The sign-up form, as a new customer fills it in."""
    page.fill("input[name=first_name]", first_name)
    page.fill("input[name=last_name]", last_name)
    page.fill("input[name=email]", email)
    page.fill("input[name=password1]", password)
    page.fill("input[name=password2]", password)
    page.click("form.form button[type=submit]")
