"""What partners can pay with."""

from django.conf import settings
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from api.selectors import api_payment_assets
from api.views.base import ApiView
from payments.models import Asset
from payments.selectors import assets_unpriced


class PaymentAssetListApi(ApiView):
    class OutputSerializer(serializers.Serializer):
        id = serializers.CharField(source="slug", help_text="Pass it as `asset` to create orders.")
        symbol = serializers.CharField()
        kind = serializers.ChoiceField(choices=Asset.Kind.choices)
        chain_id = serializers.IntegerField(source="chain.chain_id")
        network = serializers.CharField(source="chain.name")
        token_address = serializers.SerializerMethodField(help_text="Null for the native coin.")
        decimals = serializers.IntegerField()
        available = serializers.SerializerMethodField(
            help_text="False while no trusted price exists for it (stale or refused price "
            "feed): an order in it is refused with `stale_rate` until then."
        )

        class Meta:
            ref_name = "PaymentAsset"

        def get_token_address(self, asset: Asset) -> str | None:
            return None if asset.is_native else asset.contract_address

        def get_available(self, asset: Asset) -> bool:
            return asset.pk not in self.context["unpriced"]

    @extend_schema(
        operation_id="payment_assets_list",
        summary="List the payment assets",
        description=(
            "The coins and tokens an order can be paid in, on which chain. Amounts are "
            "always given in the asset's base units (`decimals`)."
        ),
        responses=OutputSerializer(many=True),
        examples=[
            OpenApiExample(
                "USDC on Ethereum",
                value={
                    "id": "usdc-ethereum",
                    "symbol": "USDC",
                    "kind": "erc20",
                    "chain_id": 1,
                    "network": "Ethereum",
                    "token_address": "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
                    "decimals": 6,
                    "available": True,
                },
                response_only=True,
            )
        ],
        tags=["payments"],
    )
    def get(self, request):
        context = {"unpriced": assets_unpriced(currency=settings.STORE_CURRENCY)}
        return Response(
            self.OutputSerializer(api_payment_assets(), many=True, context=context).data
        )
