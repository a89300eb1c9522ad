"""Provisioning writes: grant access when paid, revoke at the end, purge after the retention.

No row lock or transaction is held while a host answers: the order moves before and after
each SSH call, each move through the state machine (its conditional UPDATE settles races with
staff or the beat). Every step is an order event: the customer's timeline, the admin's and
the webhooks all see it."""

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TypeVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from accounts.models import SshKey, User
from catalog.images import cuda_supports, cuda_version, custom_environment_parse
from catalog.models import Environment, GpuModel
from hosts.models import Host
from hosts.provisioning.runtime import (
    AnswerRefused,
    Granted,
    RentalStart,
    access_fields,
    grant_answer,
    grant_input,
    host_state_record,
    state_after,
    status_answer,
)
from hosts.provisioning.ssh import HostScriptError, HostUnreachable, host_script_run
from hosts.slots import Slot, free_slots, slots_by_host, slots_hold, slots_release
from orders.extensions import rental_end
from orders.hooks import order_provisioning_hold
from orders.models import NO_SSH_KEY_PROBLEM, Order, OrderEvent, OrderStatus
from orders.queue import access_late
from orders.selectors import order_public_keys
from orders.transitions import order_event_record, order_transition
from rental.celery import enqueue_after_commit

S = OrderStatus
Actor = OrderEvent.Actor
Kind = OrderEvent.Kind
T = TypeVar("T")


class ProvisioningError(Exception):
    """A step failed in a way worth retrying, then worth flagging. `reason` (translatable,
    no internals) is what the customer's timeline and webhooks say; `detail` (addresses,
    the script's error) is for staff only."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail = reason, detail


class ProvisioningRefused(Exception):
    """Staff asked for something the order's state does not allow (message for staff)."""


def host_account(*, order: Order) -> str:
    """The rental's Unix account: the prefix and the order number, lower case, no dashes."""
    return settings.HOST_ACCOUNT_PREFIX + order.number.removeprefix("LG-").replace("-", "").lower()


def order_hosts(*, order: Order) -> list[tuple[Host, list[int]]]:
    """The hosts of the order with its GPU indices on each, from its current (or last) holds."""
    holds = list(order.slot_holds.select_related("host"))
    hosts = {hold.host.name: hold.host for hold in holds}
    return [(hosts[name], indices) for name, indices in slots_by_host(holds).items()]


def activation_initial(*, order: Order) -> dict:
    """Access details for staff activating by hand: the address and port of the order's first
    host, and the account name automatic provisioning would give the rental."""
    hosts = order_hosts(order=order)
    if not hosts:
        return {}
    host = hosts[0][0]
    return {"host": host.ssh_host, "port": host.ssh_port, "user": host_account(order=order)}


def order_is_automatic(*, order: Order) -> bool:
    hosts = order_hosts(order=order)
    return bool(hosts) and all(host.provisioning == Host.Provisioning.SSH for host, _ in hosts)


def order_access_late(*, order: Order) -> bool:
    """Paid, no access and no problem reported, past ACCESS_LATE_MINUTES (orders.queue says
    the same to staff)."""
    if order.status not in (S.PAID, S.PROVISIONING) or order.access_host or order.is_extension:
        return False
    return Order.objects.filter(access_late(now=timezone.now()), pk=order.pk).exists()


def _indices(indices: list[int]) -> str:
    return ",".join(map(str, indices))


def host_call(host: Host, args: list[str], stdin: str = "", timeout: float | None = None) -> dict:
    try:
        return host_script_run(host=host, args=args, stdin=stdin, timeout=timeout)
    except HostUnreachable as error:
        raise ProvisioningError(gettext_noop("host unreachable"), str(error)) from error
    except HostScriptError as error:
        raise ProvisioningError(gettext_noop("script error"), str(error)) from error


