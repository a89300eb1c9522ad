import os
import subprocess
import sys
from pathlib import Path

import pytest
from celery.contrib.testing.worker import start_worker
from django.test import override_settings

from rental.celery import app as celery_app
from rental.celery import ping

ROOT = Path(__file__).resolve().parents[2]


def _manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    clean_env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    clean_env.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=clean_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_root_redirects_to_french_by_default(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/fr/"


def test_root_redirects_to_english_for_an_english_browser(client):
    response = client.get("/", HTTP_ACCEPT_LANGUAGE="en-GB,en;q=0.9")
    assert response["Location"] == "/en/"


@pytest.mark.django_db
def test_both_languages_serve_the_home_page(client):
    french = client.get("/fr/")
    english = client.get("/en/")
    assert french.status_code == english.status_code == 200
    assert '<html lang="fr">' in french.content.decode()
    assert '<html lang="en">' in english.content.decode()


@pytest.mark.django_db
def test_language_switcher_keeps_the_current_page(client):
    page = client.get("/fr/accounts/login/").content.decode()
    assert 'href="/en/accounts/login/"' in page


@pytest.mark.django_db
def test_healthz_is_ok_when_database_and_broker_answer(client, settings):
    settings.HEALTHZ_TOKEN = "a-long-monitoring-token-0123456789"
    response = client.get("/healthz", HTTP_AUTHORIZATION=f"Bearer {settings.HEALTHZ_TOKEN}")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] and body["broker"]["ok"]


@override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0")
@pytest.mark.django_db
def test_healthz_is_503_when_the_broker_is_down(client, staff):
    client.force_login(staff)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["broker"]["ok"] is False


@pytest.mark.django_db(transaction=True)
def test_a_task_runs_through_a_real_worker_on_redis():
    assert celery_app.conf.broker_url.startswith("redis://")
    with start_worker(celery_app, perform_ping_check=False, loglevel="WARNING"):
        assert ping.delay().get(timeout=20) == "pong"


def test_production_refuses_to_start_without_a_secret_key():
    result = _manage(
        "check",
        env={
            "DJANGO_SETTINGS_MODULE": "rental.settings.production",
            "ALLOWED_HOSTS": "example.com",
        },
    )
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr


def test_production_settings_pass_the_deployment_checklist():
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        env={
            "DJANGO_SETTINGS_MODULE": "rental.settings.production",
            "DJANGO_SECRET_KEY": "x" * 20 + "a-long-random-production-key-0123456789-abcdef",
            "ALLOWED_HOSTS": "gpu.example.com",
            "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/rental",
            "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
            "REDIS_CACHE_URL": "redis://127.0.0.1:6379/1",
            "SITE_URL": "https://gpu.example.com",
        },
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@override_settings(DEBUG=False)
@pytest.mark.django_db
def test_unknown_page_is_a_404_not_a_500(client):
    assert client.get("/fr/no-such-page/").status_code == 404
