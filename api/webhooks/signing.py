"""`X-Rental-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<body>">`.

The timestamp is signed with the body so a receiver can refuse replays of old deliveries.
"""

import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"


def webhook_secret_new() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def signature(*, secret: str, body: bytes, timestamp: int) -> str:
    signed = f"{timestamp}.".encode() + body
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def signature_header(*, secret: str, body: bytes, timestamp: int) -> str:
    return f"t={timestamp},v1={signature(secret=secret, body=body, timestamp=timestamp)}"


def signature_valid(*, secret: str, body: bytes, header: str) -> bool:
    """What a receiver does (and what the tests do): recompute and compare in constant time."""
    try:
        fields = dict(part.split("=", 1) for part in header.split(","))
        timestamp = int(fields["t"])
    except (KeyError, ValueError):
        return False
    expected = signature(secret=secret, body=body, timestamp=timestamp)
    return hmac.compare_digest(expected, fields.get("v1", ""))