def order_provision(*, order: Order) -> bool:
    """Grant the order's access on each of its hosts and activate it (or wait for staff to
    confirm a custom environment). Safe to run again: the script is idempotent and a finished
    order is left alone. Raises ProvisioningError for the task to retry. True once done.
    An extension has no machines of its own: there is nothing to provision."""
    if order.is_extension:
        return False
    if order.status == S.PAID:
        hold = order_provisioning_hold(order=order)
        if hold:
            # A payment problem (flagged by payments) waits for staff, as with manual hosts.
            order_provisioning_flag(
                order=order, reason=gettext_noop("payment needs attention"), detail=str(hold)
            )
            return False
        if not order_transition(
            order=order, to=S.PROVISIONING, actor=Actor.SYSTEM, reason=gettext_noop("paid")
        ):
            return False
    if order.status != S.PROVISIONING or order.access_host:
        return order.status == S.ACTIVE or bool(order.access_host)
    keys = order_public_keys(order=order)
    if not keys:
        # Every key it named was deleted since (order_create refused it without one): retrying
        # cannot help. Staff see it at once and the customer is asked for a key.
        order_provisioning_flag(order=order, reason=gettext_noop(NO_SSH_KEY_PROBLEM))
        return False
    start = timezone.now()
    with transaction.atomic():
        end = rental_end(order=order, start=start)
    granted = hosts_grant(order=order, keys=keys, expires=end)
    for item in granted:
        order_event_record(
            order=order,
            kind=Kind.PROVISIONING,
            actor=Actor.SYSTEM,
            reason=gettext_noop("access granted on the host"),
            data=item.for_event(),
        )
    access = {
        **access_fields(granted=granted, account=host_account(order=order)),
        "provisioning_problem": "",
    }
    if order.environment.requires_details and order.environment_confirmed_at is None:
        # Ready on the host; a custom environment waits for staff to confirm it is installed.
        Order.objects.filter(pk=order.pk, status=S.PROVISIONING).update(**access)
        for name, value in access.items():
            setattr(order, name, value)
        return True
    return _activate(order=order, fields=access, actor=Actor.SYSTEM, actor_user=None, start=start)


def order_start(*, order: Order) -> RentalStart:
    """What the rental's container starts from: its environment's image, the customer's own,
    or for a requirements file the base environment's image (CUSTOM_REQUIREMENTS_BASE_ENVIRONMENT;
    none when it has none: a container host refuses the grant) with the file to install."""
    if not order.environment.requires_details:
        return RentalStart(order.environment.image)
    try:
        custom = custom_environment_parse(order.environment_details)
    except ValidationError as error:
        # Checked when it was ordered: a rule made stricter since leaves it to staff.
        raise ProvisioningError(
            gettext_noop("custom environment refused"), " ".join(error.messages)
        ) from error
    if custom.image:
        return RentalStart(custom.image)
    base = Environment.objects.filter(slug=settings.CUSTOM_REQUIREMENTS_BASE_ENVIRONMENT)
    image = base.values_list("image", flat=True).first() or ""
    return RentalStart(image, custom.requirements)


def hosts_grant(*, order: Order, keys: list[str], expires: datetime) -> list[Granted]:
    """Run `grant` on each host of the order with `keys`, valid until `expires` (the keys' own
    expiry on the host, should the revocation never reach it), and what a container host
    starts; the hosts' answers. Installing a requirements file takes the host longer."""
    user = host_account(order=order)
    expiry = expires.astimezone(UTC).strftime("%Y%m%d%H%M%SZ")
    start = order_start(order=order)
    stdin = grant_input(keys=keys, start=start)
    timeout = settings.PROVISIONING_REQUIREMENTS_TIMEOUT if start.requirements else None
    granted = []
    for host, indices in order_hosts(order=order):
        args = ["grant", user, _indices(indices), order.environment.slug, order.number, expiry]
        args += [start.image] if start.image else []
        answer = host_call(host, args, stdin=stdin, timeout=timeout)
        granted.append(Granted(host, indices, _read(partial(grant_answer, start=start), answer)))
    return granted


def order_access_refresh(*, order: Order, granted: list[Granted]) -> None:
    """A grant run again (keys changed, the end moved) answers the access anew: a host that
    moved the rental's gateway or JupyterLab is followed. Not once revoked: the revocation's
    state stands."""
    fields = access_fields(granted=granted, account=host_account(order=order))
    Order.objects.filter(pk=order.pk, access_revoked_at__isnull=True).update(**fields)


def _read(validate: Callable[[dict], T], answer: dict) -> T:
    try:
        return validate(answer)
    except AnswerRefused as error:
        raise ProvisioningError(gettext_noop("script error"), str(error)) from error


