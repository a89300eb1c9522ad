from django.contrib import admin, messages
from django.contrib.admin.utils import flatten_fieldsets
from django.core.exceptions import PermissionDenied
from django.db.models import Prefetch
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from hosts.admin import OrderSlotInline
from hosts.provisioning import services as provisioning
from orders import services
from orders.forms import ActivateForm, MoveHostForm, OptionalReasonForm, ReasonForm
from orders.hooks import order_admin_sections
from orders.models import ALLOWED_TRANSITIONS, Order, OrderEvent, OrderEventDelivery, OrderStatus
from orders.queue import order_queue_cases
from orders.selectors import rental_totals
from orders.transitions import RENTAL_ONLY, TransitionNotAllowed
from rental.admin import AppendOnlyAdmin, queue_filter

S = OrderStatus


def _provision(order, user, data):
    return services.order_provisioning_start(order=order, actor_user=user)


def _activate(order, user, data):
    return services.order_activate(
        order=order,
        actor_user=user,
        host=data["host"],
        port=data["port"],
        user=data["user"],
        notes=data["notes"],
    )


def _complete(order, user, data):
    return services.order_complete(order=order, actor_user=user, reason=data["reason"])


def _cancel(order, user, data):
    return services.order_cancel(
        order=order, actor=OrderEvent.Actor.STAFF, actor_user=user, reason=data["reason"]
    )


def _refund(order, user, data):
    return services.order_refund(order=order, actor_user=user, reason=data["reason"])


def _retry(order, user, data):
    provisioning.order_provisioning_retry(order=order, actor_user=user)
    return True


def _move(order, user, data):
    provisioning.order_host_move(order=order, host=data["host"], actor_user=user)
    return True


def _confirm_environment(order, user, data):
    return provisioning.order_environment_confirm(order=order, actor_user=user)


def _moves_to(status):
    # An extension never goes to provisioning or active: its rental has the machines.
    return lambda order: (
        status in ALLOWED_TRANSITIONS[S(order.status)]
        and not (order.is_extension and status in RENTAL_ONLY)
    )


def _access_pending(order) -> bool:
    return (
        order.status in (S.PAID, S.PROVISIONING)
        and not order.access_host
        and not order.is_extension
    )


def _retryable(order) -> bool:
    return _access_pending(order) and provisioning.order_is_automatic(order=order)


def _environment_unconfirmed(order) -> bool:
    return (
        order.status == S.PROVISIONING
        and order.environment.requires_details
        and order.environment_confirmed_at is None
    )


# Staff actions: (label, offered when, form, service call). All go through the state machine.
STAFF_ACTIONS = {
    "provision": (
        _("Start provisioning"),
        _moves_to(S.PROVISIONING),
        OptionalReasonForm,
        _provision,
    ),
    "retry": (_("Retry automatic provisioning"), _retryable, OptionalReasonForm, _retry),
    "move": (_("Move to another host"), _access_pending, MoveHostForm, _move),
    "confirm_environment": (
        _("Confirm the custom environment"),
        _environment_unconfirmed,
        OptionalReasonForm,
        _confirm_environment,
    ),
    "activate": (_("Activate with access details"), _moves_to(S.ACTIVE), ActivateForm, _activate),
    "complete": (_("Complete"), _moves_to(S.COMPLETED), OptionalReasonForm, _complete),
    "cancel": (_("Cancel"), _moves_to(S.CANCELLED), ReasonForm, _cancel),
    "refund": (_("Refund"), _moves_to(S.REFUNDED), ReasonForm, _refund),
}


