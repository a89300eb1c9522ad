from django.utils import timezone


class TimeZoneMiddleware:
    """Times in the signed-in customer's zone; a visitor sees the store's (TIME_ZONE)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        with timezone.override(getattr(request.user, "zone", None)):
            return self.get_response(request)