def _activate(
    *,
    order: Order,
    fields: dict,
    actor: str,
    actor_user: User | None,
    start: datetime | None = None,
) -> bool:
    # The term starts when access was granted (its keys expire with it), or now.
    now = start or timezone.now()
    with transaction.atomic():
        return order_transition(
            order=order,
            to=S.ACTIVE,
            actor=actor,
            actor_user=actor_user,
            fields={**fields, "activated_at": now, "ends_at": rental_end(order=order, start=now)},
        )


def order_environment_confirm(*, order: Order, actor_user: User) -> bool:
    """Staff confirm the custom environment is installed: the rental starts if its access is
    ready, else as soon as provisioning finishes."""
    if order.status != S.PROVISIONING:
        raise ProvisioningRefused(_("Only an order being prepared waits for this confirmation."))
    with transaction.atomic():
        now = timezone.now()
        Order.objects.filter(pk=order.pk).update(environment_confirmed_at=now)
        order.environment_confirmed_at = now
        order_event_record(
            order=order, kind=Kind.ENVIRONMENT_CONFIRMED, actor=Actor.STAFF, actor_user=actor_user
        )
        if order.access_host:
            return _activate(order=order, fields={}, actor=Actor.STAFF, actor_user=actor_user)
    return True


def order_provisioning_flag(
    *, order: Order, reason: str, detail: str = "", attempts: int = 0
) -> None:
    """Retries are spent (or provisioning may not start): staff see why (`detail` in the
    admin), the customer sees that the store is on it and the short `reason`."""
    problem = (f"{reason}: {detail}" if detail else reason)[:255]
    with transaction.atomic():
        Order.objects.filter(pk=order.pk).update(provisioning_problem=problem)
        order.provisioning_problem = problem
        data: dict[str, object] = {"attempts": attempts} if attempts else {}
        order_event_record(
            order=order,
            kind=Kind.PROVISIONING_FAILED,
            actor=Actor.SYSTEM,
            reason=reason,
            data={**data, "detail": detail} if detail else data,
        )


def order_provisioning_retry(*, order: Order, actor_user: User) -> None:
    """Staff retry: the problem is cleared and the provisioning task queued again."""
    if order.status not in (S.PAID, S.PROVISIONING) or not order_is_automatic(order=order):
        raise ProvisioningRefused(_("Only a paid order on automatic hosts can be retried."))
    with transaction.atomic():
        Order.objects.filter(pk=order.pk).update(provisioning_problem="")
        order.provisioning_problem = ""
        data = {}
        if not order.ssh_keys.exists():
            # Its keys were deleted: it names the account's keys now (those added since), as
            # an order does by default.
            order.ssh_keys.set(SshKey.objects.filter(user_id=order.user_id))
            data["ssh_keys"] = sorted(order.ssh_keys.values_list("pk", flat=True))
        order_event_record(
            order=order,
            kind=Kind.PROVISIONING,
            actor=Actor.STAFF,
            actor_user=actor_user,
            reason=gettext_noop("provisioning retried"),
            data=data,
        )
        enqueue_after_commit("hosts.tasks.order_provision_task", order.pk)


