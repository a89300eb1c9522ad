"""A new staff member's first way into the back office: password, then the QR code scanned
by an app (here zxing-cpp reads it and the code is computed from what it read), then the
recovery codes, shown once."""

from base64 import b32decode
from urllib.parse import parse_qs, unquote, urlparse

import pytest
from django_otp.oath import totp
from playwright.sync_api import expect

from tests.browser.conftest import displayed_qr, screenshot
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct-Horse-battery-9"


def test_new_staff_scan_the_code_confirm_it_and_keep_their_recovery_codes(desktop):
    staff = UserFactory(password=PASSWORD, is_staff=True, is_superuser=True)
    page = desktop
    page.goto("/admin/login/?next=/admin/orders/order/")
    page.fill("input[name=login]", staff.email)
    page.fill("input[name=password]", PASSWORD)
    page.click("form.form button[type=submit]")
    page.wait_for_url("**/account/security/enrol/**")

    scanned = urlparse(displayed_qr(page, ".two-factor-qr svg"))
    assert (scanned.scheme, scanned.netloc) == ("otpauth", "totp")
    assert unquote(scanned.path) == f"/LocaGPU:{staff.email}"
    secret = parse_qs(scanned.query)["secret"][0]
    page.fill("input[name=password]", PASSWORD)
    page.fill("input[name=code]", f"{totp(b32decode(secret)):06d}")
    page.click("form.form button[type=submit]")

    expect(page.get_by_test_id("recovery-codes").locator("li")).to_have_count(10)
    screenshot(page, "two-factor-recovery-codes")
    page.click("text=Je les ai rangés, continuer")
    page.wait_for_url("**/admin/orders/order/")
    expect(page.locator("#content h1")).to_be_visible()
