"""Extensions ("Prolonger"): more days for a paid rental, paid like an order. Paid before the
end, the end moves on the same slots with the same access; unpaid, the extension expires and
the rental ends as planned; money arriving after that is owed back."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.conf import settings
from django.core import mail
from django.utils import timezone

from api.models import WebhookDelivery
from api.webhooks.services import webhook_endpoint_create
from catalog.legal import TERMS_OF_SALE
from orders.extensions import ExtensionLapsed, ExtensionPending, extension_create
from orders.models import Order, OrderEvent, OrderStatus
from orders.services import (
    OrderError,
    order_activate,
    order_provisioning_start,
    order_refund,
    orders_complete,
    orders_expire,
)
from orders.stock import order_paying_transition
from orders.transitions import TransitionNotAllowed, order_transition
from payments.ledger import invoice_ledger
from payments.refunds.models import Refund
from payments.services import PaymentError, invoice_issue
from tests.factories import TERMS_TICKED, OrderFactory, accepted_terms
from tests.payments.helpers import deadline_at, reload
from tests.payments.test_lock_order import race

S = OrderStatus
Actor = OrderEvent.Actor
Kind = OrderEvent.Kind
ACCESS = {"access_host": "gpu-12.example.net", "access_port": 2201, "access_user": "lg7kq2"}


def _active(customer, gpu, *, left: timedelta, quantity: int = 2) -> Order:
    now = timezone.now()
    return OrderFactory(
        user=customer,
        gpu=gpu,
        quantity=quantity,
        status=S.ACTIVE,
        activated_at=now - timedelta(days=1),
        ends_at=now + left,
        **ACCESS,
    )


def _holds(order: Order) -> set[tuple]:
    return set(order.slot_holds.filter(released_at__isnull=True).values_list("pk", "host", "index"))


def _pay(extension: Order) -> None:
    """The extension's money is confirmed (what the settlement does, without a chain)."""
    for step in (S.CONFIRMING, S.PAID):
        assert order_paying_transition(order=extension, to=step, actor=Actor.SYSTEM)


@pytest.mark.chain
def test_an_extension_paid_on_chain_before_the_end_moves_the_end_on_the_same_slots(
    devnet, customer, gpu, receiver, django_capture_on_commit_callbacks
):
    webhook_endpoint_create(user=customer, url=f"{receiver.url}/hook", events=["order.extended"])
    rental = _active(customer, gpu, left=timedelta(days=2))
    Order.objects.filter(pk=rental.pk).update(ending_notice_hours=24)
    end, holds = rental.ends_at, _holds(rental)
    extension = extension_create(rental=rental, user=customer, term_days=7, terms=accepted_terms())
    assert (extension.extends, extension.quantity, extension.daily_rate) == (rental, 2, 72)
    assert extension.total == Decimal("1008.00")  # today's 7-day rate x 7 days x 2 GPUs
    assert not extension.slot_holds.exists() and not extension.ssh_keys.exists()
    invoice = invoice_issue(order=extension, asset=devnet.usdc)

    with django_capture_on_commit_callbacks(execute=True):
        devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
        devnet.mine(3)
        devnet.scan()

    invoice, extension = reload(invoice)
    rental.refresh_from_db()
    assert extension.status == S.PAID and invoice.status == invoice.Status.PAID
    assert not invoice.flags
    assert rental.status == S.ACTIVE and rental.ends_at == end + timedelta(days=7)
    assert _holds(rental) == holds
    assert {name: getattr(rental, name) for name in ACCESS} == ACCESS
    assert rental.ending_notice_hours is None  # the reminders start again from the new end
    extended = rental.events.get(kind=Kind.EXTENDED)
    assert extended.data == {
        "extension": extension.number,
        "days": 7,
        "old_end": end.isoformat(),
        "new_end": (end + timedelta(days=7)).isoformat(),
    }
    delivery = WebhookDelivery.objects.get(event_type="order.extended")
    assert delivery.payload["order"]["number"] == rental.number
    assert delivery.payload["order"]["extensions"] == [extension.number]
    assert [message.subject for message in mail.outbox] == [f"Location {rental.number} prolongée"]
    assert "se termine désormais le" in mail.outbox[0].body


