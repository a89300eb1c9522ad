"""Quotes and orders: the partner's side of the configurator and of the account pages."""

import re
from collections.abc import Callable

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import Throttled
from rest_framework.response import Response

from accounts.models import User
from accounts.services import MAX_SSH_KEYS_PER_USER
from api.authentication import request_api_key
from api.errors import Conflict
from api.pagination import ApiPagination
from api.selectors import (
    api_gpus,
    api_order_for_user,
    api_orders_for_user,
    api_payment_assets,
)
from api.serializers import OrderOutputSerializer, PricedOutputSerializer
from api.services import (
    IdempotencyConflict,
    OrderPlaced,
    api_extension_place,
    api_order_place,
)
from api.views.base import ApiView
from catalog.models import TERMS, Environment
from hosts.provisioning.keys import order_ssh_keys_set
from orders.consent import TermsAcceptance
from orders.models import OrderEvent, OrderStatus
from orders.services import MAX_ENVIRONMENT_DETAILS, MAX_QUANTITY, order_cancel, quote_build
from payments.services import payment_claim_rate_limited, payment_claim_record
from rental.text import refuse_control_characters_but_lines

Actor = OrderEvent.Actor

ORDER_EXAMPLE = {
    "number": "LG-7KQ2-M9XD",
    "status": "awaiting_payment",
    "gpu": "h100-sxm",
    "environment": "pytorch",
    "environment_details": "",
    "quantity": 2,
    "term_days": 7,
    "daily_rate": "72.00",
    "total": "1008.00",
    "total_incl_vat": "1008.00",
    "total_excl_vat": "840.00",
    "vat_rate": "20.00",
    "vat_amount": "168.00",
    "vat_mode": "standard",
    "currency": "EUR",
    "created_at": "2025-03-04T10:15:00+01:00",
    "payment_deadline": "2025-03-04T10:45:00+01:00",
    "ends_at": None,
    "ssh_keys": [12, 15],
    "extends": None,
    "extensions": [],
    "events": [
        {
            "status": "awaiting_payment",
            "kind": "status",
            "at": "2025-03-04T10:15:00+01:00",
            "actor": "partner",
            "reason": "",
        }
    ],
    "access": None,
    "payment": {
        "asset": "usdc-ethereum",
        "chain_id": 1,
        "network": "Ethereum",
        "token_address": "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
        "address": "0x5e1f8c0d3b2a4f6e7d8c9b0a1f2e3d4c5b6a7980",
        "amount": "1095652174",
        "amount_display": "1095.652174",
        "decimals": 6,
        "uri": (
            "ethereum:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48@1/transfer"
            "?address=0x5e1f8c0d3b2a4f6e7d8c9b0a1f2e3d4c5b6a7980&uint256=1095652174"
        ),
        "status": "open",
        "expires_at": "2025-03-04T10:45:00+01:00",
        "monitor_until": "2025-03-05T10:45:00+01:00",
        "received": "0",
        "pending": "0",
        "left": "1095652174",
        "confirmations": 0,
        "confirmations_required": 12,
        "head_block": 21954102,
        "flags": [],
        "transfers": [],
    },
    "refund": None,
    "journal": None,
}
# Printable ASCII without spaces, as in the IETF Idempotency-Key draft's examples.
IDEMPOTENCY_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")


def request_actor(request) -> str:
    """Who the timeline says acted: the partner for an API key, the customer in a browser."""
    return Actor.PARTNER if request_api_key(request) else Actor.CUSTOMER


def order_or_404(request, number: str):
    order = api_order_for_user(user=request.user, number=number)
    if order is None:
        raise Http404
    return order


class ConfigurationInputSerializer(serializers.Serializer):
    # With its prices and the units free right now, in the GPU's own queries: the quote
    # needs nothing more (order_create counts the stock again under the GPU's row lock).
    gpu = serializers.SlugRelatedField(
        slug_field="slug", queryset=api_gpus(), help_text="GPU slug, e.g. `h100-sxm`."
    )
    environment: serializers.SlugRelatedField = serializers.SlugRelatedField(
        slug_field="slug",
        queryset=Environment.objects.filter(is_active=True),
        help_text="`pytorch` or `custom`.",
    )
    environment_details = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=MAX_ENVIRONMENT_DETAILS,
        validators=[refuse_control_characters_but_lines],
        help_text=(
            "Required for an environment with `requires_details`: an image reference alone "
            "(`registry/name:tag` or `name@sha256:<64 hex>`), or the text of a requirements "
            "file installed at start. A malformed one is a 400 naming this field."
        ),
    )
    quantity = serializers.IntegerField(min_value=1, max_value=MAX_QUANTITY)
    term_days = serializers.ChoiceField(choices=TERMS, help_text="3, 7 or 30.")

    class Meta:
        ref_name = "Configuration"


