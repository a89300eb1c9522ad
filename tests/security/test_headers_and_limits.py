import pytest
from csp.constants import NONCE
from csp.decorators import csp_update
from csp.exceptions import CSPNonceError
from csp.utils import build_policy
from django.http import HttpResponse
from django.test import override_settings

from rental.middleware import ContentSecurityPolicyMiddleware
from tests.factories import OrderFactory

pytestmark = pytest.mark.django_db


def test_pages_send_a_strict_content_security_policy_and_refuse_framing(client):
    response = client.get("/fr/")
    policy = response["Content-Security-Policy"]
    assert "default-src 'self'" in policy
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"


def test_the_policy_built_once_is_django_csp_s_and_follows_its_settings(client, settings):
    """rental.middleware.ContentSecurityPolicyMiddleware keeps the header it builds: the same
    header django-csp builds, and a new one once the setting changes."""
    assert client.get("/fr/")["Content-Security-Policy"] == build_policy()
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": ["'none'"]}}
    assert client.get("/fr/")["Content-Security-Policy"] == "default-src 'none'"
    settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = {"DIRECTIVES": {"img-src": ["'self'"]}}
    response = client.get("/fr/")
    assert response["Content-Security-Policy-Report-Only"] == build_policy(report_only=True)
    assert "img-src 'self'" in response["Content-Security-Policy-Report-Only"]


def test_a_view_that_changes_the_policy_gets_its_own(rf, settings):
    """A response django-csp's decorators changed, or a request that asked a nonce, is left to
    django-csp."""
    settings.CONTENT_SECURITY_POLICY = {
        "DIRECTIVES": {**settings.CONTENT_SECURITY_POLICY["DIRECTIVES"], "script-src": [NONCE]}
    }
    middleware = ContentSecurityPolicyMiddleware(lambda request: HttpResponse())
    changed = csp_update({"img-src": ["https://example.org"]})(lambda request: HttpResponse())
    request = rf.get("/")
    middleware.process_request(request)
    response = middleware.process_response(request, changed(request))
    assert "img-src 'self' data: https://example.org" in response["Content-Security-Policy"]
    request = rf.get("/")
    middleware.process_request(request)
    nonce = str(request.csp_nonce)
    response = middleware.process_response(request, HttpResponse())
    assert f"'nonce-{nonce}'" in response["Content-Security-Policy"]
    # As django-csp: once the header is written, asking a nonce is an error.
    request = rf.get("/")
    middleware.process_request(request)
    middleware.process_response(request, HttpResponse())
    with pytest.raises(CSPNonceError):
        str(request.csp_nonce)


def test_no_page_template_carries_inline_script_or_style(client, customer):
    order = OrderFactory(user=customer)
    client.force_login(customer)
    for url in ("/fr/", "/fr/gpus/compare/", "/fr/advisor/", f"/fr/account/orders/{order.number}/"):
        body = client.get(url).content.decode()
        assert " style=" not in body, url
        assert "<script>" not in body and "<script type" not in body, url


@override_settings(
    SECURE_SSL_REDIRECT=True,
    SECURE_HSTS_SECONDS=31536000,
    SECURE_HSTS_INCLUDE_SUBDOMAINS=True,
    SESSION_COOKIE_SECURE=True,
    CSRF_COOKIE_SECURE=True,
)
def test_production_security_settings_redirect_to_https_with_hsts_and_secure_cookies(
    client, customer, password
):
    assert client.get("/fr/")["Location"].startswith("https://")
    response = client.get("/fr/accounts/login/", secure=True)
    assert response["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
    login = client.post(
        "/fr/accounts/login/", {"login": customer.email, "password": password}, secure=True
    )
    assert login.cookies["sessionid"]["secure"] and login.cookies["sessionid"]["httponly"]
    assert login.cookies["csrftoken"]["secure"]


def test_ive_paid_is_rate_limited_per_customer(client, customer, settings):
    settings.PAYMENTS_CLAIM_RATE_LIMIT = {"limit": 3, "period": 60}
    order = OrderFactory(user=customer)
    client.force_login(customer)
    codes = [
        client.post(
            f"/en/account/orders/{order.number}/payment/claim/", {"tx_hash": ""}
        ).status_code
        for _ in range(4)
    ]
    assert codes[-1] == 429
    assert 429 not in codes[:3]