def test_an_extension_paid_before_activation_adds_its_days_to_the_term(customer, gpu, staff):
    rental = OrderFactory(user=customer, gpu=gpu, status=S.PAID)
    extension = extension_create(rental=rental, user=customer, term_days=3, terms=accepted_terms())
    _pay(extension)
    assert rental.events.get(kind=Kind.EXTENDED).data["old_end"] is None

    assert order_provisioning_start(order=rental, actor_user=staff)
    assert order_activate(
        order=rental, actor_user=staff, host="gpu-1.example.net", port=22, user="lg"
    )
    rental.refresh_from_db()
    assert rental.ends_at == rental.activated_at + timedelta(days=7 + 3)


def test_an_extension_has_no_machines_of_its_own(customer, gpu, staff):
    rental = OrderFactory(user=customer, gpu=gpu, status=S.PAID)
    extension = extension_create(rental=rental, user=customer, term_days=3, terms=accepted_terms())
    _pay(extension)
    with pytest.raises(OrderError) as refusal:
        order_provisioning_start(order=extension, actor_user=staff)
    assert refusal.value.code == "is_extension"
    with pytest.raises(TransitionNotAllowed):
        order_transition(order=extension, to=S.PROVISIONING, actor=Actor.STAFF)


def test_an_unpaid_extension_expires_at_the_end_and_the_rental_ends_as_planned(customer, gpu):
    rental = _active(customer, gpu, left=timedelta(minutes=20))
    end = rental.ends_at
    extension = extension_create(rental=rental, user=customer, term_days=7, terms=accepted_terms())
    assert extension.payment_deadline == end  # the window is cut at the rental's end
    after = end + timedelta(seconds=1)

    # Money for it may still be on its way: the rental waits for the extension's verdict.
    assert orders_complete(now=after) == 0
    assert orders_expire(now=after) == 1
    assert orders_complete(now=after) == 1
    extension.refresh_from_db()
    rental.refresh_from_db()
    assert extension.status == S.EXPIRED
    assert rental.status == S.COMPLETED and rental.ends_at == end
    assert not rental.events.filter(kind=Kind.EXTENDED).exists()


def test_the_rental_does_not_end_while_its_extension_is_confirming(customer, gpu):
    rental = _active(customer, gpu, left=timedelta(minutes=20))
    extension = extension_create(rental=rental, user=customer, term_days=3, terms=accepted_terms())
    assert order_paying_transition(order=extension, to=S.CONFIRMING, actor=Actor.SYSTEM)
    after = rental.ends_at + timedelta(seconds=1)
    assert orders_complete(now=after) == 0

    assert order_paying_transition(order=extension, to=S.PAID, actor=Actor.SYSTEM)
    rental.refresh_from_db()
    assert rental.status == S.ACTIVE and rental.ends_at > after


