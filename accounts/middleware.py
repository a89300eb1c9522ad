from urllib.parse import urlencode

from django.http import JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.two_factor import second_factor_on


class TimeZoneMiddleware:
    """Times in the signed-in customer's zone; a visitor sees the store's (TIME_ZONE)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        with timezone.override(getattr(request.user, "zone", None)):
            return self.get_response(request)


# Pages a session reaches before its second factor: the code form itself, and the way out.
# Health checks answer monitors, which have no session anyway.
SECOND_FACTOR_FREE_VIEWS = frozenset(
    {
        "accounts:two_factor_verify",
        "account_logout",
        "healthz",
        "healthz_live",
        "healthz_ready",
    }
)


# The keyword of api.authentication (accounts sits below api: it cannot import it).
API_KEY_KEYWORD = "api-key"


def _names_an_api_key(request) -> bool:
    """`Authorization: Api-Key ...`: the API authenticates the key alone. Any other header
    (Bearer, Basic...) leaves DRF to fall back on the session, so it is no way round the code."""
    words = request.headers.get("Authorization", "").split()
    return bool(words) and words[0].lower() == API_KEY_KEYWORD


class SecondFactorMiddleware:
    """After the password, a session passes the second factor before any page: staff
    before any admin page (those without one enrol first), customers who turned it on
    before any page at all. API calls with an API key never carry a session: unaffected.

    Runs after django_otp's OTPMiddleware (request.user.is_verified)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        user = request.user
        match = request.resolver_match
        if (
            not user.is_authenticated
            or user.is_verified()
            or match.view_name in SECOND_FACTOR_FREE_VIEWS
        ):
            return None
        enabled = second_factor_on(user)
        # Every page under /admin/: the admin site's own and the cockpit's dashboard beside it.
        staff_page = match.namespace == "admin" or match.route.startswith("admin/")
        if staff_page and user.is_staff and not enabled:
            target = "accounts:two_factor_enrol"
        elif enabled:
            target = "accounts:two_factor_verify"
        else:
            return None
        if match.namespace == "api":
            if _names_an_api_key(request):
                return None  # an API key (or none valid): DRF decides, not the session
            message = _("Enter your two-factor code on the site first, or use an API key.")
            body = {"error": {"code": "second_factor_required", "message": message, "fields": {}}}
            return JsonResponse(body, status=403)
        next_url = request.get_full_path() if request.method == "GET" else ""
        query = f"?{urlencode({'next': next_url})}" if next_url else ""
        return redirect(f"{reverse(target)}{query}")
