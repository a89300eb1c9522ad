"""Where webhooks may go: https to public addresses only, so a customer cannot make the
store call its own network (metadata service, database, admin ports...)."""

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings


class WebhookTargetError(Exception):
    """The URL is not an acceptable webhook target; the message says why."""


def _allow_local() -> bool:
    # Development and tests only: http and loopback receivers.
    return settings.API_WEBHOOK_ALLOW_LOCAL_TARGETS


def _kind_refused(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if address.is_loopback:
        return None if _allow_local() else "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_private:
        return "a private address"
    if address.is_multicast or address.is_reserved or address.is_unspecified:
        return "a reserved address"
    if not address.is_global:
        return "a non-public address"
    return None


def _address_refused(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why `address` may not receive webhooks, or None.

    IPv6 forms that deliver to an IPv4 address (6to4 2002::/16, Teredo 2001::/32) are judged
    by that address first: the outer address looks public while packets reach the inner one.
    """
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    inner: list[ipaddress.IPv4Address] = []
    if isinstance(address, ipaddress.IPv6Address):
        if address.sixtofour:
            inner = [address.sixtofour]
        elif address.teredo:
            server, client = address.teredo
            inner = [client, server]
    for wrapped in inner:
        refused = _kind_refused(wrapped)
        if refused:
            return f"{refused} ({wrapped} inside {address})"
    refused = _kind_refused(address)
    return refused and f"{refused} ({address})"


def target_url_check(url: str) -> None:
    """Refuse URLs that are not https (http too in development) or that carry credentials."""
    parts = urlsplit(url)
    allowed = {"https", "http"} if _allow_local() else {"https"}
    if parts.scheme not in allowed:
        raise WebhookTargetError("The URL must start with https://.")
    if not parts.hostname:
        raise WebhookTargetError("The URL has no host.")
    if parts.username or parts.password:
        raise WebhookTargetError("Put no credentials in the URL; verify the signature instead.")
    try:
        port = parts.port
    except ValueError:  # urllib refuses ports above 65535 only when asked for them
        port = -1
    if port is not None and not 1 <= port <= 65535:
        raise WebhookTargetError("The port must be between 1 and 65535.")


def target_addresses_check(url: str) -> str:
    """Resolve the host and refuse it if any of its addresses is not public; returns the
    address to connect to.

    Run when the endpoint is created and again before every delivery, since DNS answers
    can change in between; a delivery then connects to the address checked here, so a
    second lookup cannot send it elsewhere (DNS rebinding).
    """
    target_url_check(url)
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        answers = socket.getaddrinfo(parts.hostname, port, proto=socket.IPPROTO_TCP)
    except (OSError, ValueError, UnicodeError):
        raise WebhookTargetError(f"The host {parts.hostname!r} cannot be resolved.") from None
    for _family, _type, _proto, _name, sockaddr in answers:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        refused = _address_refused(address)
        if refused:
            raise WebhookTargetError(f"The host {parts.hostname!r} resolves to {refused}.")
    return str(answers[0][4][0])