@pytest.mark.chain
def test_money_after_the_extension_expired_is_flagged_and_owed_back(
    devnet, customer, gpu, settings
):
    settings.PAYMENTS_EXPIRY_SCAN_MARGIN = timedelta(seconds=10)
    rental = _active(customer, gpu, left=timedelta(minutes=20))
    extension = extension_create(rental=rental, user=customer, term_days=7, terms=accepted_terms())
    invoice = invoice_issue(order=extension, asset=devnet.usdc)
    devnet.scan()
    # The rental ends (and the extension's window closes) at the chain's present.
    end = devnet.block_time()
    deadline_at(invoice, end)
    Order.objects.filter(pk=rental.pk).update(ends_at=end)
    devnet.mine_later(12)
    devnet.scan()
    later = end + timedelta(seconds=20)
    assert orders_expire(now=later) == 1
    assert orders_complete(now=later) == 1

    devnet.pay_token(invoice.deposit_address, int(invoice.amount_due))
    devnet.mine(3)
    devnet.scan()

    invoice, extension = reload(invoice)
    rental.refresh_from_db()
    assert extension.status == S.EXPIRED and rental.status == S.COMPLETED
    assert rental.ends_at == end
    assert invoice.review
    assert (
        invoice_ledger(invoice=invoice).owed(invoice=invoice, order=extension) == invoice.amount_due
    )
    flagged = extension.events.get(kind=Kind.PAYMENT_FLAGGED, data__flag="review")
    assert flagged.reason == ExtensionLapsed.reason
    assert Refund.objects.get(invoice=invoice).amount == invoice.amount_due
    with pytest.raises(PaymentError):
        invoice_issue(order=extension, asset=devnet.usdc)


@pytest.mark.parametrize("status", [S.AWAITING_PAYMENT, S.EXPIRED, S.COMPLETED, S.REFUNDED])
def test_only_a_paid_provisioning_or_active_rental_is_extended(customer, gpu, status):
    rental = OrderFactory(user=customer, gpu=gpu, status=status)
    with pytest.raises(OrderError) as refusal:
        extension_create(rental=rental, user=customer, term_days=7, terms=accepted_terms())
    assert refusal.value.code == "not_extendable"


def test_an_extension_is_not_extended(customer, gpu):
    rental = OrderFactory(user=customer, gpu=gpu, status=S.PAID)
    extension = extension_create(rental=rental, user=customer, term_days=7, terms=accepted_terms())
    _pay(extension)
    with pytest.raises(OrderError) as refusal:
        extension_create(rental=extension, user=customer, term_days=7, terms=accepted_terms())
    assert refusal.value.code == "is_extension"


def test_a_second_extension_waits_for_the_first_to_be_paid(customer, gpu):
    rental = _active(customer, gpu, left=timedelta(days=1))
    first = extension_create(rental=rental, user=customer, term_days=3, terms=accepted_terms())
    with pytest.raises(ExtensionPending) as refusal:
        extension_create(rental=rental, user=customer, term_days=7, terms=accepted_terms())
    assert refusal.value.extension == first and first.number in str(refusal.value.message)
    _pay(first)
    assert (
        extension_create(
            rental=rental, user=customer, term_days=7, terms=accepted_terms()
        ).term_days
        == 7
    )


def test_a_rental_ending_within_15_minutes_is_not_extended(customer, gpu):
    rental = _active(customer, gpu, left=timedelta(minutes=14))
    with pytest.raises(OrderError) as refusal:
        extension_create(rental=rental, user=customer, term_days=3, terms=accepted_terms())
    assert refusal.value.code == "ends_soon"


def test_someone_elses_rental_and_a_bad_term_are_refused(customer, outsider, gpu):
    rental = _active(customer, gpu, left=timedelta(days=1))
    with pytest.raises(OrderError) as refusal:
        extension_create(rental=rental, user=outsider, term_days=3, terms=accepted_terms())
    assert refusal.value.code == "not_found"
    with pytest.raises(OrderError) as refusal:
        extension_create(rental=rental, user=customer, term_days=5, terms=accepted_terms())
    assert refusal.value.field == "term_days"
    assert not rental.extensions.exists()


@pytest.mark.django_db(transaction=True)
def test_two_extension_requests_at_once_make_one_extension(customer, gpu):
    rental = _active(customer, gpu, left=timedelta(days=1))
    outcome = race(
        browser=lambda: extension_create(
            rental=rental, user=customer, term_days=3, terms=accepted_terms()
        ),
        api=lambda: extension_create(
            rental=rental, user=customer, term_days=7, terms=accepted_terms()
        ),
    )
    kinds = sorted(type(result).__name__ for result in outcome.values())
    assert kinds == ["ExtensionPending", "Order"], outcome
    assert rental.extensions.count() == 1


