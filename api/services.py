"""Writes behind the order endpoints: an order (or an extension) and its invoice in one
transaction, once per idempotency key."""

import hashlib
import json
from collections.abc import Callable, Collection
from dataclasses import dataclass

from django.db import IntegrityError, transaction

from accounts.models import ApiKey, User
from api.models import IdempotencyRecord
from catalog.models import Environment, GpuModel
from orders.consent import TermsAcceptance
from orders.extensions import extension_create
from orders.models import Order, OrderEvent
from orders.services import order_create
from payments.models import Asset
from payments.services import invoice_issue

Actor = OrderEvent.Actor


class IdempotencyConflict(Exception):
    """The idempotency key was already used with another request body."""


@dataclass(frozen=True)
class OrderPlaced:
    order: Order
    # False when an earlier request with the same idempotency key had created it.
    created: bool


def order_request_hash(
    *,
    gpu: GpuModel,
    environment: Environment,
    environment_details: str,
    quantity: int,
    term_days: int,
    asset: Asset,
    ssh_key_ids: Collection[int] | None = None,
) -> str:
    """What identifies an order request, whatever the JSON's key order or spacing."""
    fields = {
        "gpu": gpu.slug,
        "environment": environment.slug,
        "environment_details": environment_details.strip(),
        "quantity": quantity,
        "term_days": term_days,
        "asset": asset.slug,
    }
    if ssh_key_ids is not None:
        # Only when given: a request without them hashes as it did before they existed.
        fields["ssh_keys"] = sorted(set(ssh_key_ids))
    canonical = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def extension_request_hash(*, rental: Order, term_days: int, asset: Asset) -> str:
    """What identifies an extension request: a key used for an order, or for another rental,
    is another request."""
    fields = {"extends": rental.number, "term_days": term_days, "asset": asset.slug}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def _replay(*, user: User, key: str, request_hash: str) -> Order:
    record = IdempotencyRecord.objects.select_related("order").get(user=user, key=key)
    if record.request_hash != request_hash:
        raise IdempotencyConflict
    assert record.order is not None  # set in the transaction that inserted the record
    return record.order


def api_order_place(
    *,
    user: User,
    api_key: ApiKey | None,
    gpu: GpuModel,
    environment: Environment,
    environment_details: str,
    quantity: int,
    term_days: int,
    asset: Asset,
    ssh_key_ids: Collection[int] | None = None,
    idempotency_key: str = "",
    terms: TermsAcceptance | None = None,
) -> OrderPlaced:
    """Create an order and its invoice in `asset`, or return the one this idempotency key made.

    `terms` is the customer's acceptance of the terms of sale, stored on the order
    (order_create refuses the order without it). Raises OrderError or PaymentError (nothing
    is kept then, the key included) and IdempotencyConflict.
    """
    request_hash = order_request_hash(
        gpu=gpu,
        environment=environment,
        environment_details=environment_details,
        quantity=quantity,
        term_days=term_days,
        asset=asset,
        ssh_key_ids=ssh_key_ids,
    )
    actor = _actor(api_key)
    return _place_once(
        user=user,
        api_key=api_key,
        idempotency_key=idempotency_key,
        request_hash=request_hash,
        asset=asset,
        create=lambda: order_create(
            user=user,
            gpu=gpu,
            environment=environment,
            environment_details=environment_details,
            quantity=quantity,
            term_days=term_days,
            ssh_key_ids=ssh_key_ids,
            actor=actor,
            terms=terms,
        ),
    )


def api_extension_place(
    *,
    user: User,
    api_key: ApiKey | None,
    rental: Order,
    term_days: int,
    asset: Asset,
    terms: TermsAcceptance | None,
    idempotency_key: str = "",
) -> OrderPlaced:
    """An extension of `rental` and its invoice in `asset`, or the one this key made, bought
    under `terms`. The same promises as api_order_place."""
    return _place_once(
        user=user,
        api_key=api_key,
        idempotency_key=idempotency_key,
        request_hash=extension_request_hash(rental=rental, term_days=term_days, asset=asset),
        asset=asset,
        create=lambda: extension_create(
            rental=rental, user=user, term_days=term_days, terms=terms, actor=_actor(api_key)
        ),
    )


def _actor(api_key: ApiKey | None) -> str:
    return Actor.PARTNER if api_key is not None else Actor.CUSTOMER


def _place_once(
    *,
    user: User,
    api_key: ApiKey | None,
    idempotency_key: str,
    request_hash: str,
    asset: Asset,
    create: Callable[[], Order],
) -> OrderPlaced:
    """`create()` an order and issue its invoice in `asset`, once per idempotency key of the
    account.

    The idempotency record is inserted first: a concurrent request with the same key blocks
    on the unique index until this transaction ends, then finds the record and the order.
    """
    with transaction.atomic():
        record = None
        if idempotency_key:
            try:
                with transaction.atomic():
                    record = IdempotencyRecord.objects.create(
                        user=user, api_key=api_key, key=idempotency_key, request_hash=request_hash
                    )
            except IntegrityError:
                order = _replay(user=user, key=idempotency_key, request_hash=request_hash)
                return OrderPlaced(order=order, created=False)
        order = create()
        invoice_issue(order=order, asset=asset)
        if record is not None:
            record.order = order
            record.save(update_fields=["order"])
    return OrderPlaced(order=order, created=True)
