"""Acceptance (issue 26): a first-time customer, following only the site, reaches their GPUs
over SSH on the `make run` host (hosts.local) with no staff and no reload:
configure, sign up with the e-mailed code, paste a key made here with ssh-keygen, pay with
simulate_payment's transfer, then a real `ssh` client logs in to the printed host and port and
sees CUDA_VISIBLE_DEVICES set to the order's slots."""

import re
import time

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from orders.models import Order, OrderEvent, OrderStatus
from tests.accounts.helpers import code_in, last_mail_to
from tests.browser.conftest import count_page_loads, order_now, screenshot, sign_up
from tests.provisioning.sshd import keypair

pytestmark = [pytest.mark.browser, pytest.mark.chain, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct-Horse-battery-9"
SSH_COMMAND = re.compile(r"^ssh -p (\d+) ([\w.-]+)@([\d.]+)$")


@pytest.fixture
def make_run_catalog(make_run_settings, transactional_db):
    """The catalog `make run` seeds: its hosts are the local sshd."""
    call_command("seed_catalog", verbosity=0)


def test_first_customer_logs_in_to_their_gpus_without_staff_nor_reload(
    desktop,
    make_run_catalog,
    make_run_host,
    devnet,
    tmp_path,
    capsys,
):
    page = desktop
    key = keypair(tmp_path, "first-rental")
    page.goto("/fr/gpus/h100-sxm/configure/")
    page.check("input[name=environment][value=pytorch]")
    page.fill("input[name=quantity]", "2")
    page.check("input[name=term][value='3']")
    # A visitor is asked for a key, with how to make one.
    expect(page.locator("#public-key-help a")).to_have_text("Comment en créer une")
    page.fill("textarea[name=public_key]", key.with_suffix(".pub").read_text())
    order_now(page)

    page.wait_for_url("**/fr/accounts/signup/**")
    sign_up(page, first_name="Ada", last_name="Lovelace", email="ada@example.fr", password=PASSWORD)
    page.get_by_test_id("verification-code").fill(code_in(last_mail_to("ada@example.fr")))
    page.get_by_test_id("verification-submit").click()

    page.wait_for_url(re.compile(r"/fr/account/orders/LG-[A-Z0-9-]+/$"))
    order = Order.objects.get(user__email="ada@example.fr")
    fingerprint = order.ssh_keys.get().fingerprint
    expect(page.get_by_test_id("order-key-fingerprints")).to_have_text(fingerprint)
    page.check(f"input[name=asset][value='{devnet.usdc.slug}']")
    page.click("text=Afficher les instructions de paiement")
    expect(page.get_by_test_id("payment-address")).to_be_visible()
    loads = count_page_loads(page)  # from here on, the page follows the order by itself

    call_command("simulate_payment", order.number, verbosity=0)
    devnet.mine(devnet.chain.confirmations)
    devnet.scan()  # paid; the worker (eager here) provisions the local host

    expect(page.get_by_test_id("order-status")).to_contain_text("Active", timeout=20_000)
    command = page.locator("#ssh-command").inner_text().strip()
    port, user, host = SSH_COMMAND.match(command).groups()
    slots = ",".join(str(hold.index) for hold in order.slot_holds.order_by("index"))
    deadline = time.monotonic() + 30
    while True:
        login = make_run_host.login(user=user, key=key, command="echo $CUDA_VISIBLE_DEVICES")
        if login.returncode == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    logged_in = time.time()
    assert (host, int(port)) == ("127.0.0.1", make_run_host.port)
    assert login.returncode == 0, login.stderr
    assert login.stdout.strip() == slots
    paid = OrderEvent.objects.get(order=order, new_status=OrderStatus.PAID).created_at
    active = OrderEvent.objects.get(order=order, new_status=OrderStatus.ACTIVE).created_at
    with capsys.disabled():
        # The login is tried once the page shows the access (its poll runs every 3 s).
        print(
            f"\npaid to access granted: {(active - paid).total_seconds():.2f} s; "
            f"paid to a working login from the page: {logged_in - paid.timestamp():.2f} s"
        )

    # Everything the paid order shows came without a reload.
    expect(page.get_by_test_id("payment-status")).to_contain_text("3 confirmations sur 3")
    expect(page.get_by_test_id("billing-section")).to_be_visible()
    expect(page.get_by_test_id("extensions")).to_be_visible()
    expect(page.locator("#journal-title")).to_be_visible()
    screenshot(page, "first-rental-access")
    assert loads == [], loads