# The pages: "Prolonger" on the rental's page, the extension's own page to pay it.


def test_the_rental_page_offers_the_three_terms_priced_at_todays_rates(client, customer, gpu):
    rental = _active(customer, gpu, left=timedelta(days=2))
    client.force_login(customer)
    page = client.get(f"/fr/account/orders/{rental.number}/").content.decode()
    assert 'id="prolonger"' in page and "Prolonger la location" in page
    assert f'action="/fr/account/orders/{rental.number}/extend/"' in page
    # Today's rate for the term x days x 2 GPUs, with the end each one gives.
    assert page.count("nouvelle fin <time") == 3
    for days, total in ((3, "480,00"), (7, "1\u00a0008,00"), (30, "3\u00a0600,00")):
        assert f'data-testid="extend-{days}">+{days} jours · {total}\u00a0€' in page


def test_the_rental_page_counts_the_days_its_paid_extensions_add(client, customer, gpu):
    rental = _active(customer, gpu, left=timedelta(days=2))
    client.force_login(customer)
    url = f"/fr/account/orders/{rental.number}/"
    assert 'data-testid="extended-days"' not in client.get(url).content.decode()
    _pay(extension_create(rental=rental, user=customer, term_days=7, terms=accepted_terms()))
    extension_create(
        rental=rental, user=customer, term_days=3, terms=accepted_terms()
    )  # not paid: not counted
    page = client.get(url).content.decode()
    assert '<span data-testid="extended-days">+ 7 jours de prolongation</span>' in page


def test_extending_on_the_page_leads_to_the_extensions_payment(client, customer, gpu, usdc):
    rental = _active(customer, gpu, left=timedelta(days=2))
    client.force_login(customer)
    response = client.post(
        f"/fr/account/orders/{rental.number}/extend/", {"term_days": "7", **TERMS_TICKED}
    )
    extension = rental.extensions.get()
    assert response.status_code == 302
    assert response["Location"] == f"/fr/account/orders/{extension.number}/"
    page = client.get(response["Location"]).content.decode()
    assert f"Prolongation de {rental.number} (+7 jours)" in page
    assert 'data-testid="payment-section"' in page
    assert 'id="journal-title"' not in page  # no machines of its own: no journal card
    assert 'id="prolonger"' not in page

    rental_page = client.get(f"/fr/account/orders/{rental.number}/").content.decode()
    assert extension.number in rental_page and 'data-testid="extension-refusal"' in rental_page
    listing = client.get("/fr/account/orders/").content.decode()
    assert f"prolongation de {rental.number}" in listing

    again = client.get(f"/fr/account/orders/{rental.number}/extend/", {"term_days": "3"})
    assert again["Location"] == f"/fr/account/orders/{extension.number}/"
    assert rental.extensions.count() == 1


def test_prolonger_asks_to_confirm_the_price_the_period_and_the_terms_of_sale(
    client, customer, gpu
):
    rental = _active(customer, gpu, left=timedelta(days=2))
    client.force_login(customer)
    url = f"/fr/account/orders/{rental.number}/extend/"
    page = client.get(url, {"term_days": "3"}).content.decode()
    assert not rental.extensions.exists()  # one click shows, it does not buy
    assert 'data-testid="extension-total">480,00\u00a0€' in page
    start = timezone.localtime(rental.ends_at).strftime("%H:%M")
    assert "Depuis la fin actuelle" in page and start in page
    assert 'name="accept_terms"' in page and "conditions générales de vente" in page

    refused = client.post(url, {"term_days": "3"})
    assert refused.status_code == 400 and not rental.extensions.exists()
    assert refused.content.decode().count("Cochez cette case pour prolonger") == 1

    client.post(url, {"term_days": "3", **TERMS_TICKED})
    extension = rental.extensions.get()
    assert extension.terms_version == TERMS_OF_SALE.version
    assert extension.terms_accepted_at > rental.activated_at  # given now, for this purchase


