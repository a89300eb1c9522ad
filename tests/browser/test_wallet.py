"""Paying from the browser wallet (EIP-1193): static/js/wallet.js drives an injected wallet
that sends through anvil, as a real wallet would."""

import re

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect
from web3 import Web3

from orders.models import OrderStatus
from payments.devnet import token, token_transfer
from payments.models import Invoice, PaymentClaim
from tests.browser.conftest import log_in, screenshot
from tests.browser.wallet import wallet_calls, wallet_install
from tests.factories import OrderFactory, UserFactory
from tests.payments.helpers import order_with_invoice

pytestmark = [pytest.mark.browser, pytest.mark.chain, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct-Horse-battery-9"


@pytest.fixture
def wallet_account(devnet):
    """An anvil account of its own: counting its transactions counts the wallet's."""
    return devnet.w3.eth.accounts[3]


def open_invoice(page, devnet, asset):
    customer = UserFactory(password=PASSWORD, language="fr")
    invoice = order_with_invoice(asset, user=customer)
    log_in(page, customer.email, PASSWORD)
    page.goto(f"/fr/account/orders/{invoice.order.number}/")
    expect(page.get_by_test_id("payment-address")).to_be_visible()
    return invoice


def pick_currency_on_the_page(page, asset) -> Invoice:
    """The customer chooses the currency: htmx swaps the section in, button included."""
    customer = UserFactory(password=PASSWORD, language="fr")
    order = OrderFactory(user=customer)
    log_in(page, customer.email, PASSWORD)
    page.goto(f"/fr/account/orders/{order.number}/")
    page.check(f"input[name=asset][value='{asset.slug}']")
    page.click("text=Afficher les instructions de paiement")
    expect(page.get_by_test_id("payment-address")).to_be_visible()
    return Invoice.objects.get(order=order)


def sent_count(devnet, account: str) -> int:
    return devnet.w3.eth.get_transaction_count(account)


def test_a_double_click_pays_the_exact_token_amount_once_and_the_order_reaches_paid(
    desktop, devnet, wallet_account
):
    page = desktop
    wallet_install(page, rpc_url=devnet.node.url, account=wallet_account)
    invoice = open_invoice(page, devnet, devnet.usdc)
    devnet.mint(int(invoice.amount_due) * 2, to=wallet_account)
    before = sent_count(devnet, wallet_account)

    page.get_by_test_id("wallet-button").dblclick()

    expect(page.get_by_test_id("wallet-message")).to_contain_text("Paiement envoyé")
    screenshot(page, "wallet-fr-sent")
    # The claim's immediate check saw the transfer: the instructions give way by themselves.
    expect(page.get_by_test_id("order-status")).to_contain_text("Paiement en confirmation")
    assert sent_count(devnet, wallet_account) == before + 1
    usdc = token(devnet.w3, devnet.usdc.contract_address)
    deposit = Web3.to_checksum_address(invoice.deposit_address)
    assert usdc.functions.balanceOf(deposit).call() == int(invoice.amount_due)
    (sent,) = wallet_calls(page, "eth_sendTransaction")
    assert sent[0]["to"].lower() == devnet.usdc.contract_address and "value" not in sent[0]
    claim = PaymentClaim.objects.get(order=invoice.order)
    assert re.fullmatch(r"0x[0-9a-f]{64}", claim.tx_hash)

    devnet.mine(devnet.chain.confirmations)
    devnet.scan()
    expect(page.get_by_test_id("order-status")).to_contain_text("Payée", timeout=15_000)
    invoice.order.refresh_from_db()
    assert invoice.order.status == OrderStatus.PAID


def test_a_payment_refused_in_the_wallet_sends_nothing_and_says_so(desktop, devnet, wallet_account):
    page = desktop
    wallet_install(
        page, rpc_url=devnet.node.url, account=wallet_account, rejects="eth_sendTransaction"
    )
    invoice = open_invoice(page, devnet, devnet.usdc)
    # Enough to pay, whatever ran before on this chain: the refusal is the customer's own.
    devnet.mint(int(invoice.amount_due), to=wallet_account)
    before = sent_count(devnet, wallet_account)

    page.get_by_test_id("wallet-button").click()

    expect(page.get_by_test_id("wallet-message")).to_contain_text(
        "Paiement annulé dans votre portefeuille"
    )
    # The customer may try again.
    expect(page.get_by_test_id("wallet-button")).to_be_enabled()
    screenshot(page, "wallet-fr-refused")
    violations = Axe().run(page).response["violations"]
    assert not [v["id"] for v in violations if v["impact"] in ("serious", "critical")]
    assert sent_count(devnet, wallet_account) == before
    assert not PaymentClaim.objects.filter(order=invoice.order).exists()
    invoice.order.refresh_from_db()
    assert invoice.order.status == OrderStatus.AWAITING_PAYMENT


def test_a_wallet_short_of_tokens_sends_nothing_and_says_so(desktop, devnet, wallet_account):
    page = desktop
    wallet_install(page, rpc_url=devnet.node.url, account=wallet_account)
    invoice = open_invoice(page, devnet, devnet.usdc)
    # Earlier tests of the session may have left it some: it gives them away.
    held = token(devnet.w3, devnet.usdc.contract_address).functions.balanceOf(wallet_account)
    given = token_transfer(
        devnet.w3,
        token_address=devnet.usdc.contract_address,
        sender=wallet_account,
        to=devnet.w3.eth.accounts[0],
        amount=held.call(),
    )
    devnet.w3.eth.wait_for_transaction_receipt(given, timeout=30)
    before = sent_count(devnet, wallet_account)

    page.get_by_test_id("wallet-button").click()

    expect(page.get_by_test_id("wallet-message")).to_contain_text("Pas assez de USDC")
    expect(page.get_by_test_id("wallet-button")).to_be_enabled()
    assert sent_count(devnet, wallet_account) == before
    assert not PaymentClaim.objects.filter(order=invoice.order).exists()


def test_a_wallet_that_does_not_know_the_chain_gets_it_added_then_pays_in_ether(
    desktop, devnet, wallet_account
):
    page = desktop
    wallet_install(page, rpc_url=devnet.node.url, account=wallet_account, knows_chain=False)
    invoice = pick_currency_on_the_page(page, devnet.eth)
    deposit = Web3.to_checksum_address(invoice.deposit_address)

    page.get_by_test_id("wallet-button").click()

    expect(page.get_by_test_id("wallet-message")).to_contain_text("Paiement envoyé")
    (added,) = wallet_calls(page, "wallet_addEthereumChain")
    assert added[0] == {
        "chainId": "0x7a69",
        "chainName": "Anvil devnet",
        "rpcUrls": [devnet.node.url],
        "nativeCurrency": {"name": "Ether (devnet)", "symbol": "ETH", "decimals": 18},
    }
    assert devnet.w3.eth.get_balance(deposit) == int(invoice.amount_due)
    expect(page.get_by_test_id("order-status")).to_contain_text("Paiement en confirmation")
    assert PaymentClaim.objects.get(order=invoice.order).tx_hash


def test_without_a_wallet_the_button_is_not_shown_and_the_claim_still_works(desktop, devnet):
    page = desktop
    invoice = open_invoice(page, devnet, devnet.usdc)

    expect(page.get_by_test_id("wallet-button")).to_be_hidden()
    page.get_by_test_id("claim-button").click()
    expect(page.get_by_text("Merci : nous vérifions le réseau dès maintenant.")).to_be_visible()
    assert PaymentClaim.objects.filter(order=invoice.order).exists()
