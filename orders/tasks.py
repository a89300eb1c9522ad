from celery import shared_task

from orders import notifications, services
from orders.models import OrderEvent


@shared_task(acks_late=True)
def order_event_dispatch_task(event_id: int) -> None:
    event = (
        OrderEvent.objects.select_related("order__user", "order__gpu").filter(pk=event_id).first()
    )
    if event is not None:
        notifications.order_event_dispatch(event=event)


# Beat tasks: each scans for due orders; two runs at once are safe (conditional updates).
@shared_task(acks_late=True)
def orders_expire_task() -> int:
    return services.orders_expire()


@shared_task(acks_late=True)
def orders_complete_task() -> int:
    return services.orders_complete()


@shared_task(acks_late=True)
def orders_warn_ending_task() -> int:
    return services.orders_warn_ending()