def test_the_extensions_page_speaks_of_the_rental_extended_not_of_gpus_reserved(
    client, customer, gpu, usdc
):
    rental = _active(customer, gpu, left=timedelta(days=2))
    extension = extension_create(rental=rental, user=customer, term_days=3, terms=accepted_terms())
    client.force_login(customer)
    page = client.get(f"/fr/account/orders/{extension.number}/").content.decode()
    assert "Vos GPU sont réservés" not in page
    assert f"prolonge la location {rental.number} de 3 jours" in page
    # Past its deadline, still watched: no GPUs "stay reserved" nor are "released" for it.
    invoice_issue(order=extension, asset=usdc)
    deadline_at(extension.invoices.get(), timezone.now() - timedelta(minutes=1))
    page = client.get(f"/fr/account/orders/{extension.number}/").content.decode()
    assert "Le délai pour payer cette prolongation est écoulé" in page
    assert "restent réservés" not in page and "GPU ont été libérés" not in page


def test_extending_someone_elses_rental_is_a_404(client, customer, outsider, gpu):
    rental = _active(customer, gpu, left=timedelta(days=2))
    client.force_login(outsider)
    response = client.post(
        f"/fr/account/orders/{rental.number}/extend/", {"term_days": "7", **TERMS_TICKED}
    )
    assert response.status_code == 404
    assert not rental.extensions.exists()


def test_a_bad_term_on_the_page_is_refused_with_a_message(client, customer, gpu):
    rental = _active(customer, gpu, left=timedelta(days=2))
    client.force_login(customer)
    response = client.post(
        f"/fr/account/orders/{rental.number}/extend/", {"term_days": "5"}, follow=True
    )
    assert "Choisissez une durée de 3, 7 ou 30 jours." in response.content.decode()
    assert not rental.extensions.exists()


def test_the_customer_is_told_of_the_extension_to_pay_and_of_its_expiry(customer, gpu, worker_runs):
    rental = _active(customer, gpu, left=timedelta(minutes=20))
    with worker_runs():
        extension = extension_create(
            rental=rental, user=customer, term_days=3, terms=accepted_terms()
        )
    with worker_runs():
        orders_expire(now=rental.ends_at + timedelta(seconds=1))
    assert [message.subject for message in mail.outbox] == [
        f"Prolongation {extension.number} de la location {rental.number} reçue",
        f"Prolongation {extension.number} expirée sans paiement",
    ]
    assert "3 jours de plus" in mail.outbox[0].body
    assert "se termine comme prévu" in mail.outbox[1].body
    assert f"Votre prolongation : {settings.SITE_URL}/fr/account/orders/{extension.number}/" in (
        mail.outbox[0].body
    )


def test_refunding_an_extension_takes_its_days_back_from_the_running_rental(
    customer, gpu, staff, worker_runs
):
    rental = _active(customer, gpu, left=timedelta(days=2))
    end = rental.ends_at
    extension = extension_create(rental=rental, user=customer, term_days=7, terms=accepted_terms())
    _pay(extension)
    assert Order.objects.get(pk=rental.pk).ends_at == end + timedelta(days=7)
    Order.objects.filter(pk=rental.pk).update(ending_notice_hours=24)

    mail.outbox.clear()
    with worker_runs():
        assert order_refund(order=extension, actor_user=staff, reason="asked by the customer")
    rental = Order.objects.get(pk=rental.pk)
    assert (rental.status, rental.ends_at, rental.ending_notice_hours) == (S.ACTIVE, end, None)
    [told] = mail.outbox  # in the customer's language
    assert told.subject == f"La location {rental.number} se termine plus tôt"
    assert extension.number in told.body and "se termine désormais le" in told.body
    note = rental.events.get(kind=Kind.NOTE)
    assert (note.actor, note.actor_user, note.data) == (
        Actor.STAFF,
        staff,
        {
            "notice": "shortened",
            "extension": extension.number,
            "days": -7,
            "old_end": (end + timedelta(days=7)).isoformat(),
            "new_end": end.isoformat(),
        },
    )
    assert Order.objects.get(pk=extension.pk).status == S.REFUNDED


