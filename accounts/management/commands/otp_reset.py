import getpass

from django.core.management.base import BaseCommand, CommandError

from accounts.models import User
from accounts.two_factor import two_factor_reset


class Command(BaseCommand):
    help = (
        "Lost device: remove an account's authenticator and recovery codes. Its next login "
        "asks for no code (staff enrol again before the admin opens). Logged with who and when."
    )

    def add_arguments(self, parser):
        parser.add_argument("email", help="E-mail address of the account.")

    def handle(self, *args, email: str, **options):
        user = User.objects.filter(email__iexact=email.strip()).first()
        if user is None:
            raise CommandError(f"No account with the e-mail address {email!r}.")
        removed = two_factor_reset(user=user, operator=getpass.getuser())
        if not removed.authenticators and not removed.recovery_codes:
            self.stdout.write(f"{user.email} had no second factor: nothing removed.")
            return
        self.stdout.write(
            f"Removed the second factor of {user.email}: {removed.authenticators} "
            f"authenticator(s), {removed.recovery_codes} recovery code(s) left unused. "
            + (
                "At the next admin page they enrol a new authenticator."
                if user.is_staff
                else "They log in with their password alone until they turn it on again."
            )
        )
