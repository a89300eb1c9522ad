"""The customer's acceptance of the terms of sale, given with each order (catalog.legal)."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.http import HttpRequest
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext_lazy as _

from catalog.legal import TERMS_OF_SALE
from orders.errors import OrderError
from rental.client import client_ip_hash


@dataclass(frozen=True)
class TermsAcceptance:
    """The current terms of sale accepted, with the express request to start at once."""

    version: str
    accepted_at: datetime
    ip_hash: str  # rental.client.client_ip_hash

    @classmethod
    def given_now(cls, request: HttpRequest) -> "TermsAcceptance":
        """Accepted by this request's client, now, in the version in force."""
        return cls(
            version=TERMS_OF_SALE.version,
            accepted_at=timezone.now(),
            ip_hash=client_ip_hash(request),
        )

    def as_session(self) -> dict[str, str]:
        return {
            "version": self.version,
            "accepted_at": self.accepted_at.isoformat(),
            "ip_hash": self.ip_hash,
        }

    @classmethod
    def from_session(cls, stored: Any) -> "TermsAcceptance | None":
        """What as_session() kept, or None for anything else (an older session)."""
        if not isinstance(stored, dict):
            return None
        accepted_at = parse_datetime(str(stored.get("accepted_at", "")))
        version, ip_hash = stored.get("version"), stored.get("ip_hash")
        if accepted_at is None or not isinstance(version, str) or not isinstance(ip_hash, str):
            return None
        return cls(version=version, accepted_at=accepted_at, ip_hash=ip_hash)


def terms_in_force(terms: TermsAcceptance | None) -> TermsAcceptance:
    """`terms` when they accept the version in force; else the order (or extension) is refused,
    naming the field `accept_terms`."""
    if terms is None:
        raise OrderError(
            _("Accept the terms of sale to order."),
            field="accept_terms",
            code="terms_not_accepted",
        )
    if terms.version != TERMS_OF_SALE.version:
        raise OrderError(
            _("The terms of sale have changed: read the new version and accept it to order."),
            field="accept_terms",
            code="terms_outdated",
        )
    return terms
