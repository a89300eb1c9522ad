"""/healthz/live, /healthz/ready and /healthz: what monitors, orchestrators and staff see."""

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from payments.models import Chain, ScanCursor
from tests.cache import cache_unreachable

pytestmark = pytest.mark.django_db

TOKEN = "a-long-monitoring-token-0123456789"
DEAD_RPC = "http://127.0.0.1:1"


@pytest.fixture
def chain_on_a_dead_rpc(usdc):
    """The devnet chain whose RPC nobody answers: any RPC call from a health check fails."""
    Chain.objects.update(default_rpc_url=DEAD_RPC)
    return usdc.chain


def watcher_last_scanned(ago: timedelta, *, error: str = "") -> None:
    ScanCursor.objects.update(scanned_at=timezone.now() - ago, last_error=error)


def test_live_answers_without_touching_the_database(client, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get("/healthz/live")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0")
def test_live_answers_while_the_broker_is_down(client):
    assert client.get("/healthz/live").status_code == 200


@pytest.mark.parametrize("path", ["/healthz/ready", "/healthz"])
def test_ready_reads_the_watchers_stored_state_and_calls_no_rpc(
    client, chain_on_a_dead_rpc, settings, path
):
    settings.HEALTHZ_TOKEN = TOKEN
    watcher_last_scanned(timedelta(seconds=5), error="")
    fresh = client.get(path, HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert fresh.status_code == 200, fresh.content
    entry = fresh.json()["chain"]["chains"]["Anvil devnet"]
    assert entry["ok"] and entry["age_seconds"] < 60 and entry["cursor"] == 0

    stale_after = settings.PAYMENTS_CURSOR_MAX_AGE + timedelta(seconds=1)
    watcher_last_scanned(stale_after, error="RPC unreachable")
    stale = client.get(path, HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert stale.status_code == 503
    entry = stale.json()["chain"]["chains"]["Anvil devnet"]
    assert entry["ok"] is False and entry["last_error"] == "RPC unreachable"


def test_a_recent_scan_error_alone_does_not_make_the_store_unready(client, chain_on_a_dead_rpc):
    watcher_last_scanned(timedelta(seconds=5), error="one timeout")
    assert client.get("/healthz/ready").status_code == 200


@override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0")
@pytest.mark.parametrize("path", ["/healthz/ready", "/healthz"])
def test_anonymous_callers_see_only_ok_or_not_ok(client, chain_on_a_dead_rpc, path):
    response = client.get(path)
    assert response.status_code == 503
    assert response.json() == {"status": "error"}
    assert b"127.0.0.1" not in response.content


def test_anonymous_callers_see_only_ok_when_all_is_well(client, usdc):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_staff_see_the_details(client, staff, usdc):
    client.force_login(staff)
    body = client.get("/healthz").json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] and body["broker"]["ok"] and body["chain"]["ok"]


@pytest.mark.parametrize("header", ["Bearer wrong-token-0123456789", "Bearer ", "", TOKEN])
def test_a_wrong_or_missing_token_sees_no_details(client, usdc, settings, header):
    settings.HEALTHZ_TOKEN = TOKEN
    response = client.get("/healthz", HTTP_AUTHORIZATION=header)
    assert response.json() == {"status": "ok"}


def test_no_token_configured_means_no_token_is_accepted(client, usdc, settings):
    settings.HEALTHZ_TOKEN = ""
    response = client.get("/healthz", HTTP_AUTHORIZATION="Bearer ")
    assert response.json() == {"status": "ok"}


def test_staff_before_their_second_factor_see_no_details(client, staff, usdc):
    # A stolen staff password alone must not name the internal hosts and errors.
    client.force_login(staff, second_factor=False)
    assert client.get("/healthz").json() == {"status": "ok"}


def test_ready_says_when_the_cache_does_not_answer(client, usdc, settings):
    settings.HEALTHZ_TOKEN = TOKEN
    cache_unreachable(settings)
    response = client.get("/healthz/ready", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    body = response.json()
    assert response.status_code == 503 and not body["cache"]["ok"] and body["database"]["ok"]


def test_ready_waits_until_every_configured_chain_is_registered(client, settings, monkeypatch):
    # `make run` answers before `setup_devnet` registered the devnet: not ready yet.
    settings.HEALTHZ_TOKEN = TOKEN
    settings.PAYMENTS_READY_CHAIN_IDS = [31337, 8453]
    details = {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}
    waiting = client.get("/healthz/ready", **details)
    assert waiting.status_code == 503
    missing = waiting.json()["chain"]["missing_chain_ids"]
    assert missing == [8453, 31337]

    # A preset network whose RPC URL is set counts as configured too.
    settings.PAYMENTS_READY_CHAIN_IDS = []
    monkeypatch.setenv("ARBITRUM_RPC_URL", "http://127.0.0.1:1")
    arbitrum = client.get("/healthz/ready", **details)
    assert arbitrum.status_code == 503
    assert arbitrum.json()["chain"]["missing_chain_ids"] == [42161]
    monkeypatch.delenv("ARBITRUM_RPC_URL")
    assert client.get("/healthz/ready", **details).status_code == 200
