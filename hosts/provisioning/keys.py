"""The SSH keys of an order after it is placed: the customer attaches or removes keys on an
order not finished yet (order page, `PATCH /api/v1/orders/{n}/`), and its hosts get the new set
within seconds (order_keys_sync on the `hosts` queue). Extensions and rental-end moves install
the keys again with the new expiry."""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from accounts.models import User
from hosts.provisioning.services import (
    host_account,
    host_call,
    hosts_grant,
    order_access_refresh,
    order_hosts,
    order_is_automatic,
)
from orders.errors import OrderError
from orders.extensions import rental_end
from orders.models import Order, OrderEvent, OrderStatus
from orders.selectors import order_public_keys
from orders.services import order_keys_required, order_ssh_keys_chosen
from orders.transitions import order_event_record
from rental.celery import enqueue_after_commit

S = OrderStatus
Kind = OrderEvent.Kind
# Before the end of the rental; afterwards the access is revoked and keys change nothing.
KEYS_EDITABLE = (S.AWAITING_PAYMENT, S.CONFIRMING, S.PAID, S.PROVISIONING, S.ACTIVE)
ACCESS_RUNNING = (S.PROVISIONING, S.ACTIVE)


def order_ssh_keys_set(*, order: Order, user: User, ssh_key_ids: list[int], actor: str) -> bool:
    """The order names the keys `ssh_key_ids` of its owner `user` from now on; False when it
    already did. Raises OrderError (field `ssh_keys`) for a finished order or an extension,
    a key of someone else, or no key left where its machines need one."""
    with transaction.atomic():
        locked = Order.objects.select_for_update().get(pk=order.pk)
        if locked.is_extension or locked.status not in KEYS_EDITABLE:
            raise OrderError(
                _("The SSH keys of this order can no longer change."),
                field="ssh_keys",
                code="ssh_keys_frozen",
            )
        keys = order_ssh_keys_chosen(user=user, ssh_key_ids=ssh_key_ids)
        if not keys and order_keys_required(order=locked):
            raise OrderError(
                _("Keep at least one SSH key: its machines are reached with it."),
                field="ssh_keys",
                code="ssh_key_required",
            )
        if set(locked.ssh_keys.values_list("pk", flat=True)) == {key.pk for key in keys}:
            return False
        locked.ssh_keys.set(keys)
        order_event_record(
            order=locked,
            kind=Kind.PROVISIONING,
            actor=actor,
            actor_user=user,
            reason=gettext_noop("SSH keys changed"),
            data={"ssh_keys": [key.fingerprint for key in keys]},
        )
        if locked.lacks_ssh_key:
            # Provisioning stopped for want of a key: it goes on with this one.
            Order.objects.filter(pk=locked.pk).update(provisioning_problem="")
            enqueue_after_commit("hosts.tasks.order_provision_task", locked.pk)
        elif _has_access(locked):
            enqueue_after_commit("hosts.tasks.order_keys_sync_task", locked.pk)
    return True


def _has_access(order: Order) -> bool:
    return (
        order.status in ACCESS_RUNNING
        and bool(order.access_host)
        and order.access_revoked_at is None
        and order_is_automatic(order=order)
    )


def order_keys_sync(*, order: Order) -> bool:
    """Install the order's current keys on its hosts, valid until its end. Keys changed while
    a host answered are installed again, and a rental that ended meanwhile is revoked again:
    two syncs at once, or a sync beside the revocation, end with the last word in force."""
    if not _has_access(order):
        return False
    installed: list[str] = []
    while (keys := order_public_keys(order=order)) != installed:
        if not keys:
            return False
        with transaction.atomic():
            end = order.ends_at or rental_end(order=order, start=timezone.now())
        order_access_refresh(order=order, granted=hosts_grant(order=order, keys=keys, expires=end))
        installed = keys
        order = Order.objects.select_related("environment").get(pk=order.pk)
    if not _has_access(order):
        for host, _indices in order_hosts(order=order):
            host_call(host, ["revoke", host_account(order=order)])
        return False
    order_event_record(
        order=order,
        kind=Kind.PROVISIONING,
        actor=OrderEvent.Actor.SYSTEM,
        reason=gettext_noop("SSH keys installed on the host"),
        data={"keys": len(installed), "ends_at": order.ends_at and order.ends_at.isoformat()},
    )
    return True
