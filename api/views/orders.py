"""Quotes and orders: the partner's side of the configurator and of the account pages."""

from django.http import Http404
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from api.authentication import request_api_key
from api.errors import Conflict
from api.pagination import ApiPagination
from api.selectors import api_order_for_user, api_orders_for_user
from api.serializers import OrderOutputSerializer
from api.views.base import ApiView
from catalog.models import TERMS, Environment, GpuModel
from orders.models import OrderEvent, OrderStatus
from orders.services import MAX_ENVIRONMENT_DETAILS, MAX_QUANTITY, order_cancel, quote_build

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
    "currency": "EUR",
    "created_at": "2025-03-04T10:15:00+01:00",
    "payment_deadline": "2025-03-04T10:45:00+01:00",
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
}


def request_actor(request) -> str:
    """Who the timeline says acted: the partner for an API key, the customer in a browser."""
    return Actor.PARTNER if request_api_key(request) else Actor.CUSTOMER


def order_or_404(request, number: str):
    order = api_order_for_user(user=request.user, number=number)
    if order is None:
        raise Http404
    return order


class ConfigurationInputSerializer(serializers.Serializer):
    gpu = serializers.SlugRelatedField(
        slug_field="slug",
        queryset=GpuModel.objects.filter(is_active=True),
        help_text="GPU slug, e.g. `h100-sxm`.",
    )
    environment = serializers.SlugRelatedField(
        slug_field="slug",
        queryset=Environment.objects.filter(is_active=True),
        help_text="`pytorch` or `custom`.",
    )
    environment_details = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=MAX_ENVIRONMENT_DETAILS,
        help_text="Required for an environment with `requires_details`.",
    )
    quantity = serializers.IntegerField(min_value=1, max_value=MAX_QUANTITY)
    term_days = serializers.ChoiceField(choices=TERMS, help_text="3, 7 or 30.")

    class Meta:
        ref_name = "Configuration"


class QuoteApi(ApiView):
    class OutputSerializer(serializers.Serializer):
        gpu = serializers.CharField(source="gpu.slug")
        environment = serializers.CharField(source="environment.slug")
        term_days = serializers.IntegerField()
        daily_rate = serializers.DecimalField(max_digits=10, decimal_places=2)
        days = serializers.IntegerField()
        quantity = serializers.IntegerField()
        total = serializers.DecimalField(
            max_digits=12, decimal_places=2, help_text="daily_rate x days x quantity."
        )
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
                    "currency": "EUR",
                    "available_units": 6,
                },
                response_only=True,
            ),
        ],
        tags=["orders"],
    )
    def post(self, request):
        serializer = ConfigurationInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        quote = quote_build(**serializer.validated_data)
        return Response(self.OutputSerializer(quote).data)


class OrderListApi(ApiView):
    pagination_class = ApiPagination

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
