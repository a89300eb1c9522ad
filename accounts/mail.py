"""E-mails leave the request: rendered here, sent by a worker after the transaction commits,
so a slow or broken mail server never fails nor delays a page."""

import logging
import time
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.core.mail import EmailMessage, EmailMultiAlternatives
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import timezone, translation

from accounts.models import UnsentMail, User
from rental.celery import task_named

logger = logging.getLogger(__name__)
UNSENT_BATCH = 200
UNSENT_SWEEP_SECONDS = 45.0  # within the beat's minute
# How long an e-mail not queued is kept by default (a security notice); allauth's, which hold
# codes and links, less (accounts.adapter).
UNSENT_KEPT = timedelta(days=2)


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


def mail_queue(*, message: EmailMessage, keep_for: timedelta = UNSENT_KEPT) -> None:
    """Send `message` from a worker once the current transaction commits. When the broker is
    down then, it is kept `keep_for` for mails_unsent_queue (not longer than what it holds,
    a code or a link, stays valid)."""
    payload = {
        "subject": message.subject,
        "body": message.body,
        "from_email": message.from_email,
        "to": list(message.to),
        "content_subtype": message.content_subtype,
        "alternatives": [list(each) for each in getattr(message, "alternatives", [])],
    }
    transaction.on_commit(partial(_mail_enqueue, payload, keep_for))


def _mail_enqueue(payload: dict, keep_for: timedelta) -> None:
    try:
        task_named("accounts.tasks.mail_send_task").apply_async((payload,))
    except Exception as exc:  # a broker down, or its files gone: the e-mail is kept all the same
        # Not logged with its text (nor in the error's text): it may hold a reset link or a code.
        logger.warning("an e-mail not queued (%s), kept for the beat", type(exc).__name__)
        UnsentMail.objects.create(message=payload, expires_at=timezone.now() + keep_for)


def mails_unsent_queue(*, seconds: float = UNSENT_SWEEP_SECONDS) -> int:
    """Beat: queue the e-mails kept while the broker was down, oldest first, for `seconds` at
    most (the next beat goes on); those expired are deleted unsent. Each leaves the store as
    it is queued, so a sweep running twice at once skips the rows the other holds. Returns how
    many were queued; stops at the first the broker refuses. At least once: a sweep stopped
    between queuing and committing sends that one again."""
    expired, _by_model = UnsentMail.objects.filter(expires_at__lte=timezone.now()).delete()
    if expired:
        logger.warning("%d e-mails kept while the broker was down expired unsent", expired)
    queued, stop = 0, time.monotonic() + seconds
    while time.monotonic() < stop:
        batch = list(UnsentMail.objects.values_list("pk", flat=True)[:UNSENT_BATCH])
        queued_before = queued
        for pk in batch:
            with transaction.atomic():
                unsent = (
                    UnsentMail.objects.select_for_update(skip_locked=True).filter(pk=pk).first()
                )
                if unsent is None:
                    continue
                task_named("accounts.tasks.mail_send_task").apply_async((unsent.message,))
                unsent.delete()
            queued += 1
        if queued == queued_before:  # nothing left, or all held by another sweep
            break
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
