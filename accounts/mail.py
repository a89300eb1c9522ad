"""E-mails leave the request: rendered here, sent by a worker after the transaction commits,
so a slow or broken mail server never fails nor delays a page."""

import logging
from functools import partial

from django.conf import settings
from django.core.mail import EmailMessage, EmailMultiAlternatives
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import timezone, translation
from kombu.exceptions import OperationalError as BrokerUnavailable

from accounts.models import UnsentMail, User
from accounts.tasks import mail_send_task

logger = logging.getLogger(__name__)
UNSENT_BATCH = 200


def user_mail(*, user: User, template: str, context: dict) -> EmailMessage:
    """`<template>_subject.txt` and `<template>.txt`, in the user's language and time zone."""
    with translation.override(user.language), timezone.override(user.zone):
        context = {
            "user": user,
            "store_name": settings.STORE_NAME,
            "site_url": settings.SITE_URL,
            "support_email": settings.SUPPORT_EMAIL,
            **context,
        }
        subject = render_to_string(f"{template}_subject.txt", context)
        body = render_to_string(f"{template}.txt", context)
    return EmailMessage(" ".join(subject.split()), body, settings.DEFAULT_FROM_EMAIL, [user.email])


def mail_queue(*, message: EmailMessage) -> None:
    """Send `message` from a worker once the current transaction commits (kept until the
    broker is back when it is down then: mails_unsent_queue)."""
    payload = {
        "subject": message.subject,
        "body": message.body,
        "from_email": message.from_email,
        "to": list(message.to),
        "content_subtype": message.content_subtype,
        "alternatives": [list(each) for each in getattr(message, "alternatives", [])],
    }
    transaction.on_commit(partial(_mail_enqueue, payload))


def _mail_enqueue(payload: dict) -> None:
    try:
        mail_send_task.apply_async((payload,))
    except BrokerUnavailable as exc:
        # Not logged with its text: it may hold a password reset link or a code.
        logger.warning("an e-mail not queued, kept for the beat: %s", exc)
        UnsentMail.objects.create(message=payload)


def mails_unsent_queue() -> int:
    """Beat: queue the e-mails kept while the broker was down, oldest first; each leaves the
    store as it is queued (a sweep running twice at once skips the rows the other holds).
    Returns how many were queued; stops at the first the broker refuses (the next beat)."""
    queued = 0
    for pk in UnsentMail.objects.values_list("pk", flat=True)[:UNSENT_BATCH]:
        with transaction.atomic():
            unsent = UnsentMail.objects.select_for_update(skip_locked=True).filter(pk=pk).first()
            if unsent is None:
                continue
            mail_send_task.apply_async((unsent.message,))
            unsent.delete()
        queued += 1
    return queued


def mail_send(*, message: dict) -> None:
    """Send a message queued by mail_queue; the mail server's errors propagate (retried)."""
    email = EmailMultiAlternatives(
        message["subject"], message["body"], message["from_email"], message["to"]
    )
    email.content_subtype = message["content_subtype"]
    for content, mimetype in message["alternatives"]:
        email.attach_alternative(content, mimetype)
    email.send()
