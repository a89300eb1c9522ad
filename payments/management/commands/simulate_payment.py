"""Pay an order from a funded anvil account, as a customer's wallet would."""

from decimal import Decimal, InvalidOperation

from django.core.management.base import BaseCommand, CommandError

from orders.models import Order
from payments.devnet import USDC_SLUG, native_transfer, token_mint, token_transfer, web3_for
from payments.models import Asset, Invoice
from payments.selectors import in_asset_units
from payments.services import PaymentError, invoice_issue


class Command(BaseCommand):
    help = "Send the amount due (or --amount) for an order on the devnet."

    def add_arguments(self, parser):
        parser.add_argument("number", help="order number, e.g. LG-ABCD2345")
        parser.add_argument("--asset", help=f"asset id, e.g. {USDC_SLUG} or eth-devnet")
        parser.add_argument("--amount", help="in whole units (e.g. 12.5); default: what is left")
        parser.add_argument("--payer", type=int, default=1, help="anvil account index (1-9)")

    def handle(self, *args, number, asset, amount, payer, **options):
        order = Order.objects.filter(number=number).first()
        if order is None:
            raise CommandError(f"No order {number}.")
        invoice = order.invoices.filter(status=Invoice.Status.OPEN).select_related("asset").first()
        if invoice is None or (asset and invoice.asset.slug != asset):
            chosen = Asset.objects.filter(slug=asset or USDC_SLUG).select_related("chain").first()
            if chosen is None:
                raise CommandError(f"No asset {asset}. Run `manage.py setup_devnet` first.")
            try:
                invoice = invoice_issue(order=order, asset=chosen)
            except PaymentError as exc:
                raise CommandError(exc.message) from exc
        chain = invoice.asset.chain
        if not chain.is_devnet:
            raise CommandError(f"{chain} is not a devnet: refusing to send anything.")
        base_units = int(invoice.amount_left or invoice.amount_due)
        if amount:
            try:
                base_units = int(Decimal(amount).scaleb(invoice.asset.decimals))
            except InvalidOperation as exc:
                raise CommandError(f"Not an amount: {amount}") from exc

        w3 = web3_for(chain.rpc_url)
        sender = w3.eth.accounts[payer]
        if invoice.asset.is_native:
            tx = native_transfer(w3, sender=sender, to=invoice.deposit_address, amount=base_units)
        else:
            token = invoice.asset.contract_address
            token_mint(w3, token_address=token, to=sender, amount=base_units)
            tx = token_transfer(
                w3,
                token_address=token,
                sender=sender,
                to=invoice.deposit_address,
                amount=base_units,
            )
        shown = in_asset_units(base_units, asset=invoice.asset)
        self.stdout.write(
            self.style.SUCCESS(
                f"Sent {shown} {invoice.asset.symbol} to {invoice.deposit_address} ({number}): {tx}"
            )
        )
        self.stdout.write("Open the order page: it follows the transfer to paid.")
