from decimal import Decimal

import pytest
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from catalog.pagecache import forget_served_pages
from payments.models import Asset, Chain, Rate
from payments.services import chain_cursor_start
from tests.api.receiver import receiver_start
from tests.factories import UserFactory
from tests.services import unreachable

pytest_plugins = ["tests.anvil"]


def pytest_sessionstart(session):
    problems = unreachable()
    if problems:
        pytest.exit("\n".join(problems), returncode=3)


@pytest.fixture(autouse=True)
def _clear_cache():
    # Rate-limit counters and cached pages live in the Redis cache, cached pages also in
    # this process: each test starts with none.
    cache.clear()
    forget_served_pages()
    yield


@pytest.fixture
def password():
    return "correct-Horse-battery-9"


@pytest.fixture
def customer(db, password):
    return UserFactory(password=password)


@pytest.fixture
def outsider(db, password):
    return UserFactory(password=password)


@pytest.fixture
def staff(db, password):
    return UserFactory(password=password, is_staff=True, is_superuser=True)


@pytest.fixture
def worker_runs(celery_eager, django_capture_on_commit_callbacks):
    """`with worker_runs():` runs what the block queued after commit (e-mails included) as
    a worker would, so the test sees the mails in django.core.mail.outbox."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def usdc(db):
    """USDC on a devnet chain, with a fresh rate: orders can be invoiced without a node."""
    chain = Chain.objects.create(
        chain_id=31337, name="Anvil devnet", confirmations=3, is_devnet=True
    )
    chain_cursor_start(chain=chain, block_number=0, block_hash="0x" + "0" * 64)
    Asset.objects.create(
        slug="eth-devnet",
        chain=chain,
        kind=Asset.Kind.NATIVE,
        symbol="ETH",
        name="Ether",
        decimals=18,
    )
    asset = Asset.objects.create(
        slug="usdc-devnet",
        chain=chain,
        kind=Asset.Kind.ERC20,
        symbol="USDC",
        name="Test USD Coin",
        contract_address="0x5fbdb2315678afecb367f032d93f642f64180aa3",
        decimals=6,
    )
    for each, value in ((asset, Decimal("0.92")), (chain.assets.get(kind="native"), 3000)):
        Rate.objects.create(
            asset=each,
            rate=Decimal(value),
            currency="EUR",
            source="test",
            expires_at=timezone.now() + settings.PAYMENTS_RATE_MAX_AGE,
        )
    return asset


@pytest.fixture
def receiver(settings):
    """A webhook receiver on a local port; local targets are allowed as in development."""
    settings.API_WEBHOOK_ALLOW_LOCAL_TARGETS = True
    receiver, server = receiver_start()
    yield receiver
    server.shutdown()
    server.server_close()
