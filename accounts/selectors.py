from allauth.account.models import EmailAddress
from django.db.models import Exists, OuterRef, QuerySet

from accounts.models import SshKey, User


def _verified_addresses(*, user, email) -> QuerySet[EmailAddress]:
    return EmailAddress.objects.filter(user=user, email__iexact=email, verified=True)


def user_email_verified(*, user: User) -> bool:
    """Whether the user proved they read the account's address (allauth's verification)."""
    return _verified_addresses(user=user, email=user.email).exists()


def email_verified_subquery(*, user_path: str) -> Exists:
    """user_email_verified as an annotation, for the account at `user_path` of the outer
    query: read along with it rather than in a query of its own."""
    return Exists(
        _verified_addresses(user=OuterRef(user_path), email=OuterRef(f"{user_path}__email"))
    )


def ssh_keys_for_user(*, user: User) -> QuerySet[SshKey]:
    return SshKey.objects.filter(user=user)
