from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AccountsConfig(AppConfig):
    name = "accounts"
    # allauth's "account" app is called "Accounts" in the admin already: one section each.
    verbose_name = _("Users and keys")
