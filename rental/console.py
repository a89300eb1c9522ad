"""What `make run` prints in its terminal, made for a developer to read: e-mails as they read
(not their MIME source, base64 attachments and encoded subjects), the page polls left out of
runserver's access log (every open order page asks every 3 s, burying the rest), and once at
start what its GPU host is when no Docker daemon answers."""

import logging
import re

from django.core.mail.backends import console

# allauth's verification codes (XXXX-XXXX), alone on their line.
CODE = re.compile(r"^\s*([A-Z0-9]{4}-[A-Z0-9]{4})\s*$", re.MULTILINE)
# The order page's polls: orders:status and payments:status.
POLL = re.compile(r"^[A-Z]+ /[a-z-]+/account/orders/[^/ ]+/(payment/)?status/[? ]")
RULE = "-" * 79
# Said once at start by `manage.py local_gpu_host` when the local host runs rentals in the
# shared mode; each such order's page says it too (hosts/_rental_section.html).
SHARED_MODE_NOTICE = f"""{RULE}
DEVELOPMENT SHARED MODE: no Docker daemon answers, so rentals on this machine's GPU host run
without a container of their own: no isolation between rentals, no GPU. For trying the store
out only; a real host (or a Docker daemon here) runs each rental in its own container.
{RULE}"""


class EmailBackend(console.EmailBackend):
    """The console e-mail backend, readable: who it is for, the subject, the code on a line
    of its own, the plain-text body and the attachments by name."""

    def write_message(self, message):
        lines = [
            RULE,
            f"E-mail to {', '.join(message.recipients())}",
            f"Subject: {message.subject}",
        ]
        lines += [f"CODE: {code}" for code in CODE.findall(message.body)]
        lines += ["", message.body.rstrip()]
        for attachment in message.attachments:
            if isinstance(attachment, tuple):
                lines.append(f"[attached: {attachment[0]} ({attachment[2]})]")
            else:
                lines.append(f"[attached: {attachment.get_filename()}]")
        lines.append(RULE)
        self.stream.write("\n".join(lines) + "\n")


class QuietPolls(logging.Filter):
    """Leaves the answered polls out of runserver's access log (django.server); a poll that
    fails still shows."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", 500)
        request_line = str(record.args[0]) if isinstance(record.args, tuple) else ""
        return status >= 400 or not POLL.match(request_line)
