"""Admin behaviour shared by the apps: the append-only records and the queue filters."""

from collections.abc import Callable, Sequence
from typing import Any

from django.contrib import admin
from django.utils.translation import gettext_lazy as _


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


class ReadOnlyAdmin(AppendOnlyAdmin):
    """Records nobody adds or edits in the admin either: made by their own flow (an invoice by
    its order's payment, a second factor by its owner's enrolment), only read here."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


def queue_filter(cases: Callable[[], Sequence[Any]]) -> type[admin.SimpleListFilter]:
    """The list filter behind the cockpit's "to handle" links (backoffice): `cases()` gives the
    cases (key, label, condition) of this list; `?queue=<key>` keeps the rows of that case."""

    class QueueFilter(admin.SimpleListFilter):
        title = _("to handle")
        parameter_name = "queue"

        def lookups(self, request, model_admin):
            return [(case.key, case.label) for case in cases()]

        def queryset(self, request, queryset):
            chosen = next((case for case in cases() if case.key == self.value()), None)
            return queryset if chosen is None else queryset.filter(chosen.condition)

    return QueueFilter
