from django.contrib import admin, messages
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from api.models import WebhookDelivery, WebhookEndpoint
from api.webhooks.pausing import webhook_endpoint_resume
from api.webhooks.services import webhook_delivery_redeliver


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    """Customers manage their endpoints through the API; staff look, and may remove one."""

    list_display = ["url", "user", "created_at", "failures", "paused_at"]
    list_filter = [("paused_at", admin.EmptyFieldListFilter)]
    search_fields = ["url", "user__email"]
    readonly_fields = ["user", "url", "events", "created_at", "failures", "paused_at"]
    exclude = ["secret", "busy_until"]
    actions = ["resume"]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.action(description=_("Resume the selected paused endpoints"))
    def resume(self, request, queryset):
        for endpoint in queryset:
            webhook_endpoint_resume(endpoint=endpoint)
        messages.success(request, _("%(count)d endpoints resumed.") % {"count": queryset.count()})


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "event_type",
        "endpoint",
        "status",
        "attempts",
        "last_status_code",
        "next_attempt_at",
        "created_at",
    ]
    list_filter = ["status", "event_type"]
    search_fields = ["id", "endpoint__url", "endpoint__user__email"]
    list_select_related = ["endpoint"]
    actions = ["redeliver"]

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in WebhookDelivery._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.action(description=_("Send the selected deliveries again"))
    def redeliver(self, request, queryset):
        count = 0
        for delivery in queryset:
            webhook_delivery_redeliver(delivery=delivery)
            count += 1
        messages.success(
            request,
            ngettext("%(count)d delivery queued.", "%(count)d deliveries queued.", count)
            % {"count": count},
        )
