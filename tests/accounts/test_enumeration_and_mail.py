"""Finding 9 (part): the sign-up and reset pages tell nobody which addresses have an account,
and a mail server outage never turns into an error page."""

from datetime import timedelta

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnavailable

from accounts.mail import _mail_enqueue
from accounts.models import UnsentMail, User
from accounts.tasks import mails_unsent_queue_task
from tests.drills.processes import broker_down

pytestmark = pytest.mark.django_db

STRONG = "correct-Horse-battery-9"


def _signup(client, email: str):
    return client.post(
        "/fr/accounts/signup/",
        {
            "first_name": "Ada",
            "last_name": "Lovelace",
            "email": email,
            "password1": STRONG,
            "password2": STRONG,
        },
    )


def test_signing_up_with_a_taken_address_looks_like_any_sign_up(customer, worker_runs):
    with worker_runs():
        taken = _signup(Client(), customer.email.upper())
        fresh = _signup(Client(), "newcomer@example.com")
    assert taken.status_code == fresh.status_code == 302
    assert taken["Location"] == fresh["Location"]
    assert User.objects.filter(email__iexact=customer.email).count() == 1
    # The address's owner is told someone tried.
    [notice] = [message for message in mail.outbox if customer.email in message.to]
    assert "compte" in notice.body.lower()


def test_a_reset_for_an_unknown_address_looks_like_a_reset_for_a_known_one(customer):
    unknown = Client().post("/en/accounts/password/reset/", {"email": "nobody@example.com"})
    known = Client().post("/en/accounts/password/reset/", {"email": customer.email})
    assert unknown.status_code == known.status_code == 302
    assert unknown["Location"] == known["Location"]


def test_a_mail_outage_never_fails_a_password_reset_or_a_sign_up(
    customer, settings, django_capture_on_commit_callbacks
):
    settings.EMAIL_BACKEND = "tests.accounts.helpers.MailServerDown"
    client = Client(raise_request_exception=False)
    # The mails are queued to the broker after commit; a worker sends them (and retries).
    with django_capture_on_commit_callbacks(execute=True) as queued:
        reset = client.post("/en/accounts/password/reset/", {"email": customer.email})
        signup = _signup(client, "newcomer@example.com")
    assert (reset.status_code, signup.status_code) == (302, 302)
    # Two mails queued.
    assert sum(getattr(callback, "func", None) is _mail_enqueue for callback in queued) == 2
    assert User.objects.filter(email="newcomer@example.com").exists()


def test_a_reset_asked_while_the_broker_is_down_is_sent_once_it_is_back(
    customer, celery_eager, django_capture_on_commit_callbacks, caplog
):
    """The page answers as usual; the e-mail waits in the database (never in the log: it
    holds the reset link) and the beat's sweep queues it once."""
    with broker_down(celery_eager), django_capture_on_commit_callbacks(execute=True):
        response = Client().post("/fr/accounts/password/reset/", {"email": customer.email})
    assert response.status_code == 302
    assert not mail.outbox
    [unsent] = UnsentMail.objects.all()
    assert unsent.message["to"] == [customer.email]
    assert "not queued" in caplog.text and "/reset/key/" not in caplog.text

    assert mails_unsent_queue_task() == 1
    assert mails_unsent_queue_task() == 0
    [message] = mail.outbox
    assert message.to == [customer.email] and "/reset/key/" in message.body
    assert not UnsentMail.objects.exists()


def test_the_sweep_stops_while_the_broker_is_still_down_and_loses_nothing(
    customer, celery_eager, django_capture_on_commit_callbacks
):
    with broker_down(celery_eager):
        with django_capture_on_commit_callbacks(execute=True):
            Client().post("/fr/accounts/password/reset/", {"email": customer.email})
        with pytest.raises(BrokerUnavailable):
            mails_unsent_queue_task()
    assert UnsentMail.objects.count() == 1
    assert mails_unsent_queue_task() == 1 and len(mail.outbox) == 1


def test_a_reset_kept_past_its_quarter_of_an_hour_is_dropped_unsent(
    customer, celery_eager, django_capture_on_commit_callbacks
):
    """A reset or sign-up e-mail kept through a long outage is not sent late (the customer
    asks again): it is deleted, link and all."""
    with broker_down(celery_eager), django_capture_on_commit_callbacks(execute=True):
        Client().post("/fr/accounts/password/reset/", {"email": customer.email})
    [unsent] = UnsentMail.objects.all()
    assert unsent.expires_at - unsent.created_at == pytest.approx(
        timedelta(minutes=15), abs=timedelta(seconds=1)
    )
    UnsentMail.objects.update(expires_at=timezone.now())
    assert mails_unsent_queue_task() == 0
    assert not mail.outbox and not UnsentMail.objects.exists()


def test_staff_see_the_waiting_mails_without_their_text(
    customer, celery_eager, django_capture_on_commit_callbacks, admin_client
):
    with broker_down(celery_eager), django_capture_on_commit_callbacks(execute=True):
        Client().post("/fr/accounts/password/reset/", {"email": customer.email})
    [unsent] = UnsentMail.objects.all()

    page = admin_client.get("/admin/accounts/unsentmail/")
    assert page.status_code == 200
    text = page.content.decode()
    assert customer.email in text and str(unsent.message["subject"]) in text
    assert "/reset/key/" not in text and unsent.message["body"][:40] not in text
    assert admin_client.get("/admin/accounts/unsentmail/add/").status_code == 403
    assert admin_client.get(f"/admin/accounts/unsentmail/{unsent.pk}/delete/").status_code == 403
