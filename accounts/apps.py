from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AccountsConfig(AppConfig):
    name = "accounts"
    # allauth's "account" app is called "Accounts" in the admin already: one section each.
    verbose_name = _("Users and keys")

    def ready(self) -> None:
        from allauth.account.models import EmailAddress
        from django.db.models.signals import post_migrate, pre_migrate
        from django_otp.plugins.otp_totp.models import TOTPDevice

        from accounts.models import ApiKey, Session, SshKey, User
        from rental import changes

        # What a signed-in request reads of its account (accounts.sessions) and what the
        # account's pages show of it.
        changes.watch(User, changes.account_tag_sql(changes.column(User, "id")))
        changes.watch(Session, changes.account_tag_sql(changes.column(Session, "account")))
        changes.watch(TOTPDevice, changes.account_tag_sql(changes.column(TOTPDevice, "user")))
        changes.watch(SshKey, changes.account_tag_sql(changes.column(SshKey, "user")))
        # What an API request reads of its key (accounts.apikeycache): its last use, written
        # once a minute, is shown by no answer kept.
        changes.watch(
            ApiKey,
            changes.account_tag_sql(changes.column(ApiKey, "user")),
            unseen=("last_used_at",),
        )
        changes.watch(EmailAddress, changes.account_tag_sql(changes.column(EmailAddress, "user")))
        # Migrations run without the triggers; after them, the triggers of what the apps watch
        # are written again (every ready() has run by then). The lowest app connects it.
        pre_migrate.connect(changes.triggers_uninstall, sender=self, dispatch_uid="rental.changes")
        post_migrate.connect(changes.triggers_install, sender=self, dispatch_uid="rental.changes")
