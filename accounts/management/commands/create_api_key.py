from django.core.management.base import BaseCommand, CommandError

from accounts.models import ApiKey, User
from accounts.services import ApiKeyLimit, api_key_create


class Command(BaseCommand):
    help = "Create an API key for an account. The key is printed alone on the last line."

    def add_arguments(self, parser):
        parser.add_argument("email", help="E-mail address of the account.")
        parser.add_argument("--name", default="Command line", help="A name to tell keys apart.")
        parser.add_argument(
            "--read-only", action="store_true", help="The key may read but not order or cancel."
        )

    def handle(self, *args, email: str, name: str, read_only: bool, **options):
        user = User.objects.filter(email__iexact=email.strip()).first()
        if user is None:
            raise CommandError(f"No account with the e-mail address {email!r}.")
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
