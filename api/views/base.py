from django.utils import translation
from rest_framework.views import APIView

from accounts.services import api_key_touch
from api.authentication import request_api_key


class ApiView(APIView):
    """Every API view: answers in English whatever the site's language, so partners get the
    same messages from every endpoint (the codes in errors are the stable part)."""

    def dispatch(self, request, *args, **kwargs):
        with translation.override("en"):
            return super().dispatch(request, *args, **kwargs)

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        # Past its permissions and the throttle: a refused request did not use the key.
        api_key = request_api_key(request)
        if api_key is not None:
            api_key_touch(api_key=api_key)
