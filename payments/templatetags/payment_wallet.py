"""The "pay with my wallet" button: everything static/js/wallet.js needs, as data attributes
(the CSP allows no inline script, so the page cannot hand it a JSON blob any other way)."""

from django import template
from eth_utils import to_checksum_address

from payments.models import Asset
from payments.selectors import amount_to_send

register = template.Library()


@register.inclusion_tag("payments/_wallet_button.html", takes_context=True)
def wallet_button(context, payment: dict) -> dict:
    """`payment` is payments.views.payment_section_context with an invoice waiting for money."""
    invoice, asset, chain = payment["invoice"], payment["asset"], payment["chain"]
    # wallet_addEthereumChain needs the native coin; without it or a public RPC URL the page
    # can only ask the customer to add the network themselves.
    native = chain.assets.filter(kind=Asset.Kind.NATIVE).first() if chain.public_rpc_url else None
    can_add_chain = native is not None
    return {
        "order": payment["order"],
        "chain": chain,
        "asset": asset,
        "chain_id_hex": hex(chain.chain_id),
        "rpc_url": chain.public_rpc_url if can_add_chain else "",
        "native": native if can_add_chain else None,
        "token_contract": "" if asset.is_native else to_checksum_address(asset.contract_address),
        "deposit_address": to_checksum_address(invoice.deposit_address),
        "amount": str(amount_to_send(invoice=invoice)),
        "csrf_token": context.get("csrf_token"),
    }
