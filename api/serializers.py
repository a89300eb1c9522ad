"""The order as partners see it: shared by the order endpoints and the webhook payloads."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from orders.models import Order, OrderEvent, OrderStatus


class OrderEventOutputSerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        source="new_status", choices=OrderStatus.choices, help_text="Status after the event."
    )
    kind = serializers.ChoiceField(choices=OrderEvent.Kind.choices)
    at = serializers.DateTimeField(source="created_at")
    actor = serializers.ChoiceField(choices=OrderEvent.Actor.choices)
    reason = serializers.CharField()

    class Meta:
        ref_name = "OrderEvent"


class AccessOutputSerializer(serializers.Serializer):
    host = serializers.CharField(source="access_host")
    port = serializers.IntegerField(source="access_port", allow_null=True)
    user = serializers.CharField(source="access_user")
    notes = serializers.CharField(source="access_notes")

    class Meta:
        ref_name = "Access"


class OrderOutputSerializer(serializers.Serializer):
    number = serializers.CharField(help_text="The order number: your reference everywhere.")
    status = serializers.ChoiceField(choices=OrderStatus.choices)
    gpu = serializers.CharField(source="gpu.slug", help_text="GPU slug.")
    environment = serializers.CharField(source="environment.slug", help_text="Environment slug.")
    environment_details = serializers.CharField()
    quantity = serializers.IntegerField()
    term_days = serializers.IntegerField()
    daily_rate = serializers.DecimalField(max_digits=10, decimal_places=2)
    total = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = serializers.CharField()
    created_at = serializers.DateTimeField()
    payment_deadline = serializers.DateTimeField(help_text="Pay before this time.")
    events = OrderEventOutputSerializer(many=True, help_text="The timeline, oldest first.")
    access = serializers.SerializerMethodField(
        help_text="How to reach the machines; null until the order is active."
    )

    class Meta:
        ref_name = "Order"

    @extend_schema_field(AccessOutputSerializer(allow_null=True))
    def get_access(self, order: Order) -> dict | None:
        if not order.has_access_details:
            return None
        return AccessOutputSerializer(order).data


def order_representation(order: Order) -> dict:
    return OrderOutputSerializer(order).data
