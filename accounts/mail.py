"""E-mails leave the request: rendered here, sent by a worker after the transaction commits,
so a slow or broken mail server never fails nor delays a page."""

from django.conf import settings
from django.core.mail import EmailMessage, EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils import timezone, translation

from accounts.models import User
from accounts.tasks import mail_send_task
from rental.celery import enqueue_after_commit


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
    """Send `message` from a worker once the current transaction commits."""
    enqueue_after_commit(
        mail_send_task,
        {
            "subject": message.subject,
            "body": message.body,
            "from_email": message.from_email,
            "to": list(message.to),
            "content_subtype": message.content_subtype,
            "alternatives": [list(each) for each in getattr(message, "alternatives", [])],
        },
    )


def mail_send(*, message: dict) -> None:
    """Send a message queued by mail_queue; the mail server's errors propagate (retried)."""
    email = EmailMultiAlternatives(
        message["subject"], message["body"], message["from_email"], message["to"]
    )
    email.content_subtype = message["content_subtype"]
    for content, mimetype in message["alternatives"]:
        email.attach_alternative(content, mimetype)
    email.send()
