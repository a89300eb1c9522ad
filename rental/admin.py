"""Admin behaviour shared by the apps: the append-only records."""

from django.contrib import admin


class AppendOnlyAdmin(admin.ModelAdmin):
    """Records the money trail and the timelines point to (orders, their events, invoices,
    transfers, claims, refunds): nobody deletes one, one by one or in bulk, not even a
    superuser, and a saved record's fields are read-only but for `editable_after_save`.
    They change through their services (cancel, refund, flag, mark paid) instead."""

    editable_after_save: tuple[str, ...] = ()

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def get_readonly_fields(self, request, obj=None):
        declared = list(super().get_readonly_fields(request, obj))
        if obj is None:
            return declared
        opts = self.model._meta
        # Fields that are not editable never reach a form: already immutable.
        fields = [f.name for f in (*opts.concrete_fields, *opts.many_to_many) if f.editable]
        frozen = [name for name in fields if name not in self.editable_after_save]
        return declared + [name for name in frozen if name not in declared]
