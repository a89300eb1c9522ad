from rest_framework.permissions import SAFE_METHODS, BasePermission

from accounts.selectors import user_email_verified
from api.authentication import request_api_key


class HasApiScope(BasePermission):
    """Signed-in account; a read-only key may only read."""

    message = "This API key is read-only."

    def has_permission(self, request, view) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False
        api_key = request_api_key(request)
        return request.method in SAFE_METHODS or api_key is None or api_key.can_write


class HasVerifiedEmail(BasePermission):
    """Writes (orders, webhooks) need an account whose owner proved they read its address:
    a key made in an account squatted under someone else's address can do nothing."""

    message = (
        "Verify your account's e-mail address (log in on the website and enter the code we "
        "send) before placing orders or adding webhooks."
    )
    code = "email_not_verified"

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS or not request.user.is_authenticated:
            return True
        api_key = request_api_key(request)
        if api_key is not None:
            return api_key.user_email_verified  # type: ignore[attr-defined]  # read with the key
        return user_email_verified(user=request.user)
