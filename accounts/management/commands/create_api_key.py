from django.core.management.base import BaseCommand, CommandError

from accounts.models import ApiKey, User
from accounts.services import ApiKeyLimit, account_create, api_key_create


class Command(BaseCommand):
    help = "Create an API key for an account. The key is printed alone on the last line."

    def add_arguments(self, parser):
        parser.add_argument("email", help="E-mail address of the account.")
        parser.add_argument("--name", default="Command line", help="A name to tell keys apart.")
        parser.add_argument(
            "--read-only", action="store_true", help="The key may read but not order or cancel."
        )
        parser.add_argument(
            "--create",
            action="store_true",
            help="Create the account when there is none with this e-mail (no password: set one "
            "through the password-reset page to use the website).",
        )
        parser.add_argument("--first-name", default="", help="For --create.")
        parser.add_argument("--last-name", default="", help="For --create.")

    def handle(self, *args, email: str, name: str, read_only: bool, create: bool, **options):
        user = User.objects.filter(email__iexact=email.strip()).first()
        if user is None and not create:
            raise CommandError(
                f"No account with the e-mail address {email!r}: sign up on the website first, "
                "or add --create --first-name ... --last-name ... to create it here."
            )
        if user is None:
            first_name, last_name = options["first_name"].strip(), options["last_name"].strip()
            if not first_name or not last_name:
                raise CommandError("--create needs --first-name and --last-name.")
            user = account_create(email=email, first_name=first_name, last_name=last_name)
            self.stdout.write(f"Created the account {user.email}.")
        scope = ApiKey.Scope.READ_ONLY if read_only else ApiKey.Scope.FULL
        try:
            api_key, raw_key = api_key_create(user=user, name=name, scope=scope)
        except ApiKeyLimit as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(
            f"Created {api_key.get_scope_display()} key {api_key.prefix}… for {user.email}. "
            "Store it now: it is not shown again."
        )
        self.stdout.write(raw_key)
