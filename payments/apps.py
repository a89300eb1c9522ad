from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PaymentsConfig(AppConfig):
    name = "payments"
    verbose_name = _("Payments")

    def ready(self) -> None:
        # orders and rental ask, payments answers: neither imports payments.
        from orders import hooks
        from payments.admin import order_admin_payment_section
        from payments.health import chains_health
        from payments.notifications import order_payment_email_section
        from payments.refunds.services import order_refund_owed_record
        from payments.refunds.views import REFUND_SECTION, order_refund_section
        from payments.selectors import (
            order_funds_lost_hold,
            order_has_received_funds,
            order_payment_watch_passed,
        )
        from payments.services import order_invoices_close
        from payments.versions import order_payment_version_parts
        from payments.views import PAYMENT_SECTION, order_payment_section
        from rental.health import readiness_checks

        hooks.expiry_checks.register("payments", order_payment_watch_passed)
        hooks.provisioning_holds.register("payments", order_funds_lost_hold)
        hooks.funds_received_checks.register("payments", order_has_received_funds)
        hooks.page_sections.register(PAYMENT_SECTION, order_payment_section)
        hooks.page_sections.register(REFUND_SECTION, order_refund_section)
        hooks.refund_records.register("payments", order_refund_owed_record)
        hooks.cancel_records.register("payments", order_invoices_close)
        hooks.admin_sections.register("payments", order_admin_payment_section)
        hooks.email_sections.register(PAYMENT_SECTION, order_payment_email_section)
        hooks.order_version_parts.register("payments", order_payment_version_parts)
        readiness_checks.register("chain", chains_health)
