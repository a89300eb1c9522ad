"""The signed-in side of the HTTP rows: customers with a session, partners with an API key.

Each person has an order awaiting payment with an invoice, transfers seen on chain and a few
events on its timeline, so the order page and its polls show what a paying customer sees.
wrk shares the pool out over its connections (bench/pool.lua): sessions are not one.
"""

import re
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

PEOPLE = 16
TRANSFERS = 2
EVENTS = 4


@dataclass(frozen=True)
class Person:
    email: str
    session_key: str
    csrf_cookie: str  # what a browser holds after its first page, sent back with every request
    # As many keys as an account may hold: at production's throttle rate (600/min a key), the
    # 16 customers' keys carry the API rows' load with no request refused.
    api_keys: tuple[str, ...]
    order_number: str
    # What the order page sends back with its status and payment polls (?seen=, ?shown=),
    # as written in its URLs.
    status_seen: str
    payment_shown: str


def _devnet_usdc():
    """USDC on the devnet chain, rows only: the HTTP rows need no node. Same chain and slugs
    as payments.devnet.devnet_register, which updates them if the chain rows run after (their
    chain_prepare drops this cursor of no node, and devnet_register starts one at the head)."""
    from django.utils import timezone

    from payments.devnet import DEVNET_CHAIN_ID, DEVNET_FEEDS, ETH_SLUG, USDC_SLUG
    from payments.models import Asset, Chain, Rate
    from payments.services import chain_cursor_start

    chain, created = Chain.objects.get_or_create(
        chain_id=DEVNET_CHAIN_ID,
        defaults={"name": "Anvil devnet", "confirmations": 3, "is_devnet": True},
    )
    if created:
        chain_cursor_start(chain=chain, block_number=100, block_hash="0x" + "0" * 64)
    usdc, _created = Asset.objects.get_or_create(
        slug=USDC_SLUG,
        defaults={
            "chain": chain,
            "kind": Asset.Kind.ERC20,
            "symbol": "USDC",
            "name": "Test USD Coin",
            "contract_address": "0x5fbdb2315678afecb367f032d93f642f64180aa3",
            "decimals": 6,
        },
    )
    Asset.objects.get_or_create(
        slug=ETH_SLUG,
        defaults={"chain": chain, "kind": Asset.Kind.NATIVE, "symbol": "ETH", "decimals": 18},
    )
    # Long enough for every page of the run to stay payable.
    until = timezone.now() + timedelta(hours=2)
    # What the devnet's mock feeds price USDC at in euros (USDC/USD / EUR/USD).
    rate = DEVNET_FEEDS["USDC/USD"] / DEVNET_FEEDS["EUR/USD"]
    Rate.objects.create(asset=usdc, rate=rate, currency="EUR", source="bench", expires_at=until)
    return usdc, until


def _session_for(user) -> str:
    """A logged-in session, stored as django.contrib.auth.login stores one."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return session.session_key


def _csrf_cookie() -> str:
    from django.middleware.csrf import CSRF_ALLOWED_CHARS, CSRF_SECRET_LENGTH
    from django.utils.crypto import get_random_string

    return get_random_string(CSRF_SECRET_LENGTH, allowed_chars=CSRF_ALLOWED_CHARS)


def _paying_order(user, *, gpu, environment, asset, deadline, index: int) -> str:
    from django.utils import timezone

    from orders.models import Order, OrderEvent
    from orders.services import order_create
    from payments.models import Transfer
    from payments.services import invoice_issue
    from tests.factories import accepted_terms

    order = order_create(
        terms=accepted_terms(), user=user, gpu=gpu, environment=environment, quantity=1, term_days=7
    )
    Order.objects.filter(pk=order.pk).update(payment_deadline=deadline)
    order.payment_deadline = deadline
    invoice = invoice_issue(order=order, asset=asset)
    for number in range(TRANSFERS):
        Transfer.objects.create(
            chain=asset.chain,
            asset=asset,
            invoice=invoice,
            tx_hash=f"0x{index:032x}{number:032x}",
            log_index=number,
            block_number=100 + number,
            block_hash="0x" + "ab" * 32,
            block_time=timezone.now(),
            from_address="0x" + "11" * 20,
            to_address=invoice.deposit_address,
            amount=Decimal(invoice.amount_due) / (TRANSFERS + 1) // 1,
        )
    for _number in range(EVENTS):
        OrderEvent.objects.create(
            order=order, kind=OrderEvent.Kind.NOTE, actor=OrderEvent.Actor.SYSTEM, reason="bench"
        )
    return order.number


def _poll_markers(session_key: str, number: str) -> tuple[str, str]:
    """The markers the order page writes into its two polls, read from the page itself: the
    polls are measured as an open page sends them."""
    from django.conf import settings
    from django.test import Client

    client = Client(SERVER_NAME="127.0.0.1")
    client.cookies[settings.SESSION_COOKIE_NAME] = session_key
    response = client.get(f"/fr/account/orders/{number}/")
    page = response.content.decode()
    seen = re.search(r'data-hx-get="[^"]*/status/\?seen=([^"&]+)"', page)
    shown = re.search(r'data-hx-get="[^"]*/payment/status/\?shown=([^"&]+)"', page)
    if response.status_code != 200 or seen is None or shown is None:
        raise RuntimeError(f"order {number}: no polls on its page ({response.status_code})")
    return seen.group(1), shown.group(1)


def people_create(count: int = PEOPLE) -> list[Person]:
    from allauth.account.models import EmailAddress

    from accounts.models import User
    from accounts.services import MAX_API_KEYS_PER_USER, api_key_create
    from catalog.models import Environment, GpuModel

    asset, deadline = _devnet_usdc()
    # Spread over the catalog: the quote's GPU keeps units to price.
    gpus = list(GpuModel.objects.filter(is_active=True).order_by("pk"))
    environment = Environment.objects.get(slug="pytorch")
    people = []
    for index in range(count):
        user = User.objects.create_user(
            f"customer{index}@bench.invalid", first_name="Bench", last_name=f"Customer {index}"
        )
        # Writes (the quote is a POST) need a verified address, as for any partner.
        EmailAddress.objects.create(user=user, email=user.email, verified=True, primary=True)
        raw_keys = tuple(
            api_key_create(user=user, name=f"bench {number}")[1]
            for number in range(MAX_API_KEYS_PER_USER)
        )
        session_key = _session_for(user)
        order_number = _paying_order(
            user,
            gpu=gpus[index % len(gpus)],
            environment=environment,
            asset=asset,
            deadline=deadline,
            index=index,
        )
        status_seen, payment_shown = _poll_markers(session_key, order_number)
        people.append(
            Person(
                email=user.email,
                session_key=session_key,
                csrf_cookie=_csrf_cookie(),
                api_keys=raw_keys,
                order_number=order_number,
                status_seen=status_seen,
                payment_shown=payment_shown,
            )
        )
    return people
