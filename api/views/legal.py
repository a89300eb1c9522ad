"""The terms of sale in force, so a partner can show and record what their customer accepts."""

from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response

from api.views.base import ApiView
from catalog.legal import LEGAL_DOCUMENTS, TERMS_OF_SALE

TERMS_EXAMPLE = {
    "version": "2026-12-01",
    "urls": {
        "fr": "https://locagpu.example/fr/legal/cgv/",
        "en": "https://locagpu.example/en/legal/cgv/",
    },
    "documents": [
        {
            "name": "cgv",
            "title": "Terms of sale",
            "version": "2026-12-01",
            "urls": {
                "fr": "https://locagpu.example/fr/legal/cgv/",
                "en": "https://locagpu.example/en/legal/cgv/",
            },
        }
    ],
}


class LanguageUrlsSerializer(serializers.Serializer):
    fr = serializers.URLField(help_text="The French text, which prevails.")
    en = serializers.URLField(help_text="The English translation.")

    class Meta:
        ref_name = "LegalUrls"


class LegalDocumentSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="`cgv`, `legal_notice` or `privacy`.")
    title = serializers.CharField()
    version = serializers.CharField(help_text="The date the text took effect (ISO 8601).")
    urls = serializers.SerializerMethodField()

    class Meta:
        ref_name = "LegalDocument"

    @extend_schema_field(LanguageUrlsSerializer)
    def get_urls(self, document) -> dict[str, str]:
        return document.absolute_urls()


class TermsApi(ApiView):
    # Public: anyone may read the terms before having an account or a key.
    permission_classes = [AllowAny]

    class OutputSerializer(serializers.Serializer):
        version = serializers.CharField(
            help_text="The version of the terms of sale that `accept_terms` accepts now."
        )
        urls = LanguageUrlsSerializer(help_text="The terms of sale in each language.")
        documents = LegalDocumentSerializer(
            many=True, help_text="Every legal text: terms of sale, legal notice, privacy policy."
        )

        class Meta:
            ref_name = "Terms"

    @extend_schema(
        operation_id="terms_retrieve",
        summary="The terms of sale in force",
        description=(
            "The current version of the terms of sale (CGV) and their address in each "
            "language, with the other legal texts. Show them to your customer: "
            "`POST /orders/` needs `accept_terms: true`, their acceptance of this version."
        ),
        responses=OutputSerializer,
        examples=[OpenApiExample("Terms", value=TERMS_EXAMPLE, response_only=True)],
        auth=[],
        tags=["catalog"],
    )
    def get(self, request):
        terms = {
            "version": TERMS_OF_SALE.version,
            "urls": TERMS_OF_SALE.absolute_urls(),
            "documents": list(LEGAL_DOCUMENTS.values()),
        }
        return Response(self.OutputSerializer(terms).data)
