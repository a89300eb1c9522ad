"""Who is on the other end of a request, as far as the store needs to know."""

from allauth.account.adapter import get_adapter
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.utils.crypto import salted_hmac


def client_ip(request: HttpRequest) -> str:
    """The client's address, read as the login limits read it: REMOTE_ADDR, or the entry of
    X-Forwarded-For that TRUSTED_PROXY_COUNT proxies of ours point at. Empty if unknown."""
    try:
        return get_adapter(request).get_client_ip(request)
    except PermissionDenied:
        return ""


def client_ip_hash(request: HttpRequest) -> str:
    """A keyed hash of the client's address (HMAC with SECRET_KEY): it tells whether two
    records came from one address without keeping the address itself."""
    return salted_hmac("rental.client_ip_hash", client_ip(request), algorithm="sha256").hexdigest()
