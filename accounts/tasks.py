from smtplib import SMTPException

from celery import shared_task
from django.contrib.sessions.backends.db import SessionStore

from accounts.mail import mail_send, mails_unsent_queue


# A mail server outage (refused connection, timeout, 4xx) is retried with a growing delay for
# about a day; sending twice is possible only if a worker dies between SMTP and the ack.
@shared_task(
    acks_late=True,
    autoretry_for=(SMTPException, OSError),
    retry_backoff=30,
    retry_backoff_max=60 * 60,
    max_retries=30,
)
def mail_send_task(message: dict) -> None:
    # Imported here: accounts.mail queues this task, so it imports this module.

    mail_send(message=message)


@shared_task(acks_late=True)
def mails_unsent_queue_task() -> int:
    return mails_unsent_queue()


@shared_task
def sessions_clear_expired_task() -> None:
    """What `manage.py clearsessions` does: expired sessions deleted (a signed-out browser's
    row goes at once; an abandoned one stays until it expires)."""

    SessionStore.clear_expired()
