"""OpenAPI details drf-spectacular cannot guess: the Api-Key scheme and the error responses."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "api.authentication.ApiKeyAuthentication"
    name = "apiKeyAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Api-Key <key>`, with a key from your account's API keys page.",
        }


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable, machine-readable reason, e.g. `invalid`.")
    message = serializers.CharField(help_text="Human-readable explanation.")
    fields = serializers.DictField(  # type: ignore[assignment]  # the error shape names it
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Messages per request field (`non_field_errors` for the whole body).",
    )

    class Meta:
        ref_name = "ErrorDetail"


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()

    class Meta:
        ref_name = "Error"


def _example(code: str, message: str, fields: dict | None = None) -> dict:
    return {"error": {"code": code, "message": message, "fields": fields or {}}}


ERRORS = {
    "400": (
        "The request is not valid; `fields` says which field and why.",
        _example(
            "invalid",
            "quantity: Ensure this value is greater than or equal to 1.",
            {"quantity": ["Ensure this value is greater than or equal to 1."]},
        ),
    ),
    "401": (
        "No valid `Authorization: Api-Key <key>` header (missing, unknown or revoked key).",
        _example("authentication_failed", "Unknown or revoked API key."),
    ),
    "403": (
        "The key is read-only, or the session lacks a CSRF token.",
        _example("permission_denied", "This API key is read-only."),
    ),
    "404": (
        "Not found, or not yours: another account's objects are never revealed.",
        _example("not_found", "Not found."),
    ),
    "409": (
        "The request conflicts with the current state (stock, order status, idempotency key; "
        "`stale_rate`: the asset is temporarily unavailable, no trusted price for it now).",
        _example("not_enough_units", "Not enough units: 2 available right now.", {"quantity": []}),
    ),
    "413": (
        "The request body is too large.",
        _example("payload_too_large", "The request body is larger than 65536 bytes."),
    ),
    "429": (
        "Too many requests for this key; retry after `Retry-After` seconds.",
        _example("throttled", "Request was throttled. Expected available in 12 seconds."),
    ),
}
READ_ERRORS = ("401", "404", "429")
WRITE_ERRORS = ("400", "401", "403", "404", "409", "413", "429")


class ApiAutoSchema(AutoSchema):
    """Adds the shared error responses to every operation of the API."""

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        if not self.path.startswith("/api/v1/"):
            return responses
        codes = READ_ERRORS if self.method in ("GET", "HEAD", "OPTIONS") else WRITE_ERRORS
        if hasattr(self.view, "FilterSerializer"):
            codes = ("400", *codes)  # a bad query parameter
        for code in codes:
            if code in responses:
                continue
            description, example = ERRORS[code]
            response = self._get_response_for_code(ErrorSerializer, code, direction=direction)
            response["description"] = description
            for media in response.get("content", {}).values():
                media["examples"] = {"error": {"value": example}}
            if code == "429":
                response["headers"] = {
                    "Retry-After": {
                        "schema": {"type": "integer"},
                        "description": "Seconds to wait before retrying.",
                    }
                }
            responses[code] = response
        return responses
