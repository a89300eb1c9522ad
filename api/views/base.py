from django.utils import translation
from rest_framework.views import APIView


class ApiView(APIView):
    """Every API view: answers in English whatever the site's language, so partners get the
    same messages from every endpoint (the codes in errors are the stable part).

    A POST reads its API key from the database (api.authentication): a write acts only as a
    key still valid. A view whose POST provably writes nothing (the quote: tests/api/
    test_stored_keys.py lists the views that say so and checks what they write) declares
    `cached_key_suffices` and takes its key from the cache, as reads do."""

    cached_key_suffices = False

    def dispatch(self, request, *args, **kwargs):
        with translation.override("en"):
            return super().dispatch(request, *args, **kwargs)
