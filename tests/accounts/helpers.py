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
