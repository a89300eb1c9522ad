from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PaymentsConfig(AppConfig):
    name = "payments"
    verbose_name = _("Payments")

    def ready(self) -> None:
        # orders asks, payments answers: orders never imports payments for these.
        from orders import hooks
        from payments.selectors import order_funds_lost_hold, order_payment_watch_passed

        hooks.expiry_check_register(order_payment_watch_passed)
        hooks.provisioning_hold_register(order_funds_lost_hold)