def order_host_move(*, order: Order, host: Host, actor_user: User) -> None:
    """Staff move an order whose access is not granted yet to another host (its own stays
    down): its slots are released and taken there under the GPU row lock, then provisioning
    runs again on an `ssh` host (on a manual one staff go on by hand).

    The order's row is locked before the GPU's (the one lock order, docs/ARCHITECTURE.md): an
    extension being created locks the order, then inserts a row pointing at the GPU."""
    if host.gpu_id != order.gpu_id or not host.is_active:
        raise ProvisioningRefused(_("Choose an active host of the order's GPU model."))
    required = order.environment.cuda_required
    if not cuda_supports(host.cuda_max, required):
        raise ProvisioningRefused(
            _("This host's driver does not support CUDA %(version)s, which the order needs.")
            % {"version": cuda_version(required)}
        )
    with transaction.atomic():
        locked = Order.objects.select_for_update().get(pk=order.pk)
        if locked.status not in (S.PAID, S.PROVISIONING) or locked.access_host:
            raise ProvisioningRefused(_("Only a paid order without access yet can change host."))
        GpuModel.objects.select_for_update().get(pk=order.gpu_id)
        before = slots_by_host(
            order.slot_holds.filter(released_at__isnull=True).select_related("host")
        )
        slots_release(order=order)
        free = free_slots(gpu=order.gpu, environment=order.environment)
        indices = free.get(host, [])[: order.quantity]
        if len(indices) < order.quantity:
            # The exception rolls the release back: the order keeps its slots.
            raise ProvisioningRefused(
                _("This host has %(free)d free GPUs, the order needs %(needed)d.")
                % {"free": len(indices), "needed": order.quantity}
            )
        slots_hold(order=order, slots=[Slot(host, index) for index in indices])
        Order.objects.filter(pk=order.pk).update(provisioning_problem="")
        order.provisioning_problem = ""
        order_event_record(
            order=order,
            kind=Kind.PROVISIONING,
            actor=Actor.STAFF,
            actor_user=actor_user,
            reason=gettext_noop("moved to another host"),
            data={"from": before, "to": {host.name: indices}},
        )
        if host.provisioning == Host.Provisioning.SSH:
            enqueue_after_commit("hosts.tasks.order_provision_task", order.pk)


def order_access_revoke(*, order: Order) -> bool:
    """At the end of the term (or an early stop, or a refund): the script revokes access on
    each host; the files stay RENTAL_DATA_RETENTION_DAYS, then rentals_purge removes them."""
    granted = bool(order.access_host) and order_is_automatic(order=order)
    if order.access_revoked_at is not None or not granted:
        return False
    user = host_account(order=order)
    states = {}
    for host, _indices in order_hosts(order=order):
        host_call(host, ["revoke", user])
        states[host.name] = state_after("revoke", order.access_mode)
    with transaction.atomic():
        now = timezone.now()
        if not Order.objects.filter(pk=order.pk, access_revoked_at__isnull=True).update(
            access_revoked_at=now
        ):
            return False
        order.access_revoked_at = now
        host_state_record(order=order, states=states)
        order_event_record(
            order=order,
            kind=Kind.ACCESS_REVOKED,
            actor=Actor.SYSTEM,
            reason=gettext_noop("keys removed, account locked, processes ended"),
            data={"user": user, "data_kept_days": settings.RENTAL_DATA_RETENTION_DAYS},
        )
    return True


def rentals_purge(*, now=None) -> int:
    """Remove the accounts, containers and files of revoked rentals whose term ended more
    than the retention ago."""
    now = now or timezone.now()
    # The date the order page and the end-of-term e-mail give (Order.data_purge_due).
    due = Order.objects.alias(ended=Coalesce("ends_at", "access_revoked_at")).filter(
        data_purged_at__isnull=True,
        access_revoked_at__isnull=False,
        ended__lte=now - timedelta(days=settings.RENTAL_DATA_RETENTION_DAYS),
    )
    purged = 0
    for order in due.iterator():
        user = host_account(order=order)
        states = {}
        try:
            for host, _indices in order_hosts(order=order):
                host_call(host, ["purge", user])
                states[host.name] = state_after("purge", order.access_mode)
        except ProvisioningError:
            continue  # the next hourly run tries again
        with transaction.atomic():
            if Order.objects.filter(pk=order.pk, data_purged_at__isnull=True).update(
                data_purged_at=now
            ):
                host_state_record(order=order, states=states)
                order_event_record(
                    order=order,
                    kind=Kind.DATA_PURGED,
                    actor=Actor.SYSTEM,
                    reason=gettext_noop("rental data removed from the host"),
                )
                purged += 1
    return purged


def order_host_state_read(*, order: Order) -> dict[str, dict]:
    """Staff ask each host of the order for its container and volume (`status`): stored on
    the order, so that the admin's pages show it without asking. A host that does not answer
    is stored as unknown, with the reason."""
    user = host_account(order=order)
    states = {}
    for host, _indices in order_hosts(order=order):
        try:
            answer = _read(status_answer, host_call(host, ["status", user]))
        except ProvisioningError as error:
            states[host.name] = {"container": "?", "volume": "?", "error": str(error)[:200]}
        else:
            states[host.name] = {"container": answer.container, "volume": answer.volume}
    host_state_record(order=order, states=states)
    return states
