"""A form sent in the background while Redis does not answer: the customer is told to try
again next to the button, rather than the click doing nothing (htmx swaps no 503 in)."""

import pytest
from playwright.sync_api import expect

from payments.models import PaymentClaim
from tests.browser.conftest import open_unpaid_order
from tests.cache import cache_unreachable

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct-Horse-battery-9"


def test_i_have_paid_says_to_try_again_when_the_service_does_not_answer(desktop, usdc, settings):
    page = desktop
    open_unpaid_order(page, usdc, PASSWORD)
    cache_unreachable(settings)
    with page.expect_response(lambda answer: "/payment/claim/" in answer.url) as sent:
        page.get_by_test_id("claim-button").click()
    assert sent.value.status == 503
    expect(page.get_by_test_id("request-failed")).to_have_text(
        "Notre service n\u2019a pas répondu. Réessayez dans un instant."
    )
    expect(page.get_by_test_id("claim-button")).to_be_visible()  # the form is still there
    assert not PaymentClaim.objects.exists()
    # What this test provokes: the browser's report of the 503 and htmx's.
    page.problems[:] = [p for p in page.problems if "503" not in p and "responseError" not in p]
