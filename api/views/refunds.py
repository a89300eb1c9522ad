"""The refund address of an order: the partner's side of the order page's refund section."""

from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from api.errors import FieldError
from api.serializers import OrderOutputSerializer
from api.views.base import ApiView
from api.views.orders import ORDER_EXAMPLE, order_or_404, request_actor
from payments.refunds.services import refund_address_set
from payments.services import PaymentError

REFUND_EXAMPLE = {
    "amount": "12500000",
    "amount_display": "12.5",
    "asset": "usdc-base",
    "decimals": 6,
    "chain_id": 8453,
    "network": "Base",
    "address": "0x52908400098527886E0F7030069857D2E4169EE7",
    "tx_hash": "",
    "status": "address_given",
    "rejection": "",
}


class OrderRefundAddressApi(ApiView):
    class InputSerializer(serializers.Serializer):
        address = serializers.CharField(
            max_length=100,
            help_text="Where to send the refund: EIP-55 checksummed, or all lower case with "
            "`address_confirm`.",
        )
        address_confirm = serializers.CharField(
            max_length=100,
            required=False,
            allow_blank=True,
            default="",
            help_text="The same address again; required for an address without checksum.",
        )

        class Meta:
            ref_name = "RefundAddress"

    @extend_schema(
        operation_id="orders_refund_address",
        summary="Give the refund address",
        description=(
            "When the order's `refund` is owed (overpayment, order refunded after payment), "
            "tells the store where to send it, on the refund's network and in its asset. It "
            "may be corrected until the refund is sent. Never your exchange's deposit address "
            "unless it accepts that asset on that network. A malformed address, a failed "
            "checksum or an unconfirmed lower-case address is a 400; no refund owed, or one "
            "already sent, a 409."
        ),
        request=InputSerializer,
        responses={200: OpenApiResponse(OrderOutputSerializer, description="Address recorded.")},
        examples=[
            OpenApiExample(
                "Checksummed address",
                value={"address": "0x52908400098527886E0F7030069857D2E4169EE7"},
                request_only=True,
            ),
            OpenApiExample(
                "Order with its refund",
                value={**ORDER_EXAMPLE, "status": "refunded", "refund": REFUND_EXAMPLE},
                response_only=True,
            ),
        ],
        tags=["orders"],
    )
    def post(self, request, number: str):
        order = order_or_404(request, number)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            refund_address_set(
                order=order,
                address=serializer.validated_data["address"],
                confirmation=serializer.validated_data["address_confirm"],
                user=request.user,
                actor=request_actor(request),
            )
        except PaymentError as exc:
            bad_address = exc.code == "address"
            raise FieldError(
                exc.message,
                field="address" if bad_address else None,
                code=exc.code,
                status_code=400 if bad_address else 409,
            ) from None
        return Response(OrderOutputSerializer(order_or_404(request, number)).data)
