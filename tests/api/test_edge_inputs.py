"""Inputs at the API's edges: absurd JSON, order numbers in any case, webhook targets that
hide a private address inside a public-looking one."""

import sys

import pytest

from api.models import WebhookEndpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def server_recursion_limit():
    """A server process runs with Python's default limit; a test plugin raises it."""
    raised = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(raised)


@pytest.mark.usefixtures("server_recursion_limit")
def test_json_nested_five_thousand_levels_deep_is_a_400_not_a_500(api, order_body):
    raw = "[" * 5000 + "]" * 5000  # 10 kB, well under the body limit
    response = api.post("/api/v1/orders/", raw, content_type="application/json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "parse_error"


def test_json_nested_deeper_than_the_limit_is_refused_whatever_the_recursion_limit(api, order_body):
    raw = '{"gpu": ' + "[" * 200 + "]" * 200 + "}"
    response = api.post("/api/v1/orders/", raw, content_type="application/json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "parse_error"


@pytest.mark.usefixtures("server_recursion_limit")
def test_json_nested_inside_a_field_is_a_400_not_a_500(api, order_body):
    raw = '{"gpu": ' + "[" * 5000 + "]" * 5000 + "}"
    response = api.post("/api/v1/orders/", raw, content_type="application/json")
    assert response.status_code == 400, response.content


def test_an_order_is_found_whatever_the_case_of_its_number(api, order_body):
    number = api.post("/api/v1/orders/", order_body, format="json").json()["number"]
    response = api.get(f"/api/v1/orders/{number.lower()}/")
    assert response.status_code == 200, response.content
    assert response.json()["number"] == number


class TestTargetsHidingAnAddress:
    @pytest.mark.parametrize(
        ("url", "inner"),
        [
            ("https://[2002:7f00:1::]/hooks", "127.0.0.1"),  # 6to4 of loopback
            ("https://[2002:a9fe:a9fe::]/hooks", "169.254.169.254"),  # 6to4 of the metadata
            ("https://[2002:a00:1::]/hooks", "10.0.0.1"),  # 6to4 of a private address
            # Teredo: the client address is stored inverted in the last 32 bits.
            ("https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hooks", "127.0.0.1"),
            ("https://[2001:0:4136:e378:8000:63bf:5601:5601]/hooks", "169.254.169.254"),
            ("https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/hooks", "10.0.0.1"),
        ],
    )
    def test_an_address_wrapped_in_ipv6_is_judged_by_what_it_wraps(self, api, settings, url, inner):
        settings.API_WEBHOOK_ALLOW_LOCAL_TARGETS = False
        response = api.post("/api/v1/webhooks/", {"url": url}, format="json")
        assert response.status_code == 400, response.content
        assert inner in response.json()["error"]["fields"]["url"][0]
        assert not WebhookEndpoint.objects.exists()

    @pytest.mark.parametrize("port", ["0", "65536", "99999"])
    def test_a_port_outside_1_to_65535_is_refused(self, api, settings, port):
        settings.API_WEBHOOK_ALLOW_LOCAL_TARGETS = False
        url = f"https://93.184.216.34:{port}/hooks"
        response = api.post("/api/v1/webhooks/", {"url": url}, format="json")
        assert response.status_code == 400, response.content
        assert "port" in response.json()["error"]["fields"]["url"][0]
        assert not WebhookEndpoint.objects.exists()
