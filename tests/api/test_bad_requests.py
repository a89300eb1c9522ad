"""Whatever a client sends, the answer is a JSON error with the field at fault, never a 500."""

import pytest

from orders.models import Order

pytestmark = pytest.mark.django_db


def error_of(response, status: int) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    return response.json()["error"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"quantity": 0}, "quantity"),
        ({"quantity": -1}, "quantity"),
        ({"quantity": "two"}, "quantity"),
        ({"quantity": 1000}, "quantity"),
        ({"term_days": 5}, "term_days"),
        ({"term_days": "week"}, "term_days"),
        ({"gpu": "h900"}, "gpu"),
        ({"gpu": 42}, "gpu"),
        ({"gpu": None}, "gpu"),
        ({"environment": "windows"}, "environment"),
        ({"asset": "doge-moon"}, "asset"),
        ({"environment_details": ["not", "text"]}, "environment_details"),
        ({"accept_terms": False}, "accept_terms"),
        ({"accept_terms": "maybe"}, "accept_terms"),
    ],
)
def test_a_bad_field_is_a_400_naming_it(api, order_body, change, field):
    error = error_of(api.post("/api/v1/orders/", {**order_body, **change}, format="json"), 400)
    assert error["code"] == "invalid"
    assert list(error["fields"]) == [field]
    assert error["fields"][field][0]
    assert error["message"].startswith(f"{field}: ")
    assert not Order.objects.exists()


def test_missing_fields_are_all_named(api, usdc):
    error = error_of(api.post("/api/v1/orders/", {}, format="json"), 400)
    assert set(error["fields"]) == {
        "gpu",
        "environment",
        "quantity",
        "term_days",
        "asset",
        "accept_terms",
    }
    assert error["fields"]["gpu"] == ["This field is required."]


def test_a_custom_environment_needs_its_details(api, order_body, custom_environment):
    body = {**order_body, "environment": "custom"}
    error = error_of(api.post("/api/v1/orders/", body, format="json"), 400)
    assert list(error["fields"]) == ["environment_details"]


@pytest.mark.parametrize(
    "raw",
    ["{not json", "[1, 2, 3]", '"a string"', "null", '{"quantity": NaN}'],
)
def test_a_body_that_is_not_a_json_object_is_a_400(api, usdc, raw):
    response = api.post("/api/v1/orders/", raw, content_type="application/json")
    assert error_of(response, 400)["code"] in ("parse_error", "invalid")


def test_a_form_encoded_body_is_a_415(api, usdc):
    response = api.post("/api/v1/orders/", "gpu=h100-sxm", content_type="text/plain")
    assert error_of(response, 415)["code"] == "unsupported_media_type"


def test_a_one_megabyte_body_is_a_clean_413(api, order_body):
    body = {**order_body, "environment_details": "x" * 1024 * 1024}
    error = error_of(api.post("/api/v1/orders/", body, format="json"), 413)
    assert error["code"] == "payload_too_large"
    assert not Order.objects.exists()


def test_a_body_above_djangos_upload_limit_is_still_json(api, order_body, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    settings.API_MAX_BODY_BYTES = 10 * 1024 * 1024
    body = {**order_body, "environment_details": "x" * 1024 * 1024}
    response = api.post("/api/v1/orders/", body, format="json")
    assert response.status_code in (400, 413)
    assert response.json()["error"]["code"] in ("invalid", "payload_too_large")


def test_a_bad_idempotency_key_is_a_400(api, order_body):
    response = api.post(
        "/api/v1/orders/", order_body, format="json", HTTP_IDEMPOTENCY_KEY="has spaces"
    )
    assert list(error_of(response, 400)["fields"]) == ["Idempotency-Key"]


def test_an_unknown_method_is_a_json_405(api, db):
    assert error_of(api.delete("/api/v1/gpus/"), 405)["code"] == "method_not_allowed"


def test_an_unexpected_failure_is_a_json_500_not_a_crash(api, gpu, monkeypatch):
    def explode():
        raise RuntimeError("database on fire")

    monkeypatch.setattr("api.views.catalog.api_gpus", explode)
    error = error_of(api.get("/api/v1/gpus/"), 500)
    assert error["code"] == "server_error"
    assert "fire" not in error["message"]
