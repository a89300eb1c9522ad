"""Authentication backends: Django's and allauth's, loading the signed-in account of each
request together with what the second-factor check reads (accounts.two_factor), in one query."""

from functools import cache

from allauth.account.auth_backends import AuthenticationBackend
from django.contrib.auth.backends import ModelBackend
from django.db.models import Exists, OuterRef, QuerySet
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.models import User


@cache
def _accounts_with_second_factor() -> QuerySet[User]:
    """Built once per process (never evaluated itself: each request filters a copy): resolving
    the subquery again at every request cost about as much as running the query."""
    confirmed = TOTPDevice.objects.filter(user=OuterRef("pk"), confirmed=True)
    return User.objects.annotate(has_second_factor=Exists(confirmed))


def signed_in_account(*, user_id) -> User | None:
    """The account a session names, with `has_second_factor` (a confirmed authenticator)
    read along: what every signed-in request needs of it."""
    try:
        return _accounts_with_second_factor().get(pk=user_id)
    except User.DoesNotExist:
        return None


class AccountBackend(ModelBackend):
    """Passwords checked as Django checks them (the address is the username)."""

    def get_user(self, user_id):
        user = signed_in_account(user_id=user_id)
        return user if user is not None and self.user_can_authenticate(user) else None


class AllauthAccountBackend(AccountBackend, AuthenticationBackend):
    """allauth's login rules (log in by address, its verification settings)."""
