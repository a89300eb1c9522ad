import zoneinfo

from django.utils import timezone

from accounts.models import time_zone_names


class TimeZoneMiddleware:
    """Times in the signed-in customer's zone; a visitor sees the store's (TIME_ZONE)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        zone = getattr(request.user, "time_zone", "")
        # A zone the system no longer knows (tzdata update) falls back to the store's.
        if zone in time_zone_names():
            timezone.activate(zoneinfo.ZoneInfo(zone))
        else:
            timezone.deactivate()
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
