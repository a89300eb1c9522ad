"""What a customer does with the mails the store sends them, in a sentence each."""

import re
from smtplib import SMTPServerDisconnected

from django.core import mail
from django.core.mail.backends.base import BaseEmailBackend


class MailServerDown(BaseEmailBackend):
    """An EMAIL_BACKEND whose server never answers."""

    def send_messages(self, email_messages):
        raise SMTPServerDisconnected("Connection unexpectedly closed")


def last_mail_to(address: str):
    return [message for message in mail.outbox if address in message.to][-1]


def code_in(message) -> str:
    """The verification code of a sign-up mail (allauth's codes: XXXX-XXXX)."""
    found = re.search(r"^\s*([A-Z0-9]{4}-[A-Z0-9]{4})\s*$", message.body, re.MULTILINE)
    assert found, message.body
    return found.group(1)


def reset_link_in(message) -> str:
    link = re.search(r"https?://[^/]+(/\S+/accounts/password/reset/key/\S+/)", message.body)
    assert link, message.body
    return link.group(1)


def account_deactivated_by_staff(admin_client, user) -> None:
    """Staff untick "active" on the account's admin page and save it."""
    form = admin_client.get(f"/admin/accounts/user/{user.pk}/change/").context["adminform"]
    data = {
        name: value
        for name, value in form.form.initial.items()
        if value is not None and not isinstance(value, list)
    }
    data.update({"email": user.email, "is_active": "", "date_joined_0": "2025-01-01"})
    data.update({"date_joined_1": "10:00:00", "language": user.language})
    response = admin_client.post(f"/admin/accounts/user/{user.pk}/change/", data)
    assert response.status_code == 302, response.context["adminform"].form.errors
