"""Authentication backends: Django's and allauth's, loading the signed-in account of each
request together with what the second-factor check reads (accounts.two_factor), or taking it
from the session that brought it along (accounts.sessions)."""

from allauth.account.auth_backends import AuthenticationBackend
from django.contrib.auth.backends import ModelBackend

from accounts.account_rows import signed_in_account
from accounts.sessions import account_read_with_session


class AccountBackend(ModelBackend):
    """Passwords checked as Django checks them (the address is the username)."""

    def get_user(self, user_id):
        user = account_read_with_session(user_id) or signed_in_account(user_id=user_id)
        return user if user is not None and self.user_can_authenticate(user) else None


class AllauthAccountBackend(AccountBackend, AuthenticationBackend):
    """allauth's login rules (log in by address, its verification settings)."""