class QuoteApi(ApiView):
    class OutputSerializer(PricedOutputSerializer):
        gpu = serializers.CharField(source="gpu.slug")
        environment = serializers.CharField(source="environment.slug")
        term_days = serializers.IntegerField()
        daily_rate = serializers.DecimalField(
            max_digits=10, decimal_places=2, help_text="Per GPU per day, VAT included."
        )
        days = serializers.IntegerField()
        quantity = serializers.IntegerField()
        currency = serializers.CharField()
        available_units = serializers.IntegerField()

        class Meta:
            ref_name = "Quote"

    @extend_schema(
        operation_id="quotes_create",
        summary="Price a configuration",
        description=(
            "The price of a GPU, environment, quantity and term, checked against the stock "
            "right now. Nothing is reserved: `POST /orders/` re-checks availability."
        ),
        request=ConfigurationInputSerializer,
        responses={200: OutputSerializer},
        examples=[
            OpenApiExample(
                "Two H100 for a week",
                value={"gpu": "h100-sxm", "environment": "pytorch", "quantity": 2, "term_days": 7},
                request_only=True,
            ),
            OpenApiExample(
                "Quote",
                value={
                    "gpu": "h100-sxm",
                    "environment": "pytorch",
                    "term_days": 7,
                    "daily_rate": "72.00",
                    "days": 7,
                    "quantity": 2,
                    "total": "1008.00",
                    "total_incl_vat": "1008.00",
                    "total_excl_vat": "840.00",
                    "vat_rate": "20.00",
                    "vat_amount": "168.00",
                    "vat_mode": "standard",
                    "currency": "EUR",
                    "available_units": 6,
                },
                response_only=True,
            ),
        ],
        tags=["orders"],
    )
    def post(self, request):
        return Response(self._quote(request.data, buyer=request.user))

    def _quote(self, body, *, buyer: User) -> dict:
        serializer = ConfigurationInputSerializer(data=body)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        gpu = data["gpu"]  # read with its live stock on every host (api_gpus)
        # That stock is this environment's unless it needs some CUDA: then quote_build counts
        # the hosts that support it.
        stock = (
            {
                "available_units": gpu.available_units,
                "largest_free_block": gpu.largest_free_block,
            }
            if data["environment"].cuda_required is None
            else {}
        )
        quote = quote_build(**data, **stock, buyer_vat_number=buyer.vat_number)
        return self.OutputSerializer(quote).data


IDEMPOTENCY_PARAMETER = OpenApiParameter(
    "Idempotency-Key",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description="Any unique string of printable ASCII (up to 255), e.g. a UUID.",
)


class TermsAcceptedSerializer(serializers.Serializer):
    """`accept_terms`, which an order and an extension both need."""

    accept_terms = serializers.BooleanField(
        help_text=(
            "Must be `true`: the customer accepts the terms of sale in force "
            "(`GET /terms/`) and expressly asks for the rental to start (or go on) as soon as "
            "it is paid, before the end of the 14-day withdrawal period, acknowledging that "
            "the right of withdrawal is lost once the rental is fully performed. Stored on the "
            "order with the version, the time and a hash of the client's address."
        ),
    )

    def validate_accept_terms(self, value: bool) -> bool:
        if not value:
            raise serializers.ValidationError(
                "Accept the terms of sale to order: send `true`.", code="terms_not_accepted"
            )
        return value


def without_acceptance(data: dict) -> dict:
    """The validated body less `accept_terms`: true, or the serializer refused it, so the
    acceptance travels as the service's `terms`."""
    return {name: value for name, value in data.items() if name != "accept_terms"}


