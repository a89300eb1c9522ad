"""Real processes the drills break on purpose: a throwaway redis-server and Celery workers.

Every wait is bounded and every process is stopped by the fixture that started it.
"""

import os
import signal
import subprocess
import time
import uuid
from collections import Counter
from contextlib import contextmanager
from email import message_from_bytes
from email.header import decode_header, make_header
from pathlib import Path
from urllib.parse import quote

import redis
from kombu import pools as kombu_pools

from tests.anvil import free_port

ROOT = Path(__file__).resolve().parent.parent.parent
CELERY = ROOT / ".venv" / "bin" / "celery"


def wait_until(condition, *, timeout: float, interval: float = 0.1, what: str = "condition"):
    """Polls `condition` until it returns something truthy; AssertionError after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def _stop(process: subprocess.Popen, *, timeout: float = 10) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=timeout)
    except ProcessLookupError:
        process.wait(timeout=timeout)


class RedisServer:
    """A redis-server of our own on a free port, without persistence: a crash loses its queue,
    like a broker restarted from scratch. The machine's shared Redis is never touched."""

    def __init__(self):
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2)

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

        def answers():
            try:
                return self.client().ping()
            except redis.ConnectionError:
                assert self.process.poll() is None, "redis-server exited at start"
                return False

        wait_until(answers, timeout=10, interval=0.05, what="redis-server")

    def crash(self) -> None:
        """SIGKILL: whatever sat in its queues is gone."""
        self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None:
            _stop(self.process)


def database_url(settings_dict: dict) -> str:
    """The URL of the database this test runs on (pytest-django's test database)."""
    user = quote(settings_dict["USER"] or "", safe="")
    password = quote(settings_dict["PASSWORD"] or "", safe="")
    credentials = f"{user}:{password}@" if password else f"{user}@"
    host = settings_dict["HOST"] or "127.0.0.1"
    port = settings_dict["PORT"] or "5432"
    return f"postgres://{credentials}{host}:{port}/{settings_dict['NAME']}"


# The queues of CELERY_TASK_ROUTES; a drill worker consumes all of them unless told otherwise.
ALL_QUEUES = ("chain", "default", "webhooks")


class CeleryWorker:
    """`celery -A rental worker` as a subprocess, on the test database and a given broker."""

    def __init__(
        self,
        *,
        broker_url: str,
        database_url: str,
        workdir: Path,
        queues: tuple[str, ...] = ALL_QUEUES,
        concurrency: int = 1,
        **env,
    ):
        self.queues, self.concurrency = queues, concurrency
        self.broker_url = broker_url
        self.database_url = database_url
        self.workdir = workdir
        self.email_dir = workdir / "emails"
        self.email_dir.mkdir(parents=True, exist_ok=True)
        self.extra_env = env
        self.process: subprocess.Popen | None = None
        self.log_path: Path | None = None
        self.starts = 0

    def start(self) -> None:
        assert self.process is None or self.process.poll() is not None, "already running"
        self.starts += 1
        self.log_path = self.workdir / f"worker-{self.starts}.log"
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.drills.worker_settings",
            "PYTHONPATH": str(ROOT),
            "DATABASE_URL": self.database_url,
            "CELERY_BROKER_URL": self.broker_url,
            "CELERY_RESULT_BACKEND": self.broker_url,
            "DRILL_EMAIL_DIR": str(self.email_dir),
            **self.extra_env,
        }
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [
                    str(CELERY),
                    "-A",
                    "rental",
                    "worker",
                    "--pool",
                    "prefork",
                    "--queues",
                    ",".join(self.queues),
                    "--concurrency",
                    str(self.concurrency),
                    "--loglevel",
                    "INFO",
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                    "--hostname",
                    f"drill-{uuid.uuid4().hex[:8]}@%h",
                ],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_until(self._ready, timeout=30, interval=0.1, what="the Celery worker to be ready")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path else ""

    def _ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"the worker exited at start:\n{self.log()[-3000:]}")
        return " ready." in self.log()

    def pool_processes(self) -> list[int]:
        """The prefork children that run the tasks."""
        path = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in path.read_text().split()]

    def kill_pool_process(self) -> int:
        """SIGKILL the child running the task (concurrency 1); the main process stays up and
        notices."""
        [child] = self.pool_processes()
        os.kill(child, signal.SIGKILL)
        return child

    def kill(self) -> None:
        """SIGKILL the whole worker at once: no warm shutdown, no message handed back."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None:
            _stop(self.process)

    def emails_by_subject(self) -> Counter:
        """Every e-mail the worker sent, counted by decoded subject."""
        subjects: Counter = Counter()
        for path in self.email_dir.iterdir():
            for raw in path.read_bytes().split(b"\n" + b"-" * 79 + b"\n"):
                if raw.strip():
                    message = message_from_bytes(raw.strip())
                    subjects[str(make_header(decode_header(message["Subject"])))] += 1
        return subjects


@contextmanager
def broker_of_this_process(url: str):
    """Point this process's Celery app (what `.delay()` publishes to) at `url`, then back."""
    from rental import celery as celery_module
    from rental.celery import app

    def point_at(broker_url: str) -> None:
        if app._pool is not None:
            app._pool.force_close_all()
        # What Celery itself resets after a fork: the connection and producer pools, and
        # kombu's registry of producer pools, which would hand back a pool closed above.
        app._pool = None
        app.amqp._producer_pool = None
        kombu_pools.reset()
        app.conf.broker_url = broker_url
        # A broker that failed a moment ago is rested (rental.celery): not this new one.
        celery_module._broker_unanswered_at = -celery_module.BROKER_RESTS_FOR

    saved = app.conf.broker_url
    point_at(url)
    try:
        yield app
    finally:
        point_at(saved)


class ManagedProcess:
    """A long-running process of the project (`manage.py follow_heads`, `celery beat`) on the
    test database and the throwaway broker, its output in a log file."""

    def __init__(
        self, command: list[str], *, database_url: str, broker_url: str, workdir: Path, **env
    ):
        self.command = command
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.drills.worker_settings",
            "PYTHONPATH": str(ROOT),
            "DATABASE_URL": database_url,
            "CELERY_BROKER_URL": broker_url,
            "DRILL_EMAIL_DIR": str(workdir / "emails"),
            **env,
        }
        (workdir / "emails").mkdir(parents=True, exist_ok=True)
        self.log_path = workdir / f"{Path(command[0]).name}-{uuid.uuid4().hex[:6]}.log"
        self.process: subprocess.Popen | None = None

    def start(self, *, ready: str) -> None:
        """Started, once `ready` shows in its output."""
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                self.command,
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

        def started() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"{self.command} exited at start:\n{self.log()[-3000:]}")
            return ready in self.log()

        wait_until(started, timeout=30, interval=0.1, what=f"{self.command[:3]} to start")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL: no clean-up of any kind."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None:
            _stop(self.process)


PYTHON = ROOT / ".venv" / "bin" / "python"


def head_follower_command(chain_id: int, ws_url: str) -> list[str]:
    return [str(PYTHON), "manage.py", "follow_heads", "--chain", str(chain_id), "--ws-url", ws_url]


def beat_command(schedule: Path) -> list[str]:
    return [str(CELERY), "-A", "rental", "beat", "--loglevel", "INFO", "--schedule", str(schedule)]


@contextmanager
def broker_down(app):
    """Tasks are published for real (not run inline) to a port nothing listens on."""
    with broker_of_this_process(f"redis://127.0.0.1:{free_port()}/0"):
        app.conf.task_always_eager = False
        try:
            yield
        finally:
            app.conf.task_always_eager = True
