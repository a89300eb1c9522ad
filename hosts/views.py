"""What the customer reaches of a rental on its hosts, from the order page: its JupyterLab (a
redirect carrying the rental's token, while the term runs) and, once it ended, its files as a
tar until the purge. The owner's alone: another account's number is a 404, like a number that
does not exist; a visitor is sent to log in."""

import logging
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseRedirect, StreamingHttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

from hosts.provisioning.services import host_account, order_hosts
from hosts.provisioning.ssh import HostScriptError, HostUnreachable, host_script_stream
from orders.hooks import PageSection
from orders.models import Order, OrderStatus
from orders.selectors import order_for_user_or_404
from rental.ratelimit import rate_limit_exceeded

logger = logging.getLogger(__name__)
ENDED = (OrderStatus.COMPLETED, OrderStatus.REFUNDED)


def order_rental_section(*, order: Order) -> PageSection:
    """The order page's part about the rental's runtime (orders.hooks): its JupyterLab, the
    shared mode's warning, the files kept after the term. Read from the order alone."""
    hosts = sorted(order.host_state) if len(order.host_state) > 1 else []
    return PageSection("hosts/_rental_section.html", {"rental_hosts": hosts})


def _refused(request, order: Order, *, title: str, message: str, status: int):
    context = {"order": order, "title": title, "message": message}
    return render(request, "hosts/rental_refused.html", context, status=status)


@login_required
def order_jupyter(request, number):
    """To the rental's JupyterLab, logged in by its token: the owner's, while it is active."""
    order = order_for_user_or_404(user=request.user, number=number)
    if not order.has_jupyter:
        ended = order.status in ENDED
        if ended:
            message = _("The term of this rental has ended: its JupyterLab is closed.")
        elif order.has_access_details and order.jupyter_port:
            # Running, but its host has no name per rental or no HTTPS (Order.jupyter_origin).
            message = _(
                "This machine offers no secure address for JupyterLab: reach it through SSH, "
                "with ssh -L 8888:/run/locagpu/jupyter.sock, then open http://localhost:8888/."
            )
        else:
            message = _(
                "This rental has no JupyterLab running: it opens once the rental is active."
            )
        title = _("JupyterLab is closed")
        return _refused(request, order, title=title, message=message, status=410 if ended else 409)
    query = urlencode({"token": order.jupyter_token})
    response = HttpResponseRedirect(f"{order.jupyter_origin}/lab?{query}")
    # The token is in the address: kept out of caches and out of the next site's Referer.
    response["Cache-Control"] = "no-store"
    response["Referrer-Policy"] = "no-referrer"
    return response


@login_required
def order_files(request, number):
    """The ended rental's files, a tar streamed from its host (`archive`), until the purge.
    An order on several hosts names the host (?host=); the first one otherwise."""
    order = order_for_user_or_404(user=request.user, number=number)
    title = _("Your files")
    if not order.files_downloadable:
        message = (
            _("The files of this rental have been removed from its machines.")
            if order.data_purged_at
            else _("The files of a rental can be downloaded here once its term has ended.")
        )
        return _refused(request, order, title=title, message=message, status=410)
    hosts = order_hosts(order=order)
    chosen = request.GET.get("host")
    host = next((host for host, _slots in hosts if chosen in (None, host.name)), None)
    if host is None:
        raise Http404
    limit = settings.RENTAL_FILES_RATE_LIMIT
    if rate_limit_exceeded(scope="rental-files", key=str(request.user.pk), **limit):
        message = _("You asked for these files several times in a short while. Try again later.")
        return _refused(request, order, title=title, message=message, status=429)
    try:
        chunks = host_script_stream(host=host, args=["archive", host_account(order=order)])
    except (HostUnreachable, HostScriptError) as error:
        logger.warning("files of %s on %s: %s", order.number, host.name, error)
        message = _(
            "The machine that keeps your files does not answer right now. Try again in a few "
            "minutes: your files stay there until the date shown on the order page."
        )
        return _refused(request, order, title=title, message=message, status=503)
    response = StreamingHttpResponse(chunks, content_type="application/x-tar")
    name = f"{order.number}-{host.name}" if len(hosts) > 1 else order.number
    response["Content-Disposition"] = f'attachment; filename="{name}-files.tar"'
    response["Cache-Control"] = "no-store"
    return response