def placed_response(
    request, serializer: serializers.Serializer, place: Callable[[str, dict], OrderPlaced]
) -> Response:
    """Validate the Idempotency-Key header and the body, `place(key, data)` the order once:
    201 when made now, 200 for a replay of the same key and body, 409 for another body."""
    idempotency_key = request.headers.get("Idempotency-Key", "")
    if idempotency_key and not IDEMPOTENCY_KEY.match(idempotency_key):
        raise serializers.ValidationError(
            {"Idempotency-Key": ["Use 1 to 255 printable ASCII characters, no spaces."]}
        )
    serializer.is_valid(raise_exception=True)
    try:
        placed = place(idempotency_key, serializer.validated_data)
    except IdempotencyConflict:
        raise Conflict(
            "This Idempotency-Key was already used with another request body.",
            code="idempotency_key_reused",
        ) from None
    order = order_or_404(request, placed.order.number)
    return Response(
        OrderOutputSerializer(order).data,
        status=status.HTTP_201_CREATED if placed.created else status.HTTP_200_OK,
    )


class OrderListApi(ApiView):
    pagination_class = ApiPagination

    class InputSerializer(TermsAcceptedSerializer, ConfigurationInputSerializer):
        asset = serializers.SlugRelatedField(
            slug_field="slug",
            queryset=api_payment_assets(),
            help_text="Payment asset id from `GET /payment-assets/`, e.g. `usdc-ethereum`.",
        )
        ssh_keys = serializers.ListField(
            source="ssh_key_ids",
            child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
            required=False,
            max_length=MAX_SSH_KEYS_PER_USER,
            help_text=(
                "Ids of your SSH keys (`GET /ssh-keys/`) to install on the machines; all of "
                "your account's keys when omitted, none for `[]`."
            ),
        )

        class Meta:
            ref_name = "OrderCreate"

    class FilterSerializer(serializers.Serializer):
        status = serializers.ChoiceField(choices=OrderStatus.choices, required=False)

    @extend_schema(
        operation_id="orders_list",
        summary="List your orders",
        description="Your account's orders, newest first, 20 per page; filter with `?status=`.",
        parameters=[
            OpenApiParameter("status", enum=OrderStatus.values, description="Only this status."),
        ],
        responses=OrderOutputSerializer(many=True),
        examples=[
            OpenApiExample(
                "A page of orders",
                value=ORDER_EXAMPLE,
                response_only=True,
            )
        ],
        tags=["orders"],
    )
    def get(self, request):
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        orders = api_orders_for_user(user=request.user, **filters.validated_data)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(orders, request, view=self)
        return paginator.get_paginated_response(OrderOutputSerializer(page, many=True).data)

    @extend_schema(
        operation_id="orders_create",
        summary="Place an order",
        description=(
            "Creates the order, holds its units until it is paid or expires and issues the "
            "payment instructions (`payment`) in the chosen asset, in one step.\n\n"
            "Send an `Idempotency-Key` header to retry safely: a repeat with the same key and "
            "body returns the same order with 200; the same key with another body is a 409.\n\n"
            "`accept_terms` must be `true`: an order without the customer's acceptance of the "
            "terms of sale in force (`GET /terms/`) is a 400 naming `accept_terms`.\n\n"
            "An account holds a limited number of unpaid orders and GPUs at once (fewer "
            "before its first payment): one more is a 409 `unpaid_limit` saying the limit."
        ),
        parameters=[IDEMPOTENCY_PARAMETER],
        request=InputSerializer,
        responses={
            201: OpenApiResponse(OrderOutputSerializer, description="Order created."),
            200: OpenApiResponse(
                OrderOutputSerializer, description="Replay: the order this key created."
            ),
        },
        examples=[
            OpenApiExample(
                "Two H100 for a week, paid in USDC",
                value={
                    "gpu": "h100-sxm",
                    "environment": "pytorch",
                    "environment_details": "",
                    "quantity": 2,
                    "term_days": 7,
                    "asset": "usdc-ethereum",
                    "ssh_keys": [12, 15],
                    "accept_terms": True,
                },
                request_only=True,
            ),
            OpenApiExample(
                "Order", value=ORDER_EXAMPLE, response_only=True, status_codes=["201", "200"]
            ),
        ],
        tags=["orders"],
    )
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        return placed_response(
            request,
            serializer,
            lambda key, data: api_order_place(
                user=request.user,
                api_key=request_api_key(request),
                idempotency_key=key,
                terms=TermsAcceptance.given_now(request),
                **without_acceptance(data),
            ),
        )


