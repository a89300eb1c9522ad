from datetime import datetime

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.forms import AdminPasswordChangeForm
from django.db import transaction
from django.utils.formats import date_format
from django.utils.timezone import localtime
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext, pgettext_lazy
from django_otp.plugins.otp_static.models import StaticDevice
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.models import AuthenticatorApp, RecoveryCodes, UnsentMail, User
from accounts.services import account_password_changed
from rental.admin import ReadOnlyAdmin


class PasswordSetByStaffForm(AdminPasswordChangeForm):
    """A password staff set (an account taken over, a customer locked out), or password login
    turned off, shuts the doors opened with the old one as the owner's own change does
    (accounts.adapter), in the same transaction, and the owner is told."""

    def save(self, commit=True):
        if not commit:
            return super().save(commit)
        with transaction.atomic():
            user = super().save(commit)
            account_password_changed(user=user, by_staff=True)
        return user


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    change_password_form = PasswordSetByStaffForm
    ordering = ["email"]
    list_display = ["email", "first_name", "last_name", "language", "is_staff", "date_joined"]
    list_filter = ["is_staff", "is_superuser", "is_active", "language"]
    search_fields = ["email", "first_name", "last_name"]
    fieldsets = [
        (None, {"fields": ["email", "password"]}),
        (_("Contact"), {"fields": ["first_name", "last_name", "language"]}),
        (
            # Not "Permissions": Django's own catalog, read first, keeps that word in French.
            _("Access rights"),
            {"fields": ["is_active", "is_staff", "is_superuser", "groups", "user_permissions"]},
        ),
        (_("Dates"), {"fields": ["last_login", "date_joined"]}),
    ]
    add_fieldsets = [
        (
            None,
            {
                "classes": ["wide"],
                "fields": ["email", "first_name", "last_name", "password1", "password2"],
            },
        ),
    ]


# --- API keys -----------------------------------------------------------------------------

from django import forms  # noqa: E402
from django.contrib import messages  # noqa: E402

from accounts.models import ApiKey  # noqa: E402
from accounts.services import (  # noqa: E402
    ApiKeyLimit,
    api_key_create,
    api_key_limit_reached,
    api_key_revoke,
)


class ApiKeyAdminForm(forms.ModelForm):
    def clean(self):
        cleaned = super().clean() or {}
        user = cleaned.get("user")
        # A clear refusal on the form; api_key_create checks again under the user's row lock.
        if self.instance.pk is None and user is not None and api_key_limit_reached(user=user):
            raise forms.ValidationError(ApiKeyLimit().message)
        return cleaned


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Staff create keys for a customer (shown once, in a message) and revoke them."""

    form = ApiKeyAdminForm
    list_display = ["name", "prefix", "user", "scope", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["scope", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "prefix", "user__email"]
    autocomplete_fields = ["user"]
    readonly_fields = ["prefix", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke_keys"]

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["user", "name", "scope"]
        return ["user", "name", "scope", *self.readonly_fields]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        # A key's owner and scope are part of what it was given for: revoke and recreate.
        return ["user", "scope", *self.readonly_fields]

    def save_model(self, request, obj, form, change):
        if change:
            super().save_model(request, obj, form, change)
            return
        created, raw_key = api_key_create(user=obj.user, name=obj.name, scope=obj.scope)
        for field in ApiKey._meta.concrete_fields:
            setattr(obj, field.attname, getattr(created, field.attname))
        obj._state.adding = False
        messages.warning(
            request,
            _("Copy the new key now, it is not shown again: %(key)s") % {"key": raw_key},
        )

    @admin.action(description=_("Revoke the selected keys"))
    def revoke_keys(self, request, queryset):
        revoked = sum(api_key_revoke(api_key=api_key) for api_key in queryset)
        messages.success(
            request,
            ngettext("%(count)d key revoked.", "%(count)d keys revoked.", revoked)
            % {"count": revoked},
        )


# --- SSH keys -----------------------------------------------------------------------------

from accounts.models import SshKey  # noqa: E402
from accounts.services import ssh_key_delete  # noqa: E402


@admin.register(SshKey)
class SshKeyAdmin(admin.ModelAdmin):
    """Staff see and may delete a customer's keys; keys are added by their owner only (the
    account page or the API parse and check them)."""

    list_display = ["name", "fingerprint", "user", "created_at"]
    search_fields = ["name", "fingerprint", "user__email"]
    readonly_fields = ["user", "name", "public_key", "fingerprint", "created_at"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def delete_model(self, request, obj):
        ssh_key_delete(ssh_key=obj)

    def delete_queryset(self, request, queryset):
        for ssh_key in queryset:
            ssh_key_delete(ssh_key=ssh_key)


def _when(moment: datetime | None) -> str:
    # The change page shows a method's answer as text: formatted here, as lists do.
    return date_format(localtime(moment), "SHORT_DATETIME_FORMAT") if moment else "—"


class SecondFactorDeviceAdmin(ReadOnlyAdmin):
    """Who has a second factor, read-only and in the staff's language (django-otp's own admin
    names its columns after its fields, in English). Devices are added on the security page,
    where their owner scans the code; a lost one goes with `manage.py otp_reset`. No key and
    no recovery code is ever shown."""

    list_display = fields = readonly_fields = (
        "owner",
        "device_name",
        "added",
        "last_used",
        "confirmed_device",
    )
    list_select_related = ["user"]
    search_fields = ["user__email"]

    @admin.display(description=_("account"))
    def owner(self, device) -> str:
        return device.user.email

    @admin.display(description=_("name"))
    def device_name(self, device) -> str:
        return device.name

    @admin.display(description=_("added"))
    def added(self, device) -> str:
        return _when(device.created_at)

    @admin.display(description=_("last used"))
    def last_used(self, device) -> str:
        return _when(device.last_used_at)

    @admin.display(description=pgettext_lazy("second factor", "confirmed"), boolean=True)
    def confirmed_device(self, device) -> bool:
        return device.confirmed


# Under the accounts' section and the staff's words, not django-otp's two English sections.
for otp_model, named_model in ((TOTPDevice, AuthenticatorApp), (StaticDevice, RecoveryCodes)):
    admin.site.unregister(otp_model)
    admin.site.register(named_model, SecondFactorDeviceAdmin)


@admin.register(UnsentMail)
class UnsentMailAdmin(ReadOnlyAdmin):
    """E-mails waiting for the broker (accounts.mail): how many, to whom, since when, and
    until when they are kept (then dropped unsent). Never their text: a reset link or a
    sign-up code is in it."""

    list_display = fields = readonly_fields = (
        "subject",
        "recipients",
        "waiting_since",
        "kept_until",
    )
    list_display_links = None

    @admin.display(description=_("subject"))
    def subject(self, unsent: UnsentMail) -> str:
        return str(unsent.message.get("subject", ""))

    @admin.display(description=_("recipients"))
    def recipients(self, unsent: UnsentMail) -> str:
        return ", ".join(unsent.message.get("to", []))

    @admin.display(description=_("waiting since"), ordering="created_at")
    def waiting_since(self, unsent: UnsentMail) -> str:
        return _when(unsent.created_at)

    @admin.display(description=_("kept until"), ordering="expires_at")
    def kept_until(self, unsent: UnsentMail) -> str:
        return _when(unsent.expires_at)
