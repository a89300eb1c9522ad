"""Webhook endpoints: where the store POSTs your orders' events, and what it sent."""

from django.http import Http404
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from api.errors import Conflict, FieldError
from api.models import WebhookDelivery, WebhookEvent
from api.pagination import ApiPagination
from api.views.base import ApiView
from api.webhooks.pausing import webhook_endpoint_resume
from api.webhooks.selectors import (
    webhook_deliveries_for_endpoint,
    webhook_endpoint_for_user,
    webhook_endpoints_for_user,
)
from api.webhooks.services import (
    MAX_ENDPOINTS_PER_USER,
    WebhookEndpointLimit,
    webhook_delivery_redeliver,
    webhook_endpoint_create,
    webhook_endpoint_delete,
)
from api.webhooks.targets import WebhookTargetError

WEBHOOKS_DESCRIPTION = (
    "On every event of your orders (creation, status change, payment claim, transfer seen "
    "or confirmed...), the store POSTs JSON `{id, type, created_at, event, order}` to each "
    "endpoint subscribed to that type. Verify `X-Rental-Signature: t=<unix time>,v1=<hex>`: "
    'the HMAC-SHA256 of `"<t>.<raw body>"` with the endpoint\'s secret. `X-Rental-Delivery` '
    "identifies the delivery (the same on retries). Answer 2xx within 5 s; otherwise the "
    "delivery is retried after 10 s, 1 min, 10 min, then hourly for 24 hours. One delivery "
    "at a time is sent to an endpoint. An endpoint that fails or takes over 3 s to answer "
    "5 times in a row is paused (`paused_at`) and you get an e-mail: its events wait until "
    "you resume it with `POST /webhooks/{id}/resume/`."
)
ENDPOINT_EXAMPLE = {
    "id": 7,
    "url": "https://partner.example.com/hooks/locagpu",
    "events": ["order.created", "order.status_changed"],
    "created_at": "2025-03-04T10:00:00+01:00",
    "paused_at": None,
}
DELIVERY_EXAMPLE = {
    "id": "3f6c1f4e-9a55-4f0e-8a8e-0d7b8c3b2a10",
    "event_id": "evt_1542",
    "type": "order.status_changed",
    "status": "delivered",
    "attempts": 2,
    "next_attempt_at": None,
    "last_attempt_at": "2025-03-04T10:16:12+01:00",
    "last_status_code": 200,
    "last_error": "",
    "delivered_at": "2025-03-04T10:16:12+01:00",
    "created_at": "2025-03-04T10:16:01+01:00",
    "payload": {
        "id": "evt_1542",
        "type": "order.status_changed",
        "created_at": "2025-03-04T10:16:00+01:00",
        "event": {
            "kind": "status",
            "old_status": "awaiting_payment",
            "new_status": "confirming",
            "actor": "system",
            "reason": "",
        },
        "order": {"number": "LG-7KQ2-M9XD", "status": "confirming"},
    },
}


class WebhookEndpointOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.URLField()
    events = serializers.ListField(child=serializers.ChoiceField(choices=WebhookEvent.choices))
    created_at = serializers.DateTimeField()
    paused_at = serializers.DateTimeField(
        allow_null=True,
        help_text=(
            "Set after repeated failures, or when the account's password changed: nothing is "
            "sent until you resume it."
        ),
    )

    class Meta:
        ref_name = "WebhookEndpoint"


def endpoint_or_404(request, endpoint_id: int):
    endpoint = webhook_endpoint_for_user(user=request.user, endpoint_id=endpoint_id)
    if endpoint is None:
        raise Http404
    return endpoint


class WebhookEndpointListApi(ApiView):
    class InputSerializer(serializers.Serializer):
        url = serializers.URLField(
            max_length=500, help_text="https URL on a public address that receives the events."
        )
        events = serializers.MultipleChoiceField(
            choices=WebhookEvent.choices,
            required=False,
            help_text="Event types to receive; all of them when omitted.",
        )

        class Meta:
            ref_name = "WebhookEndpointCreate"

    class CreatedSerializer(WebhookEndpointOutputSerializer):
        secret = serializers.CharField(help_text="Signing secret. Shown once: store it now.")

        class Meta:
            ref_name = "WebhookEndpointCreated"

    @extend_schema(
        operation_id="webhooks_list",
        summary="List your webhook endpoints",
        description=WEBHOOKS_DESCRIPTION,
        responses=WebhookEndpointOutputSerializer(many=True),
        examples=[OpenApiExample("Endpoint", value=ENDPOINT_EXAMPLE, response_only=True)],
        tags=["webhooks"],
    )
    def get(self, request):
        endpoints = webhook_endpoints_for_user(user=request.user)
        return Response(WebhookEndpointOutputSerializer(endpoints, many=True).data)

    @extend_schema(
        operation_id="webhooks_create",
        summary="Add a webhook endpoint",
        description=(
            "Registers a URL for your orders' events and returns its signing secret, once. "
            "The URL must be https on a public address (no private, loopback or link-local "
            f"addresses); at most {MAX_ENDPOINTS_PER_USER} endpoints per account."
        ),
        request=InputSerializer,
        responses={201: CreatedSerializer},
        examples=[
            OpenApiExample(
                "Status changes only",
                value={
                    "url": "https://partner.example.com/hooks/locagpu",
                    "events": ["order.created", "order.status_changed"],
                },
                request_only=True,
            ),
            OpenApiExample(
                "Endpoint and its secret",
                value={**ENDPOINT_EXAMPLE, "secret": "whsec_6f0c4Jm0bT1xk2XzQ5yYt3nHq8wRr9aLd"},
                response_only=True,
            ),
        ],
        tags=["webhooks"],
    )
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        events = serializer.validated_data.get("events") or WebhookEvent.values
        try:
            endpoint = webhook_endpoint_create(
                user=request.user, url=serializer.validated_data["url"], events=list(events)
            )
        except WebhookTargetError as exc:
            raise FieldError(str(exc), field="url", code="webhook_target_refused") from None
        except WebhookEndpointLimit as exc:
            raise Conflict(exc.message, code="too_many_webhooks") from None
        return Response(self.CreatedSerializer(endpoint).data, status=status.HTTP_201_CREATED)