class OrderDetailApi(ApiView):
    @extend_schema(
        operation_id="orders_retrieve",
        summary="One order",
        description=(
            "An order of yours by number, with its timeline, payment instructions and, once "
            "active, how to reach the machines. Another account's order is a 404."
        ),
        responses=OrderOutputSerializer,
        examples=[OpenApiExample("Order", value=ORDER_EXAMPLE, response_only=True)],
        tags=["orders"],
    )
    def get(self, request, number: str):
        return Response(OrderOutputSerializer(order_or_404(request, number)).data)

    class KeysInputSerializer(serializers.Serializer):
        ssh_keys = serializers.ListField(
            source="ssh_key_ids",
            child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
            max_length=MAX_SSH_KEYS_PER_USER,
            help_text=(
                "Ids of your SSH keys (`GET /ssh-keys/`) the order's machines accept from now "
                "on: keys left out are removed."
            ),
        )

        class Meta:
            ref_name = "OrderKeys"

    @extend_schema(
        operation_id="orders_partial_update",
        summary="Change the SSH keys of an order",
        description=(
            "Attaches and removes SSH keys on an order not finished yet (paid, being "
            "prepared or active included): machines already running get the new set within "
            "seconds. 400 `unknown_ssh_key` for a key not on your account, "
            "`ssh_key_required` for no key left where the machines need one; 409 "
            "`ssh_keys_frozen` once the rental ended or for an extension."
        ),
        request=KeysInputSerializer,
        responses={200: OrderOutputSerializer},
        examples=[
            OpenApiExample("Keys", value={"ssh_keys": [12, 15]}, request_only=True),
            OpenApiExample(
                "Active order",
                value={**ORDER_EXAMPLE, "status": "active", "ssh_keys": [12, 15]},
                response_only=True,
            ),
        ],
        tags=["orders"],
    )
    def patch(self, request, number: str):
        order = order_or_404(request, number)
        serializer = self.KeysInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        order_ssh_keys_set(
            order=order,
            user=request.user,
            ssh_key_ids=serializer.validated_data["ssh_key_ids"],
            actor=request_actor(request),
        )
        return Response(OrderOutputSerializer(order_or_404(request, number)).data)


class OrderCancelApi(ApiView):
    class InputSerializer(serializers.Serializer):
        reason = serializers.CharField(required=False, allow_blank=True, max_length=500, default="")

        class Meta:
            ref_name = "OrderCancel"

    @extend_schema(
        operation_id="orders_cancel",
        summary="Cancel an unpaid order",
        description=(
            "Cancels an order on which nothing was received (awaiting payment or expired); "
            "its units are released at once. Anything else is a 409."
        ),
        request=InputSerializer,
        responses={200: OrderOutputSerializer},
        examples=[
            OpenApiExample("Reason", value={"reason": "Ordered by mistake"}, request_only=True),
            OpenApiExample(
                "Cancelled order",
                value={**ORDER_EXAMPLE, "status": "cancelled"},
                response_only=True,
            ),
        ],
        tags=["orders"],
    )
    def post(self, request, number: str):
        order = order_or_404(request, number)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        order_cancel(
            order=order,
            actor=request_actor(request),
            actor_user=request.user,
            reason=serializer.validated_data["reason"],
        )
        order = order_or_404(request, number)
        if order.status != OrderStatus.CANCELLED:
            # Someone else moved the order first (a payment arrived, for instance).
            raise Conflict("The order changed meanwhile and was not cancelled.", code="changed")
        return Response(OrderOutputSerializer(order).data, status=status.HTTP_200_OK)