def test_an_extension_refunded_once_its_days_have_begun_ends_the_rental_now(
    customer, gpu, staff, worker_runs
):
    rental = _active(customer, gpu, left=timedelta(days=2))
    extension = extension_create(rental=rental, user=customer, term_days=3, terms=accepted_terms())
    _pay(extension)
    # The rental's own term is over: it runs on the extension's days.
    Order.objects.filter(pk=rental.pk).update(ends_at=timezone.now() + timedelta(days=1))
    mail.outbox.clear()
    with worker_runs():
        assert order_refund(order=extension, actor_user=staff, reason="host failed")
    assert Order.objects.get(pk=rental.pk).ends_at <= timezone.now()
    [told] = mail.outbox
    assert "Votre location se termine maintenant" in told.body
    assert orders_complete() == 1
    assert Order.objects.get(pk=rental.pk).status == S.COMPLETED


def test_refunding_an_extension_before_activation_leaves_only_the_rentals_term(
    customer, gpu, staff
):
    rental = OrderFactory(user=customer, gpu=gpu, status=S.PAID, term_days=7)
    extension = extension_create(rental=rental, user=customer, term_days=3, terms=accepted_terms())
    _pay(extension)
    assert order_refund(order=extension, actor_user=staff, reason="asked by the customer")
    order_provisioning_start(order=rental, actor_user=staff)
    order_activate(order=rental, actor_user=staff, host="gpu-1.example.net", port=22, user="lg")
    rental = Order.objects.get(pk=rental.pk)
    assert rental.ends_at - rental.activated_at == timedelta(days=7)
    assert not rental.events.filter(kind=Kind.NOTE).exists()


@pytest.mark.django_db(transaction=True)
def test_a_rental_and_its_extension_refunded_at_once_both_end_refunded(customer, gpu, staff):
    """Both paths lock the extension before the rental: neither waits on the other forever
    (PostgreSQL would kill one as a deadlock)."""
    rental = OrderFactory(user=customer, gpu=gpu, status=S.PAID, term_days=7)
    extension = extension_create(rental=rental, user=customer, term_days=3, terms=accepted_terms())
    _pay(extension)
    outcome = race(
        pause_after={"rental": 'UPDATE "orders_order"', "extension": 'UPDATE "orders_order"'},
        rental=lambda: order_refund(order=rental, actor_user=staff, reason="no GPU"),
        extension=lambda: order_refund(order=extension, actor_user=staff, reason="asked"),
    )
    assert not any(isinstance(result, Exception) for result in outcome.values()), outcome
    statuses = Order.objects.filter(pk__in=[rental.pk, extension.pk]).values_list(
        "status", flat=True
    )
    assert set(statuses) == {S.REFUNDED}


def test_reopening_prolonger_while_an_extension_awaits_payment_says_so_once(client, customer, gpu):
    rental = _active(customer, gpu, left=timedelta(days=2))
    extension = extension_create(rental=rental, user=customer, term_days=3, terms=accepted_terms())
    client.force_login(customer)
    # Five tabs, a double click, Back then « Prolonger » again: the page is not read between.
    for _attempt in range(5):
        again = client.get(f"/fr/account/orders/{rental.number}/extend/", {"term_days": "7"})
        assert again["Location"] == f"/fr/account/orders/{extension.number}/"
    page = client.get(again["Location"]).content.decode()
    assert page.count(f"La prolongation {extension.number} attend son paiement") == 1
    assert "attend son paiement" not in client.get(again["Location"]).content.decode()
