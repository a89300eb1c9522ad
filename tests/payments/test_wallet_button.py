"""What the order page gives static/js/wallet.js (the browser journeys are in
tests/browser/test_wallet.py)."""

import re

import pytest
from eth_utils import to_checksum_address

from payments.models import Chain
from tests.payments.helpers import order_with_invoice
from tests.payments.test_views import url

pytestmark = [pytest.mark.chain]


def wallet_attributes(client, order) -> dict[str, str]:
    page = client.get(url("page", order, lang="fr")).content.decode()
    (box,) = re.findall(r"<div class=\"payment-wallet\"[^>]*>", page)
    assert " hidden" in box  # until the script finds a wallet
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', box))


def test_the_button_carries_the_exact_payment_in_base_units(devnet, client, customer):
    invoice = order_with_invoice(devnet.usdc, user=customer)
    client.force_login(customer)

    data = wallet_attributes(client, invoice.order)

    assert data["chain-id"] == "0x7a69" and data["amount"] == str(int(invoice.amount_due))
    assert data["token"] == to_checksum_address(devnet.usdc.contract_address)
    assert data["to"] == to_checksum_address(invoice.deposit_address)
    assert data["rpc-url"] == devnet.node.url and data["native-decimals"] == "18"
    assert data["claim-url"] == url("claim", invoice.order, lang="fr") and data["csrf-token"]
    assert data["msg-rejected"].startswith("Paiement annulé dans votre portefeuille")


def test_a_chain_without_a_public_rpc_url_is_never_offered_to_the_wallet(devnet, client, customer):
    # Its private RPC URL may hold a key: the page must not hand it to every visitor.
    Chain.objects.filter(pk=devnet.chain.pk).update(public_rpc_url="")
    invoice = order_with_invoice(devnet.eth, user=customer)
    client.force_login(customer)

    data = wallet_attributes(client, invoice.order)

    assert "rpc-url" not in data and "native-symbol" not in data
    assert devnet.node.url not in data.values() and data["token"] == ""
