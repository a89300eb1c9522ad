"""One error shape for the whole API: `{"error": {"code", "message", "fields"}}`."""

import logging
import sys

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.db import OperationalError
from django.http import Http404, JsonResponse
from django.views import defaults
from redis.exceptions import RedisError
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from orders.services import OrderError
from payments.services import PaymentError
from rental.middleware import RETRY_AFTER_SECONDS, database_unavailable_page

logger = logging.getLogger(__name__)

API_PATH_PREFIX = "/api/"
# OrderError codes that describe the state of the store rather than a bad request.
CONFLICT_CODES = {
    "not_enough_units",
    "unpaid_limit",
    "not_cancellable",
    "ssh_keys_frozen",
    "changed",
    "not_payable",
    "payment_received",
    "stale_rate",
    "busy",
    "not_extendable",
    "is_extension",
    "ends_soon",
    "extension_pending",
}
# The request field a PaymentError is about, by its code.
PAYMENT_ERROR_FIELDS = {"asset": "asset", "stale_rate": "asset", "tx_hash": "tx_hash"}


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with the current state of the resource."
    default_code = "conflict"


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "payload_too_large"


class FieldError(exceptions.APIException):
    """A refusal about one field of the request, with the store's own code."""

    def __init__(self, message, *, field: str | None, code: str, status_code: int = 400):
        super().__init__(detail=str(message), code=code)
        self.status_code = status_code
        self.field = field


def from_order_error(exc: OrderError) -> FieldError:
    status_code = 409 if exc.code in CONFLICT_CODES else 400
    return FieldError(exc.message, field=exc.field, code=exc.code, status_code=status_code)


def from_payment_error(exc: PaymentError) -> FieldError:
    status_code = 409 if exc.code in CONFLICT_CODES else 400
    field = PAYMENT_ERROR_FIELDS.get(exc.code)
    return FieldError(exc.message, field=field, code=exc.code, status_code=status_code)


def error_body(code: str, message: str, fields: dict[str, list[str]] | None = None) -> dict:
    return {"error": {"code": code, "message": message, "fields": fields or {}}}


def _flatten(detail, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested validation errors as `{"field" or "field.sub": [messages]}`."""
    name = prefix or "non_field_errors"
    if isinstance(detail, dict):
        fields: dict[str, list[str]] = {}
        for key, value in detail.items():
            fields.update(_flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return fields
    if isinstance(detail, list):
        if all(isinstance(item, str) for item in detail):
            return {name: [str(item) for item in detail]}
        fields = {}
        for index, item in enumerate(detail):
            fields.update(_flatten(item, f"{prefix}.{index}" if prefix else str(index)))
        return fields
    return {name: [str(detail)]}


def _validation_error_body(exc: exceptions.ValidationError) -> dict:
    fields = _flatten(exc.detail)
    first_field, messages = next(iter(fields.items()), ("", ["Invalid request."]))
    message = messages[0] if first_field == "non_field_errors" else f"{first_field}: {messages[0]}"
    return error_body("invalid", message, fields)


def _code_of(exc: exceptions.APIException) -> str:
    detail = exc.detail
    code = getattr(detail, "code", None)
    if isinstance(code, str) and code not in ("invalid", "error"):
        return code
    return exc.default_code


class Unavailable(exceptions.APIException):
    """Redis does not answer: the throttle cannot count, so nothing is done (rental.middleware);
    or PostgreSQL does not answer in time (rental.database)."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = (
        "A service we depend on is not answering. Retry shortly, with the same "
        "Idempotency-Key when placing an order or an extension."
    )
    default_code = "unavailable"


def api_exception_handler(exc, context):
    """DRF's EXCEPTION_HANDLER: every failure becomes the JSON error shape, never a bare 500."""
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, RequestDataTooBig):
        exc = PayloadTooLarge()
    elif isinstance(exc, OrderError):
        exc = from_order_error(exc)
    elif isinstance(exc, PaymentError):
        exc = from_payment_error(exc)
    elif isinstance(exc, RedisError):
        logger.error(
            "cache unreachable, %s answered 503: %s", type(context.get("view")).__name__, exc
        )
        exc = Unavailable()
    elif isinstance(exc, OperationalError):
        logger.error(
            "database unreachable, %s answered 503: %s", type(context.get("view")).__name__, exc
        )
        exc = Unavailable()

    response = drf_exception_handler(exc, context)
    if response is None:
        view = context.get("view")
        logger.error("Unhandled error in %s", type(view).__name__, exc_info=exc)
        return Response(
            error_body("server_error", "Something went wrong on our side; please retry."),
            status=status.HTTP_500_INTERNAL_SERVER_ERROR,
        )

    if isinstance(exc, exceptions.ValidationError):
        response.data = _validation_error_body(exc)
    elif isinstance(exc, FieldError):
        fields = {exc.field: [str(exc.detail)]} if exc.field else {}
        response.data = error_body(_code_of(exc), str(exc.detail), fields)
    else:
        detail = exc.detail
        message = str(detail) if not isinstance(detail, (list, dict)) else "Request refused."
        response.data = error_body(_code_of(exc), message)
    if isinstance(exc, Unavailable):
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def page_not_found(request, exception):
    """handler404: JSON under /api/, Django's page (templates/404.html if any) elsewhere."""
    if request.path.startswith(API_PATH_PREFIX):
        return JsonResponse(error_body("not_found", "Not found."), status=404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    """handler500: JSON under /api/, Django's page elsewhere; a database that did not answer
    (in a middleware: the views' own go through rental.database) is a 503."""
    error = sys.exc_info()[1]
    if isinstance(error, OperationalError) and request.path.startswith(API_PATH_PREFIX):
        response = JsonResponse(
            error_body("unavailable", str(Unavailable.default_detail)), status=503
        )
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
    if isinstance(error, OperationalError):
        return database_unavailable_page(request, error)
    if request.path.startswith(API_PATH_PREFIX):
        return JsonResponse(
            error_body("server_error", "Something went wrong on our side; please retry."),
            status=500,
        )
    return defaults.server_error(request)
