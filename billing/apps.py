from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class BillingConfig(AppConfig):
    name = "billing"
    verbose_name = _("Invoices")

    def ready(self) -> None:
        # orders publishes, billing subscribes: orders never imports billing.
        from billing.admin import order_admin_billing_section
        from billing.notifications import order_event_invoice_attachment
        from billing.sections import BILLING_SECTION, order_billing_section
        from billing.services import billing_on_event
        from orders import events, hooks

        # In the claim's transaction: the invoice commits with the event's claim, once.
        events.with_claim.register("billing", billing_on_event)
        hooks.email_attachments.register("billing", order_event_invoice_attachment)
        hooks.admin_sections.register("billing", order_admin_billing_section)
        hooks.page_sections.register(BILLING_SECTION, order_billing_section)
