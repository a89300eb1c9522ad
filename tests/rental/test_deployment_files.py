"""The image and the compose stack: production settings, no root, no secrets in the image,
a one-shot migration the app services wait for, health checks on the split endpoints."""

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def dockerignore_patterns() -> set[str]:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    return {line.strip().rstrip("/") for line in lines if line.strip() and not line.startswith("#")}


@pytest.mark.parametrize("kept_out", [".env", ".venv", "var", "node_modules", "test-artifacts"])
def test_the_build_context_leaves_out_secrets_and_local_state(kept_out):
    assert kept_out in dockerignore_patterns()


def test_dotenv_is_never_committed():
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", ".env"], cwd=ROOT, capture_output=True, timeout=30
    )
    assert ignored.returncode == 0


def test_the_image_runs_production_settings_as_a_user_that_is_not_root():
    lines = [line.split() for line in (ROOT / "Dockerfile").read_text().splitlines()]
    users = [words[1] for words in lines if words and words[0] == "USER"]
    assert users and users[-1] not in ("root", "0", "0:0")
    assert ["ENV", "DJANGO_SETTINGS_MODULE=rental.settings.production"] in lines


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_web_worker_and_beat_wait_for_the_one_shot_migration():
    services = compose()["services"]
    assert "seed_catalog --if-empty" in services["migrate"]["command"]
    assert services["migrate"]["restart"] == "no"
    for name in ("web", "worker", "beat"):
        waits_for = services[name]["depends_on"]["migrate"]["condition"]
        assert waits_for == "service_completed_successfully", name
        assert "migrate" not in str(services[name]["command"]), name
        assert services[name]["env_file"] == ".env", name


def test_the_web_health_check_asks_the_ready_endpoint():
    assert "/healthz/ready" in " ".join(compose()["services"]["web"]["healthcheck"]["test"])


def test_the_compose_file_is_valid(tmp_path):
    binary = shutil.which("docker-compose")
    if binary is None:
        pytest.skip("docker-compose is not installed (`make test` installs Debian's)")
    # The compose file reads .env beside it; the checkout's own .env (if any) is not ours.
    shutil.copy(ROOT / "docker-compose.yml", tmp_path / "docker-compose.yml")
    (tmp_path / ".env").write_text("DJANGO_SECRET_KEY=compose-check\n")
    result = subprocess.run(
        [binary, "-f", str(tmp_path / "docker-compose.yml"), "config", "-q"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


def test_web_trusts_a_proxy_only_where_clients_cannot_reach_it_directly():
    """With TRUSTED_PROXY_COUNT at 1, a client reaching gunicorn directly would choose its own
    address in X-Forwarded-For (unlimited login guesses, no API throttle): `web` is published
    on the loopback interface only, for the TLS proxy on the same host."""
    web = compose()["services"]["web"]
    assert compose()["x-app"]["environment"]["TRUSTED_PROXY_COUNT"] == "${TRUSTED_PROXY_COUNT:-1}"
    assert web["ports"] == ["127.0.0.1:8000:8000"]
