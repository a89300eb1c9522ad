from allauth.account.models import EmailAddress

from accounts.models import User


def user_email_verified(*, user: User) -> bool:
    """Whether the user proved they read the account's address (allauth's verification)."""
    return EmailAddress.objects.filter(user=user, email__iexact=user.email, verified=True).exists()
