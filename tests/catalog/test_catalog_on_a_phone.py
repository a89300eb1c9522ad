"""The catalog pages on a 360px phone: no sideways scroll, nothing clipped, no console error."""

import os
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import sync_playwright

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
SMALL_PHONE = {"width": 360, "height": 740}
PAGES = {
    "catalog": "/fr/",
    "gpu": "/fr/gpus/h100-sxm/",
    "gpu-en": "/en/gpus/rtx-3090/",
    "compare": "/fr/gpus/compare/",
    "advisor": "/fr/advisor/",
    "advisor-result": (
        "/fr/advisor/?peak_memory_gb=300&gpu_count=2&frequent_exchange=yes&shortening_distorts=no"
    ),
    "advisor-errors": "/fr/advisor/?peak_memory_gb=-3&gpu_count=deux",
}


@pytest.fixture
def phone(live_server):
    call_command("seed_catalog", verbosity=0)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        context = browser.new_context(viewport=SMALL_PHONE, base_url=live_server.url)
        page = context.new_page()
        page.problems = []
        page.on(
            "console",
            lambda message: message.type == "error" and page.problems.append(message.text),
        )
        yield page
        browser.close()


@pytest.mark.parametrize("name", PAGES)
def test_catalog_page_fits_a_360px_phone(phone, name):
    response = phone.goto(PAGES[name])
    assert response.status == 200
    overflow = phone.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    wide = phone.evaluate(
        "[...document.querySelectorAll('body *')]"
        ".filter(e => e.getBoundingClientRect().right > 361)"
        ".slice(0, 5).map(e => e.outerHTML.slice(0, 100))"
    )
    assert overflow <= 0, f"{name} scrolls sideways by {overflow}px: {wide}"
    for element in phone.locator("a[href]:visible, button:visible, input:visible, svg").all():
        if element.evaluate("el => !!el.closest('.table-wrap, .skip-link, .visually-hidden')"):
            continue  # wide tables scroll in their own box; skip links wait off screen
        box = element.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= SMALL_PHONE["width"] + 1, (
            element.evaluate("el => el.outerHTML.slice(0, 120)")
        )
    assert not phone.problems, phone.problems
    ARTIFACTS.mkdir(exist_ok=True)
    phone.screenshot(path=str(ARTIFACTS / f"catalog-phone-{name}.png"), full_page=True)
