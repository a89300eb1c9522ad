"""Every page a customer can see, for the checks that walk them all (valid markup, phone).

URLs take `{lang}`. Orders are shown in each state of the payment section, reached on the
devnet chain as a customer would reach them.
"""

from datetime import timedelta

from django.utils import timezone

from accounts.services import api_key_create, ssh_key_add
from catalog.models import Environment, GpuModel
from orders.extensions import extension_create
from orders.models import Order
from orders.services import order_cancel, orders_expire
from tests.accounts.ssh import quick_public_key
from tests.factories import OrderFactory, accepted_terms
from tests.payments.helpers import deadline_at, order_with_invoice

LANGUAGES = ("fr", "en")
# Pages a visitor sees before logging in (a logged-in visitor is sent away from them).
ANONYMOUS_PAGES = {
    "sign-up": "/{lang}/accounts/signup/",
    "login": "/{lang}/accounts/login/",
    "password-reset": "/{lang}/accounts/password/reset/",
    "password-reset-sent": "/{lang}/accounts/password/reset/done/",
}
CUSTOMER_PAGES = {
    "home": "/{lang}/",
    "gpu": "/{lang}/gpus/h100-sxm/",
    "gpu-24gb": "/{lang}/gpus/rtx-3090/",
    "configurator": "/{lang}/gpus/h100-sxm/configure/",
    "configurator-errors": "/{lang}/gpus/rtx-3090/configure/?environment=custom&quantity=deux",
    "compare": "/{lang}/gpus/compare/",
    "advisor": "/{lang}/advisor/",
    "advisor-result": (
        "/{lang}/advisor/?peak_memory_gb=300&gpu_count=2&frequent_exchange=yes"
        "&shortening_distorts=no"
    ),
    "advisor-errors": "/{lang}/advisor/?peak_memory_gb=-3&gpu_count=deux",
    "model-advisor": "/{lang}/advisor/model/",
    "model-advisor-result": (
        "/{lang}/advisor/model/?model=llama-3.1-70b&job=full&precision=&optimizer=adamw"
        "&sequence_length=4096&micro_batch=2&lora_rank=16&gradient_checkpointing=no"
        "&context_length=4096&concurrent_sequences=1"
    ),
    "model-advisor-errors": "/{lang}/advisor/model/?model=gpt&job=qlora&sequence_length=0",
    "terms-of-sale": "/{lang}/legal/cgv/",
    "legal-notice": "/{lang}/legal/mentions-legales/",
    "privacy": "/{lang}/legal/confidentialite/",
    "account": "/{lang}/account/",
    "api-keys": "/{lang}/account/api-keys/",
    "ssh-keys": "/{lang}/account/ssh-keys/",
    "security": "/{lang}/account/security/",
    "two-factor-enrol": "/{lang}/account/security/enrol/",
    "orders": "/{lang}/account/orders/",
    "email-addresses": "/{lang}/accounts/email/",
    "password-change": "/{lang}/accounts/password/change/",
    "logout": "/{lang}/accounts/logout/",
}


def customer_pages(*, devnet, customer) -> dict[str, str]:
    """The customer's pages, with API and SSH keys and orders in each payment state behind
    them."""
    api_key_create(user=customer, name="Training cluster in the lab, second floor")
    ssh_key_add(
        user=customer,
        name="Workstation in the lab, second floor",
        public_key=quick_public_key("a-rather-long-comment@workstation.lab.example.com"),
    )
    orders = orders_in_each_payment_state(devnet=devnet, customer=customer)
    rental = active_rental(customer=customer)
    # The paid order's page lists it; the active rental's page keeps offering the terms.
    extension = extension_create(
        rental=orders["paid"], user=customer, term_days=7, terms=accepted_terms()
    )
    return {
        **CUSTOMER_PAGES,
        **{
            f"order-{state}": f"/{{lang}}/account/orders/{o.number}/" for state, o in orders.items()
        },
        "order-active": f"/{{lang}}/account/orders/{rental.number}/",
        "order-stop": f"/{{lang}}/account/orders/{rental.number}/stop/",
        "order-extend": f"/{{lang}}/account/orders/{rental.number}/extend/?term_days=7",
        "order-extension": f"/{{lang}}/account/orders/{extension.number}/",
        "invoices": "/{lang}/account/invoices/",  # the paid order's invoice in it
    }


def active_rental(*, customer) -> Order:
    """A running rental on a custom image: time left, early stop and the journal card."""
    now = timezone.now()
    return OrderFactory(
        user=customer,
        gpu=GpuModel.objects.get(slug="h100-sxm"),
        environment=Environment.objects.get(slug="custom"),
        environment_details="nvcr.io/nvidia/pytorch:24.05-py3\npip install flash-attn==2.5.8",
        quantity=2,
        status=Order.Status.ACTIVE,
        activated_at=now - timedelta(days=2),
        ends_at=now + timedelta(days=5, hours=3),
        access_host="gpu-12.example.net",
        access_port=2222,
        access_user="lg-rental",
    )


def orders_in_each_payment_state(*, devnet, customer) -> dict[str, Order]:
    """One order per state the payment section shows, paid with real transfers."""
    gpu, pytorch = GpuModel.objects.get(slug="h100-sxm"), Environment.objects.get(slug="pytorch")

    def invoiced():
        return order_with_invoice(devnet.usdc, user=customer, gpu=gpu, environment=pytorch)

    partial, paid, confirming, expired = invoiced(), invoiced(), invoiced(), invoiced()
    devnet.pay_token(partial.deposit_address, int(partial.amount_due) - 7_500_000)
    devnet.pay_token(paid.deposit_address, int(paid.amount_due))
    devnet.mine(devnet.chain.confirmations)
    devnet.scan()
    devnet.pay_token(confirming.deposit_address, int(confirming.amount_due))
    devnet.scan()  # one confirmation of three

    cancelled = invoiced().order
    order_cancel(order=cancelled, actor="customer", actor_user=customer)
    deadline_at(expired, timezone.now() - timedelta(minutes=1))
    orders_expire()
    return {
        "awaiting-choose-currency": OrderFactory(user=customer, gpu=gpu, environment=pytorch),
        "awaiting": invoiced().order,
        "partial": partial.order,
        "confirming": confirming.order,
        "paid": paid.order,
        "cancelled": cancelled,
        "expired": expired.order,
    }
