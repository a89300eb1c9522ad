import pytest
from django.conf import settings

from accounts.services import ssh_key_add
from payments.models import Asset, Chain
from payments.services import chain_cursor_start
from tests.accounts.ssh import quick_public_key
from tests.accounts.two_factor import SecondFactorClient
from tests.api.receiver import receiver_start
from tests.cache import RUN_PREFIX, cache_empty, cache_key, cache_run_forget
from tests.factories import EnvironmentFactory, GpuModelFactory, UserFactory
from tests.payments.helpers import rate_fresh
from tests.provisioning.sshd import TEST_ACCOUNT_PREFIX, make_run_host_start, sshd_stop
from tests.services import unreachable

pytest_plugins = ["tests.anvil"]


def pytest_configure(config):
    # This run's cache keys only (tests/cache.py), whoever else uses the database.
    for cache in (settings.CACHES["default"], settings.CACHES[settings.CATALOG_PAGE_CACHE]):
        cache["KEY_PREFIX"] = RUN_PREFIX
        cache["KEY_FUNCTION"] = cache_key


def pytest_sessionfinish(session):
    cache_run_forget()


# Drills and browser journeys wait on real processes and pages with bounded waits of their
# own: a longer limit lets those fail with their clear message first.
SLOW_KINDS_TIMEOUT = 300


@pytest.hookimpl(trylast=True)  # after tests/drills/conftest.py marked its drills
def pytest_collection_modifyitems(items):
    for item in items:
        slow = item.get_closest_marker("drill") or item.get_closest_marker("browser")
        if slow and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(SLOW_KINDS_TIMEOUT))


def pytest_sessionstart(session):
    problems = unreachable()
    if problems:
        pytest.exit("\n".join(problems), returncode=3)


@pytest.fixture(autouse=True)
def _clear_cache():
    # Rate-limit counters and stored pages: each test starts with none.
    cache_empty()
    yield


@pytest.fixture
def client():
    """Django's test client; force_login passes the second factor too (staff need it for
    any admin page): tests/accounts/two_factor.py."""
    return SecondFactorClient()


@pytest.fixture
def admin_client(admin_user):
    client = SecondFactorClient()
    client.force_login(admin_user)
    return client


@pytest.fixture
def celery_eager():
    """Queued tasks run inline and raise in the test; the previous setting comes back after
    (a drill's broker fixture may have turned it off in between)."""
    from rental.celery import app

    # Inline, a task sent by name runs from the registry: every app's tasks module imported
    # (autodiscover_tasks), as a worker does at start, whatever this test happened to import.
    app.loader.import_default_modules()
    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, True
    yield app
    app.conf.task_always_eager, app.conf.task_eager_propagates = saved


@pytest.fixture
def pytorch(db):
    return EnvironmentFactory(slug="pytorch", name="PyTorch", requires_details=False)


@pytest.fixture
def custom_environment(db):
    return EnvironmentFactory(
        slug="custom", name="Custom", description="Your own image.", requires_details=True
    )


@pytest.fixture
def gpu(db, pytorch, custom_environment):
    """An H100 SXM with 8 units, orderable with either environment."""
    return GpuModelFactory(slug="h100-sxm", name="NVIDIA H100 SXM 80 GB", units_total=8)


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
    rate_fresh(asset, "0.92")
    rate_fresh(chain.assets.get(kind="native"), 3000)
    return asset


@pytest.fixture
def receiver(settings):
    """A webhook receiver on a local port; local targets are allowed as in development."""
    settings.API_WEBHOOK_ALLOW_LOCAL_TARGETS = True
    receiver, server = receiver_start()
    yield receiver
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def make_run_host():
    """The GPU host of `make run`: sshd as the running user, shared-account mode."""
    host = make_run_host_start()
    try:
        yield host
    finally:
        sshd_stop(host)


@pytest.fixture
def make_run_settings(make_run_host, settings):
    """The settings `make run` has (rental.settings.local), pointed at this host."""
    settings.LOCAL_GPU_HOST_PORT = make_run_host.port
    settings.PROVISIONING_KEY_FILE = str(make_run_host.store_key)
    settings.PROVISIONING_KNOWN_HOSTS = str(make_run_host.known_hosts)
    settings.HOST_ACCOUNT_PREFIX = TEST_ACCOUNT_PREFIX
    settings.PROVISIONING_RETRY_SECONDS = 0
    return settings


@pytest.fixture
def laptop(customer):
    """One of two SSH keys on the customer's account."""
    return ssh_key_add(user=customer, name="Laptop", public_key=quick_public_key())


@pytest.fixture
def desktop(customer):
    """The other one."""
    return ssh_key_add(user=customer, name="Desktop", public_key=quick_public_key())
