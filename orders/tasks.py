from celery import shared_task

from orders import notifications
from orders.models import OrderEvent


@shared_task(acks_late=True)
def order_event_dispatch_task(event_id: int) -> None:
    event = (
        OrderEvent.objects.select_related("order__user", "order__gpu").filter(pk=event_id).first()
    )
    if event is not None:
        notifications.order_event_dispatch(event=event)
