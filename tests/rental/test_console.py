"""`make run`'s terminal (rental/console.py): e-mails printed as they read, the sign-up code on
a line of its own, and the order page's polls out of runserver's access log."""

import io
import logging

from django.core.mail import EmailMultiAlternatives

from rental.console import EmailBackend, QuietPolls


def test_an_email_reads_with_its_subject_decoded_its_code_apart_and_no_attachment_bytes():
    message = EmailMultiAlternatives(
        "Paiement reçu pour la commande LG-ABCD-EFGH",
        "Bonjour Ada,\n\nVoici le code :\n\n  ZZMC-HTHL\n\nMerci d'utiliser LocaGPU !\n",
        "LocaGPU <noreply@locagpu.test>",
        ["ada@example.fr"],
    )
    message.attach_alternative("<p>Bonjour Ada</p>", "text/html")
    message.attach("facture-F-2026-0001.pdf", b"%PDF-1.7" + bytes(range(256)), "application/pdf")
    stream = io.StringIO()

    EmailBackend(stream=stream).send_messages([message])

    printed = stream.getvalue()
    assert "E-mail to ada@example.fr\nSubject: Paiement reçu pour la commande LG-ABCD-EFGH\n" in (
        printed
    )
    assert "\nCODE: ZZMC-HTHL\n" in printed
    assert "Merci d'utiliser LocaGPU !" in printed
    assert "[attached: facture-F-2026-0001.pdf (application/pdf)]" in printed
    assert "=?utf-8?" not in printed and "base64" not in printed and "<p>" not in printed


def _access_line(request_line: str, status: int) -> logging.LogRecord:
    """A record as runserver's request handler logs it (django.core.servers.basehttp)."""
    record = logging.LogRecord(
        "django.server",
        logging.INFO,
        __file__,
        1,
        '"%s" %s %s',
        (request_line, str(status), "9"),
        None,
    )
    record.status_code = status
    return record


def test_the_polls_leave_the_access_log_unless_they_fail():
    quiet = QuietPolls()
    order, payment = (
        "/fr/account/orders/LG-ABCD-EFGH/status/",
        "/en/account/orders/LG-AB/payment/status/",
    )

    assert not quiet.filter(_access_line(f"GET {order}?seen=3 HTTP/1.1", 200))
    assert not quiet.filter(_access_line(f"GET {payment}?shown=x HTTP/1.1", 200))
    assert quiet.filter(_access_line(f"GET {order} HTTP/1.1", 500))
    assert quiet.filter(_access_line("GET /fr/account/orders/LG-ABCD-EFGH/ HTTP/1.1", 200))
    assert quiet.filter(_access_line("POST /fr/account/orders/LG-ABCD-EFGH/keys/ HTTP/1.1", 302))
