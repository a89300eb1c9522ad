"""The e-mail channel of order events: subscribed in settings.HOOKS (orders.events),
called by the dispatch after the event's claim commits, so each e-mail goes at most once."""

from accounts.mail import user_mail
from orders.extensions import SHORTENED
from orders.hooks import order_email_attachments, order_email_sections
from orders.models import OrderEvent, OrderStatus
from orders.reminders import ENDING_SOON

# E-mail template per status reached.
STATUS_EMAILS: dict[str, str] = {
    OrderStatus.AWAITING_PAYMENT: "received",
    OrderStatus.PAID: "paid",
    OrderStatus.ACTIVE: "active",
    OrderStatus.COMPLETED: "completed",
    OrderStatus.EXPIRED: "expired",
}
# An extension has its own wording; once paid, the rental's `extended` e-mail says so (its
# paid status alone sends nothing: there are no machines to prepare).
EXTENSION_STATUS_EMAILS: dict[str, str] = {
    OrderStatus.AWAITING_PAYMENT: "extension_received",
    OrderStatus.EXPIRED: "extension_expired",
}
# Notes that are e-mailed, by their `notice` (the template's name): the beat's reminder before
# a rental's end, and the earlier end after a refunded extension (orders.extensions).
NOTICE_EMAILS = (ENDING_SOON, SHORTENED)
# E-mail template per event kind: a refund owed asks for an address, a refund done says so.
KIND_EMAILS: dict[str, str] = {
    OrderEvent.Kind.REFUND_OWED: "refund_owed",
    OrderEvent.Kind.REFUND_CONFIRMED: "refund_confirmed",
    OrderEvent.Kind.PROVISIONING_FAILED: "provisioning_delayed",
    OrderEvent.Kind.EXTENDED: "extended",
}


def _email_for(event: OrderEvent) -> str | None:
    if event.kind == OrderEvent.Kind.STATUS:
        if event.order.is_extension:
            return EXTENSION_STATUS_EMAILS.get(event.new_status)
        return STATUS_EMAILS.get(event.new_status)
    if event.kind == OrderEvent.Kind.NOTE and event.data.get("notice") in NOTICE_EMAILS:
        return event.data["notice"]
    return KIND_EMAILS.get(event.kind)


def order_event_email(*, event: OrderEvent) -> None:
    template = _email_for(event)
    if template:
        # Already in a worker (the event's dispatch task): sent here, not queued again.
        order = event.order
        context = {"order": order, "event": event, "sections": order_email_sections(order=order)}
        message = user_mail(user=order.user, template=f"orders/email/{template}", context=context)
        for filename, content, mimetype in order_email_attachments(event=event):
            message.attach(filename, content, mimetype)
        message.send()
