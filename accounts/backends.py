"""Authentication backends: Django's and allauth's, loading the signed-in account of each
request together with what the second-factor check reads (accounts.two_factor), in one query."""

from allauth.account.auth_backends import AuthenticationBackend
from django.contrib.auth.backends import ModelBackend
from django.db.models import Exists, OuterRef
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.models import User


def signed_in_account(*, user_id) -> User | None:
    """The account a session names, with `has_second_factor` (a confirmed authenticator)
    read along: what every signed-in request needs of it."""
    confirmed = TOTPDevice.objects.filter(user=OuterRef("pk"), confirmed=True)
    return User.objects.annotate(has_second_factor=Exists(confirmed)).filter(pk=user_id).first()


class AccountBackend(ModelBackend):
    """Passwords checked as Django checks them (the address is the username)."""

    def get_user(self, user_id):
        user = signed_in_account(user_id=user_id)
        return user if user is not None and self.user_can_authenticate(user) else None


class AllauthAccountBackend(AccountBackend, AuthenticationBackend):
    """allauth's login rules (log in by address, its verification settings)."""