class WebhookEndpointDetailApi(ApiView):
    @extend_schema(
        operation_id="webhooks_retrieve",
        summary="One webhook endpoint",
        description="A webhook endpoint of yours (its secret is never shown again).",
        responses=WebhookEndpointOutputSerializer,
        examples=[OpenApiExample("Endpoint", value=ENDPOINT_EXAMPLE, response_only=True)],
        tags=["webhooks"],
    )
    def get(self, request, endpoint_id: int):
        return Response(WebhookEndpointOutputSerializer(endpoint_or_404(request, endpoint_id)).data)

    @extend_schema(
        operation_id="webhooks_destroy",
        summary="Remove a webhook endpoint",
        description="Stops all deliveries to this endpoint, pending retries included.",
        responses={204: OpenApiResponse(description="Removed.")},
        tags=["webhooks"],
    )
    def delete(self, request, endpoint_id: int):
        webhook_endpoint_delete(endpoint=endpoint_or_404(request, endpoint_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class WebhookEndpointResumeApi(ApiView):
    @extend_schema(
        operation_id="webhooks_resume",
        summary="Resume a paused webhook endpoint",
        description=(
            "Sends again to a paused endpoint: paused after repeated failures, or by a password "
            "change or reset (in case someone else set it up: delete the endpoints you do not "
            "recognise). The deliveries that waited go first, oldest first. Resuming an endpoint "
            "that is not paused does nothing."
        ),
        request=None,
        responses={200: WebhookEndpointOutputSerializer},
        examples=[OpenApiExample("Endpoint", value=ENDPOINT_EXAMPLE, response_only=True)],
        tags=["webhooks"],
    )
    def post(self, request, endpoint_id: int):
        endpoint = webhook_endpoint_resume(endpoint=endpoint_or_404(request, endpoint_id))
        return Response(WebhookEndpointOutputSerializer(endpoint).data)


class WebhookDeliveryOutputSerializer(serializers.Serializer):
    id = serializers.UUIDField(help_text="Sent as `X-Rental-Delivery`.")
    event_id = serializers.SerializerMethodField(help_text="The `id` in the payload.")
    type = serializers.ChoiceField(source="event_type", choices=WebhookEvent.choices)
    status = serializers.ChoiceField(choices=WebhookDelivery.Status.choices)
    attempts = serializers.IntegerField()
    next_attempt_at = serializers.DateTimeField(allow_null=True)
    last_attempt_at = serializers.DateTimeField(allow_null=True)
    last_status_code = serializers.IntegerField(allow_null=True)
    last_error = serializers.CharField()
    delivered_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    payload = serializers.DictField(help_text="The JSON body sent.")

    class Meta:
        ref_name = "WebhookDelivery"

    def get_event_id(self, delivery) -> str:
        return delivery.payload.get("id", "")


class WebhookDeliveryListApi(ApiView):
    pagination_class = ApiPagination

    @extend_schema(
        operation_id="webhooks_deliveries_list",
        summary="List an endpoint's deliveries",
        description=(
            "What was sent to this endpoint, newest first, with the outcome of the last "
            "attempt and the next retry."
        ),
        responses=WebhookDeliveryOutputSerializer(many=True),
        examples=[OpenApiExample("Delivery", value=DELIVERY_EXAMPLE, response_only=True)],
        tags=["webhooks"],
    )
    def get(self, request, endpoint_id: int):
        endpoint = endpoint_or_404(request, endpoint_id)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(
            webhook_deliveries_for_endpoint(endpoint=endpoint), request, view=self
        )
        return paginator.get_paginated_response(
            WebhookDeliveryOutputSerializer(page, many=True).data
        )


class WebhookRedeliverApi(ApiView):
    @extend_schema(
        operation_id="webhooks_deliveries_redeliver",
        summary="Send a delivery again",
        description=(
            "Queues the delivery at once, whatever its state, with a fresh 24-hour retry "
            "window. The body and `X-Rental-Delivery` are the same; the signature is new."
        ),
        request=None,
        responses={202: WebhookDeliveryOutputSerializer},
        examples=[
            OpenApiExample(
                "Queued",
                value={**DELIVERY_EXAMPLE, "status": "pending", "attempts": 0},
                response_only=True,
                status_codes=["202"],
            )
        ],
        tags=["webhooks"],
    )
    def post(self, request, endpoint_id: int, delivery_id):
        endpoint = endpoint_or_404(request, endpoint_id)
        delivery = webhook_deliveries_for_endpoint(endpoint=endpoint).filter(pk=delivery_id).first()
        if delivery is None:
            raise Http404
        if endpoint.paused_at is not None:
            raise Conflict("Resume the endpoint first.", code="webhook_paused")
        delivery = webhook_delivery_redeliver(delivery=delivery)
        return Response(
            WebhookDeliveryOutputSerializer(delivery).data, status=status.HTTP_202_ACCEPTED
        )
