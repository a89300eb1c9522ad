from rest_framework import authentication, exceptions

from accounts.models import ApiKey
from api.selectors import api_key_for_raw_key

KEYWORD = "Api-Key"


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Api-Key <key>`: the request acts as the key's account.

    The key is read from the database on every request (one indexed query with its account):
    a key revoked, or an account deactivated, is refused at its next request by every
    process. `request.auth` is the ApiKey, so permissions can read its scope and the
    throttle its hash; its last use is written once the request passed both (api.views.base).
    """

    def authenticate(self, request):
        try:
            header = authentication.get_authorization_header(request).decode()
        except UnicodeError:
            raise exceptions.AuthenticationFailed("Malformed Authorization header.") from None
        parts = header.split()
        if not parts or parts[0].lower() != KEYWORD.lower():
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Use `Authorization: Api-Key <key>`.")
        api_key = api_key_for_raw_key(raw_key=parts[1])
        if api_key is None or not api_key.is_active or not api_key.user.is_active:
            raise exceptions.AuthenticationFailed("Unknown or revoked API key.")
        return api_key.user, api_key

    def authenticate_header(self, request) -> str:
        return f'{KEYWORD} realm="api"'


def request_api_key(request) -> ApiKey | None:
    """The key a request was authenticated with; None for a browser session."""
    return request.auth if isinstance(request.auth, ApiKey) else None
