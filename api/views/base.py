import contextlib

from django.utils import translation
from rest_framework.views import APIView

from rental.middleware import reads_only


class ApiView(APIView):
    """Every API view: answers in English whatever the site's language, so partners get the
    same messages from every endpoint (the codes in errors are the stable part)."""

    # True for a view none of whose methods writes anything (a POST only for its body): its
    # requests may be answered from memory as a GET's (rental.middleware.reads_only).
    writes_nothing = False

    def dispatch(self, request, *args, **kwargs):
        reads = reads_only(request) if self.writes_nothing else contextlib.nullcontext()
        with translation.override("en"), reads:
            return super().dispatch(request, *args, **kwargs)
