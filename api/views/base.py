from django.utils import translation
from rest_framework.views import APIView


class ApiView(APIView):
    """Every API view: answers in English whatever the site's language, so partners get the
    same messages from every endpoint (the codes in errors are the stable part)."""

    def dispatch(self, request, *args, **kwargs):
        with translation.override("en"):
            return super().dispatch(request, *args, **kwargs)