class HistoryIsReadOnly:
    """Order events are the audit trail: staff read them, nobody adds, edits or removes one."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReasonInWords:
    @admin.display(description=_("reason"))
    def reason_display(self, event: OrderEvent) -> str:
        return event.reason_display


# An event's columns, in the order's page (its inline) and in the events' list (with the order).
EVENT_COLUMNS = (
    "created_at",
    "kind",
    "old_status",
    "new_status",
    "actor",
    "actor_user",
    "reason_display",
)


class OrderEventInline(ReasonInWords, HistoryIsReadOnly, admin.TabularInline):
    model = OrderEvent
    extra = 0
    fields = readonly_fields = (*EVENT_COLUMNS, "undelivered")
    ordering = ["created_at", "id"]

    def get_queryset(self, request):
        pending = OrderEventDelivery.objects.filter(done_at__isnull=True)
        return (
            super().get_queryset(request).prefetch_related(Prefetch("deliveries", queryset=pending))
        )

    @admin.display(description=_("not delivered to"))
    def undelivered(self, event: OrderEvent) -> str:
        # What the staff's queue points at (events_undelivered): who failed, and why.
        if event.dispatched_at is None:
            return gettext("every channel: not dispatched yet")
        return (
            format_html_join(
                mark_safe("<br>"),
                "{} ({}): {}",
                (
                    (delivery.subscriber, delivery.attempts, delivery.last_error)
                    for delivery in event.deliveries.all()  # the pending ones, prefetched
                ),
            )
            or "—"
        )


@admin.register(Order)
class OrderAdmin(AppendOnlyAdmin):
    list_display = [
        "number",
        "user",
        "gpu",
        "quantity",
        "term_days",
        "total",
        "currency",
        "status",
        "rental_state",
        "created_at",
    ]
    actions = ["host_state_read"]
    list_filter = [
        queue_filter(lambda: order_queue_cases(now=timezone.now())),
        "status",
        "gpu",
        "term_days",
        ("created_at", admin.DateFieldListFilter),
    ]
    search_fields = ["number", "user__email", "user__last_name"]
    list_select_related = ["user", "gpu"]
    date_hierarchy = "created_at"
    inlines = [OrderSlotInline, OrderEventInline]
    fieldsets = [
        (None, {"fields": ["number", "user", "status", "extends", "staff_actions"]}),
        (
            _("Configuration"),
            {
                "fields": [
                    "gpu",
                    "environment",
                    "environment_details",
                    "quantity",
                    "term_days",
                    "ssh_keys",
                ]
            },
        ),
        (
            _("Price"),
            {
                "fields": [
                    "daily_rate",
                    "total",
                    "with_extensions",
                    "currency",
                    "payment_deadline",
                ]
            },
        ),
        # What the apps above orders record about it (orders.hooks, `order_admin_sections`).
        (_("Payments and documents"), {"fields": ["records_of_other_apps"]}),
        (
            _("Terms of sale accepted"),
            {
                "fields": ["terms_version", "terms_accepted_at", "terms_ip_hash"],
                "description": _(
                    "The version the customer accepted when ordering, with the express request "
                    "to start before the withdrawal period ends; the address is kept only as a "
                    "keyed hash. Empty for orders placed before the acceptance was recorded."
                ),
            },
        ),
        (
            _("Rental"),
            {
                "fields": [
                    "created_at",
                    "activated_at",
                    "ends_at",
                    "access_host",
                    "access_port",
                    "access_user",
                    "access_notes",
                    "access_mode",
                    "rental_container",
                    "rental_volume",
                    "jupyter_port",
                    "rental_state",
                    "host_state_read_at",
                    "provisioning_problem",
                    "environment_confirmed_at",
                    "access_revoked_at",
                    "data_purged_at",
                ]
            },
        ),
    ]

    # Staff change an order only through the actions, which go through the state machine.
    readonly_fields = flatten_fieldsets(fieldsets)

    def has_add_permission(self, request):
        return False  # orders are placed by customers or partners, through order_create

    @admin.display(description=_("Actions"))
    def staff_actions(self, obj: Order):
        links = [
            (reverse("admin:orders_order_action", args=[obj.pk, key]), label)
            for key, (label, offered, _form, _call) in STAFF_ACTIONS.items()
            if offered(obj)
        ]
        if not links:
            return "—"
        return format_html_join(
            " ", '<a class="button" href="{}">{}</a>', ((url, label) for url, label in links)
        )

    @admin.display(description=_("container · volume"))
    def rental_state(self, obj: Order):
        # What the hosts last said (stored by provisioning, revocation, purge and the action
        # below): rendering a list never asks a host.
        if not obj.host_state:
            return "—"
        return format_html_join(
            mark_safe("<br>"),
            "{}: {} · {}",
            (
                (name, state.get("container", "?"), state.get("volume", "?"))
                for name, state in sorted(obj.host_state.items())
            ),
        )

    @admin.action(description=_("Read the state on the host again"))
    def host_state_read(self, request, queryset):
        orders = [order for order in queryset if order.access_host]
        automatic = [order for order in orders if provisioning.order_is_automatic(order=order)]
        for order in automatic:
            provisioning.order_host_state_read(order=order)
        self.message_user(
            request,
            format_html(
                str(_("State read on the hosts of {} order(s); {} without automatic hosts left.")),
                len(automatic),
                len(queryset) - len(automatic),
            ),
        )

    @admin.display(description=_("with its extensions"))
    def with_extensions(self, obj: Order):
        # An extension names its rental (`extends`, a link); a rental lists its extensions.
        if obj.is_extension:
            return "—"
        totals = rental_totals(rental=obj)
        if not totals.extensions:
            return "—"
        return render_to_string(
            "admin/orders/order/_with_extensions.html", {"order": obj, "totals": totals}
        )

    @admin.display(description=_("Records"))
    def records_of_other_apps(self, obj: Order):
        sections = order_admin_sections(order=obj)
        if not sections:
            return "—"
        # Safe: each app's template escapes what it shows.
        return mark_safe(
            "".join(
                render_to_string(section.template, {"order": obj, **section.context})
                for section in sections
            )
        )

    def get_urls(self):
        return [
            path(
                "<int:object_id>/action/<slug:action>/",
                self.admin_site.admin_view(self.action_view),
                name="orders_order_action",
            ),
            *super().get_urls(),
        ]

    def action_view(self, request, object_id: int, action: str):
        if action not in STAFF_ACTIONS:
            raise PermissionDenied
        order = get_object_or_404(Order, pk=object_id)
        if not self.has_change_permission(request, order):
            raise PermissionDenied
        label, offered, form_class, call = STAFF_ACTIONS[action]
        if not offered(order):
            # Only the actions the order's status allows, as the page offers them.
            self.message_user(
                request,
                format_html(str(_("{}: not possible in this order's status.")), label),
                messages.ERROR,
            )
            return redirect("admin:orders_order_change", order.pk)
        # Activating by hand starts from what the order's own host says (staff check it).
        initial = provisioning.activation_initial(order=order) if action == "activate" else {}
        form = form_class(request.POST or None, initial=initial)
        if request.method == "POST" and form.is_valid():
            try:
                done = call(order, request.user, form.cleaned_data)
            except (
                services.OrderError,
                TransitionNotAllowed,
                provisioning.ProvisioningRefused,
            ) as error:
                self.message_user(request, str(error), messages.ERROR)
            else:
                if done:
                    self.message_user(request, format_html(str(_("{}: done.")), label))
                else:
                    self.message_user(
                        request,
                        _("The order changed meanwhile; nothing was done."),
                        messages.WARNING,
                    )
            return redirect("admin:orders_order_change", order.pk)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "original": order,
            "title": f"{label} · {order.number}",
            "form": form,
            "action_label": label,
        }
        return render(request, "admin/orders/order/action.html", context)


@admin.register(OrderEvent)
class OrderEventAdmin(ReasonInWords, HistoryIsReadOnly, AppendOnlyAdmin):
    list_display = ("order", *EVENT_COLUMNS)
    list_filter = ["kind", "actor", "new_status"]
    search_fields = ["order__number"]
    list_select_related = ["order", "actor_user"]
    fields = readonly_fields = ("order", *EVENT_COLUMNS, "data")