class OrderPaidApi(ApiView):
    class InputSerializer(serializers.Serializer):
        # The pattern admits "" (the default, and a blank field as allowed): a schema whose
        # default breaks its own pattern is invalid OpenAPI.
        tx_hash = serializers.RegexField(
            r"^(0x[0-9a-fA-F]{64})?$",
            required=False,
            allow_blank=True,
            default="",
            help_text="The transaction hash, if you have it: it is checked first.",
        )

        class Meta:
            ref_name = "PaymentClaim"

    @extend_schema(
        operation_id="orders_paid",
        summary='Report a payment ("I\'ve paid")',
        description=(
            "Tells the store you sent the payment: the claim goes on the timeline and the "
            "deposit address is checked at once. It never marks the order paid by itself; "
            "poll the order (or use webhooks) to see `confirming` then `paid`. "
            "Repeated presses within two minutes count once. Presses are limited per order "
            "and per account, whatever the key: past the limit, 429 with `Retry-After`."
        ),
        request=InputSerializer,
        responses={202: OpenApiResponse(OrderOutputSerializer, description="Check queued.")},
        examples=[
            OpenApiExample(
                "With the transaction hash",
                value={
                    "tx_hash": "0x8f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b"
                },
                request_only=True,
            ),
            OpenApiExample(
                "Order with the claim on its timeline",
                value=ORDER_EXAMPLE,
                response_only=True,
                status_codes=["202"],
            ),
        ],
        tags=["orders"],
    )
    def post(self, request, number: str):
        order = order_or_404(request, number)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        wait = payment_claim_rate_limited(order=order)
        if wait:
            raise Throttled(wait=wait, detail="Too many payment claims for this order or account.")
        payment_claim_record(
            order=order,
            user=request.user,
            tx_hash=serializer.validated_data["tx_hash"],
            actor=request_actor(request),
        )
        return Response(
            OrderOutputSerializer(order_or_404(request, number)).data,
            status=status.HTTP_202_ACCEPTED,
        )


class OrderExtensionApi(ApiView):
    class InputSerializer(TermsAcceptedSerializer):
        term_days = serializers.ChoiceField(choices=TERMS, help_text="3, 7 or 30 more days.")
        asset = serializers.SlugRelatedField(
            slug_field="slug",
            queryset=api_payment_assets(),
            help_text="Payment asset id from `GET /payment-assets/`, e.g. `usdc-ethereum`.",
        )

        class Meta:
            ref_name = "ExtensionCreate"

    @extend_schema(
        operation_id="orders_extensions_create",
        summary="Extend a rental",
        description=(
            "Adds 3, 7 or 30 days to a paid, provisioning or active rental at today's daily "
            "rate for that term. The extension is an order of its own (`extends` names the "
            "rental), paid like any order: its `payment` instructions come in the chosen "
            "asset, `POST /orders/{number}/paid/` reports the payment, webhooks follow it. "
            "Its `payment_deadline` is the payment window, cut at the rental's end.\n\n"
            "Paid before the rental ends, it moves the rental's `ends_at` by its days "
            "(`order.extended` webhook), on the same machines with the same access. Not paid "
            "by then, it expires, the rental ends as planned and money arriving later is owed "
            "back (`refund`).\n\n"
            "409 when the rental cannot be extended now: not paid or already ended "
            "(`not_extendable`), an extension itself (`is_extension`), less than 15 minutes "
            "left (`ends_soon`), or another extension still waiting for its payment "
            "(`extension_pending`). Another account's order is a 404. `Idempotency-Key` "
            "works as for `POST /orders/`.\n\n"
            "`accept_terms` must be `true`, as for an order: without it the extension is a "
            "400 naming `accept_terms`."
        ),
        parameters=[IDEMPOTENCY_PARAMETER],
        request=InputSerializer,
        responses={
            201: OpenApiResponse(OrderOutputSerializer, description="Extension created."),
            200: OpenApiResponse(
                OrderOutputSerializer, description="Replay: the extension this key created."
            ),
        },
        examples=[
            OpenApiExample(
                "A week more, paid in USDC",
                value={"term_days": 7, "asset": "usdc-ethereum", "accept_terms": True},
                request_only=True,
            ),
            OpenApiExample(
                "Extension",
                value={
                    **ORDER_EXAMPLE,
                    "number": "LG-Q4RT-8WZC",
                    "extends": "LG-7KQ2-M9XD",
                    "extensions": [],
                    "ssh_keys": [],
                },
                response_only=True,
                status_codes=["201", "200"],
            ),
        ],
        tags=["orders"],
    )
    def post(self, request, number: str):
        rental = order_or_404(request, number)
        serializer = self.InputSerializer(data=request.data)
        return placed_response(
            request,
            serializer,
            lambda key, data: api_extension_place(
                user=request.user,
                api_key=request_api_key(request),
                rental=rental,
                idempotency_key=key,
                terms=TermsAcceptance.given_now(request),
                **without_acceptance(data),
            ),
        )
