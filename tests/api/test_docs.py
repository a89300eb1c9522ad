import pytest

pytestmark = pytest.mark.django_db


def test_the_schema_is_openapi_3_and_lists_the_endpoints(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert {"/api/v1/gpus/", "/api/v1/orders/", "/api/v1/quotes/"} <= set(schema["paths"])
    assert schema["components"]["securitySchemes"]["apiKeyAuth"]["name"] == "Authorization"


def test_every_operation_has_a_description_and_examples(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            where = f"{method.upper()} {path}"
            assert operation.get("description"), where
            success = [c for c in operation["responses"] if c.startswith("2")]
            for code in success:
                content = operation["responses"][code].get("content")
                for media, body in (content or {}).items():
                    if media == "application/json":
                        assert body.get("examples"), f"{where} {code}"
                    else:  # a file (an invoice's PDF): its type and that it is binary
                        assert body["schema"] == {"type": "string", "format": "binary"}, where
            body = operation.get("requestBody")
            if body:
                assert body["content"]["application/json"].get("examples"), where


def test_swagger_ui_is_served_with_local_assets(client):
    page = client.get("/api/docs/").content.decode()
    assert "swagger-ui" in page
    assert "cdn" not in page.lower() and "unpkg" not in page
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in page


def test_an_unknown_api_path_is_a_json_404(client):
    response = client.get("/api/v1/nothing-here/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_the_500_handler_answers_json_under_api_only(rf):
    from api.errors import page_not_found, server_error

    api_response = server_error(rf.get("/api/v1/gpus/"))
    assert api_response.status_code == 500
    assert b'"code": "server_error"' in api_response.content
    assert page_not_found(rf.get("/api/v1/x/"), Exception()).status_code == 404
    page = server_error(rf.get("/fr/"))
    assert page.status_code == 500 and b"server_error" not in page.content


def test_the_schema_passes_the_openapi_spec_validator(client):
    from openapi_spec_validator import validate

    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    validate(response.json())
