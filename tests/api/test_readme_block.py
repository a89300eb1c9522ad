"""The README's "Partner API in one minute" block, copied as a newcomer would: run by bash
against a live server, on a machine with no account and no SSH key yet (a fresh HOME)."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from django.db import connection

from accounts.models import User
from orders.models import Order, OrderStatus

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]
LOCAL = "http://127.0.0.1:8000"


def readme_partner_block() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Partner API in one minute", 1)[1]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def test_the_readme_partner_block_works_copied_on_a_fresh_machine(live_server, gpu, usdc, tmp_path):
    block = readme_partner_block().replace(LOCAL, live_server.url)
    database = connection.settings_dict
    env = {
        **os.environ,
        "HOME": str(tmp_path),  # no ~/.ssh here
        "DJANGO_SETTINGS_MODULE": "rental.settings.test",
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:"
        f"{database['PORT']}/{database['NAME']}",
    }
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr

    user = User.objects.get()  # the account the block made
    (key,) = user.ssh_keys.all()
    assert key.public_key == (tmp_path / ".ssh/id_ed25519.pub").read_text().strip()
    order = Order.objects.get(user=user)
    assert order.status == OrderStatus.AWAITING_PAYMENT and list(order.ssh_keys.all()) == [key]
    answers = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert answers[-1]["number"] == order.number and answers[-1]["payment"]["address"]
