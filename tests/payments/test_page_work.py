"""The order page and its polls redo no work whose result did not change."""

import segno

from payments.templatetags.payment_qr import _svg, payment_qr


def test_a_payment_requests_qr_code_is_drawn_once_not_on_every_view(monkeypatch):
    drawn = []
    make = segno.make

    def drawing(*args, **kwargs):
        drawn.append(args[0])
        return make(*args, **kwargs)

    monkeypatch.setattr(segno, "make", drawing)
    _svg.cache_clear()
    uri = "ethereum:0x5fbdb2315678afecb367f032d93f642f64180aa3@31337/transfer?address=0x1&uint256=5"
    first = payment_qr(uri)
    assert payment_qr(uri) == first
    assert payment_qr(uri + "0") != first  # what is left changed: a new code
    assert drawn == [uri, uri + "0"]
