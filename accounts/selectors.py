from allauth.account.models import EmailAddress
from django.db.models import QuerySet

from accounts.models import SshKey, User


def user_email_verified(*, user: User) -> bool:
    """Whether the user proved they read the account's address (allauth's verification)."""
    return EmailAddress.objects.filter(user=user, email__iexact=user.email, verified=True).exists()


def ssh_keys_for_user(*, user: User) -> QuerySet[SshKey]:
    return SshKey.objects.filter(user=user)
