"""Every task of the project names its queue in CELERY_TASK_ROUTES, and every queue named there
has a worker in the Procfile and in docker-compose.yml. A task left out would run on `default`
without anyone choosing it: ether sent by contracts credited behind e-mails that render PDFs."""

import re
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from rental.celery import app

ROOT = Path(__file__).resolve().parents[2]
CONSUMED = re.compile(r"celery -A rental worker -Q ([\w,]+)")


def project_tasks() -> list[str]:
    apps = {entry.split(".")[0] for entry in settings.INSTALLED_APPS}
    ours = {app_name for app_name in apps if (ROOT / app_name / "__init__.py").exists()}
    app.loader.import_default_modules()
    return sorted(name for name in app.tasks if name.split(".")[0] in ours | {"rental"})


def queues_consumed(commands: list[str]) -> set[str]:
    return {
        queue
        for command in commands
        for match in CONSUMED.findall(command)
        for queue in match.split(",")
    }


def test_every_task_of_the_project_has_a_route():
    tasks = project_tasks()
    assert "payments.tasks.native_balances_check_task" in tasks
    assert sorted(name for name in tasks if name not in settings.CELERY_TASK_ROUTES) == []


@pytest.mark.parametrize(
    "task", ["payments.tasks.native_balances_check_task", "payments.tasks.rates_refresh_task"]
)
def test_chain_reads_run_on_the_chain_queue(task):
    assert app.amqp.router.route({}, task)["queue"].name == "chain"


def test_every_routed_queue_has_a_worker_in_the_procfile_and_in_compose():
    routed = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}
    procfile = (ROOT / "Procfile").read_text().splitlines()
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    compose = [str(service.get("command", "")) for service in services.values()]
    assert routed - queues_consumed(procfile) == set()
    assert routed - queues_consumed(compose) == set()
