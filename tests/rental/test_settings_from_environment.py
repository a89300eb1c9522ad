"""A bad setting stops every process at start-up with a message naming the variable; production
refuses to start without its shared services; the entry points pick the right settings."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.production import PRODUCTION

ROOT = Path(__file__).resolve().parents[2]
# Variables a developer's shell or .env could set, which would change what each case tests.
CONTROLLED = {*PRODUCTION, "PAYMENTS_UNDERPAYMENT_TOLERANCE", "PAYMENTS_DEVNET_CONFIRMATIONS"}


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in CONTROLLED}
    clean.update(env)
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120
    )


def check(env: dict[str, str]) -> subprocess.CompletedProcess:
    return run(["manage.py", "check"], env)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("PAYMENTS_UNDERPAYMENT_TOLERANCE", "1000"),  # base units, as the README once said
        ("ORDERS_SSH_KEY_REQUIRED", "yes please"),  # read as false before, silently
        ("LOCAGPU_HOST_ACCOUNT_PREFIX", "Root;"),
        ("LOCAGPU_RENTAL_DATA_RETENTION_DAYS", "-1"),
        ("PAYMENTS_UNDERPAYMENT_TOLERANCE", "1"),
        ("PAYMENTS_UNDERPAYMENT_TOLERANCE", "-1"),
        ("PAYMENTS_UNDERPAYMENT_TOLERANCE", "NaN"),
        ("PAYMENTS_DEVNET_CONFIRMATIONS", "0"),
        ("PAYMENTS_DEVNET_RPC_URL", "127.0.0.1:8545"),
        ("PAYMENTS_DEVNET_RPC_URL", "not a url"),
        ("PAYMENTS_MAX_BLOCK_RANGE", "0"),
        ("PAYMENTS_SCAN_INTERVAL_SECONDS", "inf"),
        ("PAYMENTS_RATE_MAX_AGE_MINUTES", "ten"),
        ("PAYMENTS_RATE_MAX_MOVE", "20"),  # a percentage: a x21 move would pass
        ("PAYMENTS_RATE_MAX_MOVE", "0"),
        ("PAYMENTS_RATE_MOVE_WINDOW_MINUTES", "0"),
        ("PAYMENTS_XPUB", "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiC"),
        ("STORE_CURRENCY", "euro"),
        ("ORDER_PAYMENT_WINDOW_MINUTES", "0"),
        ("ORDERS_UNPAID_MAX_UNITS", "0"),
        # A new account may not hold more than one that has paid.
        ("ORDERS_NEW_ACCOUNT_UNPAID_MAX_ORDERS", "6"),
        ("SITE_URL", "gpu.example.com"),
        ("HEALTHZ_TOKEN", "short"),
        ("API_THROTTLE_RATE", "lots"),  # a 500 on every API request before, not at start
        ("API_THROTTLE_RATE", "0/min"),
        ("API_MAX_BODY_BYTES", "64k"),
        ("API_MAX_BODY_BYTES", "0"),
        ("API_WEBHOOK_ALLOW_LOCAL_TARGETS", "yes please"),
        ("DATABASE_CONN_MAX_AGE", "forever"),
        ("DATABASE_CONN_MAX_AGE", "-1"),
        ("DATABASE_CONNECT_TIMEOUT_SECONDS", "1"),  # libpq would read 2
        ("DATABASE_STATEMENT_TIMEOUT_SECONDS", "inf"),
        # A lock wait longer than a whole statement would never end in a lock timeout.
        ("DATABASE_LOCK_TIMEOUT_SECONDS", "10"),
        ("DJANGO_DEBUG", "yes please"),
        ("LOG_LEVEL", "verbose"),
        ("LOCAGPU_LOCAL_SSH_PORT", "70000"),
    ],
)
def test_a_bad_setting_stops_manage_py_check_naming_the_variable(variable, value):
    result = check({"DJANGO_SETTINGS_MODULE": "rental.settings.local", variable: value})
    assert result.returncode != 0, result.stdout
    assert f"{variable}:" in result.stderr


@pytest.mark.parametrize(
    ("variable", "value"),
    [("API_THROTTLE_RATE", "100/hour"), ("API_THROTTLE_RATE", "5/s"), ("DJANGO_DEBUG", "false")],
)
def test_a_good_value_is_accepted(variable, value):
    result = check({"DJANGO_SETTINGS_MODULE": "rental.settings.local", variable: value})
    assert result.returncode == 0, result.stderr


def test_a_tolerance_of_half_a_percent_is_accepted():
    env = {"DJANGO_SETTINGS_MODULE": "rental.settings.local"}
    result = check({**env, "PAYMENTS_UNDERPAYMENT_TOLERANCE": "0.005"})
    assert result.returncode == 0, result.stderr


def test_production_with_every_required_variable_starts():
    result = check(PRODUCTION)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "missing", ["DATABASE_URL", "CELERY_BROKER_URL", "REDIS_CACHE_URL", "ALLOWED_HOSTS", "SITE_URL"]
)
def test_production_without_a_required_variable_refuses_to_start(missing):
    env = {k: v for k, v in PRODUCTION.items() if k != missing}
    result = check(env)
    assert result.returncode != 0
    assert f"{missing}:" in result.stderr


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("DATABASE_URL", "sqlite:///var/db.sqlite3"),
        ("CELERY_BROKER_URL", "filesystem://"),
        ("REDIS_CACHE_URL", "filecache:///tmp/cache"),
        ("ALLOWED_HOSTS", "*"),
        ("ALLOWED_HOSTS", ""),
        ("SITE_URL", "http://gpu.example.com"),
        ("DJANGO_SECRET_KEY", "short"),
        ("DJANGO_SECURE_SSL_REDIRECT", "sometimes"),
        ("DJANGO_SECURE_HSTS_SECONDS", "a year"),
    ],
)
def test_production_refuses_a_development_value(variable, value):
    result = check({**PRODUCTION, variable: value})
    assert result.returncode != 0
    assert f"{variable}:" in result.stderr
    assert "postgres@127.0.0.1" not in result.stderr  # values are not echoed


@pytest.mark.parametrize("module", ["rental.wsgi", "rental.celery"])
def test_server_entry_points_default_to_production_settings(module):
    env = {k: v for k, v in PRODUCTION.items() if k != "DJANGO_SETTINGS_MODULE"}
    clean = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    code = f"import {module}; from django.conf import settings; print(settings.SETTINGS_MODULE)"
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "rental.settings.production"


def test_manage_py_keeps_local_settings():
    code = "from django.conf import settings; print(settings.SETTINGS_MODULE)"
    clean = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.stdout.strip().splitlines()[-1] == "rental.settings.local", result.stderr
