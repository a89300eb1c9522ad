"""Finding 9 (part): the sign-up and reset pages tell nobody which addresses have an account,
and a mail server outage never turns into an error page."""

import pytest
from django.core import mail
from django.test import Client

from accounts.models import User

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
    assert len(queued) == 2
    assert User.objects.filter(email="newcomer@example.com").exists()
