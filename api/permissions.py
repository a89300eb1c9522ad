from rest_framework.permissions import SAFE_METHODS, BasePermission

from api.authentication import request_api_key


class HasApiScope(BasePermission):
    """Signed-in account; a read-only key may only read."""

    message = "This API key is read-only."

    def has_permission(self, request, view) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False
        api_key = request_api_key(request)
        return request.method in SAFE_METHODS or api_key is None or api_key.can_write
