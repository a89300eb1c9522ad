"""The stack `make run` starts, in a throwaway directory and on free ports: the recipe's steps
(migrate, seed_catalog, local_gpu_host), then `honcho start` on the Procfile, as the Makefile
runs them, with rental.settings.local's defaults (SQLite, kombu's filesystem broker, the
filebased cache, the console e-mail backend). Nothing under the clone's var/ is touched."""

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import requests

from tests.anvil import free_port

ROOT = Path(__file__).resolve().parent.parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
HONCHO = ROOT / ".venv" / "bin" / "honcho"
# What the suite's own environment may hold that would point `make run`'s processes elsewhere.
FOREIGN_PREFIXES = ("DJANGO_", "TEST_", "CELERY_", "DATABASE_", "REDIS_", "LOCAGPU_", "PAYMENTS_")
# The line the console e-mail backend gives a verification code (rental.console).
CODE = re.compile(r"CODE: ([A-Z0-9]{4}-[A-Z0-9]{4})$", re.MULTILINE)


class MakeRunStack:
    def __init__(self, var_dir: Path):
        self.var_dir = var_dir
        self.web_port, self.chain_port, self.ssh_port = free_port(), free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.web_port}"
        self.console_path = var_dir.parent / "console.log"
        self.process: subprocess.Popen | None = None
        # Each variable the project reads for a store is set, so a developer's .env (read by
        # the settings and by honcho) cannot point this stack at their own data.
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(FOREIGN_PREFIXES)},
            "DJANGO_SETTINGS_MODULE": "rental.settings.local",
            "LOCAGPU_VAR_DIR": str(var_dir),
            "DATABASE_URL": f"sqlite:///{var_dir / 'db.sqlite3'}",
            "CELERY_BROKER_URL": "filesystem://",
            "REDIS_CACHE_URL": "",
            "LOCAGPU_WEB_PORT": str(self.web_port),
            "SITE_URL": self.url,
            "PAYMENTS_DEVNET_RPC_URL": f"http://127.0.0.1:{self.chain_port}",
            "LOCAGPU_LOCAL_SSH_PORT": str(self.ssh_port),
        }

    def manage(self, *args: str, timeout: float = 60) -> str:
        done = subprocess.run(
            [str(PYTHON), "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert done.returncode == 0, f"manage.py {' '.join(args)}:\n{done.stdout}{done.stderr}"
        return done.stdout

    def start(self, *, timeout: float = 90) -> None:
        """The `run` recipe of the Makefile, then ready once /healthz/ready says so (the
        devnet registered and watched)."""
        for folder in ("queue", "processed", "control"):
            (self.var_dir / "celery" / folder).mkdir(parents=True, exist_ok=True)
        self.manage("migrate", "--no-input", timeout=120)
        self.manage("seed_catalog", "--if-empty")
        self.manage("local_gpu_host")
        empty_env_file = self.var_dir.parent / "honcho.env"
        empty_env_file.write_text("")
        with open(self.console_path, "wb") as console:
            self.process = subprocess.Popen(
                [str(HONCHO), "start", "--env", str(empty_env_file)],
                cwd=ROOT,
                env=self.env,
                stdout=console,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while not self._ready():
            assert self.process.poll() is None, f"honcho exited:\n{self.console()[-4000:]}"
            assert time.monotonic() < deadline, f"not ready in {timeout} s:\n{self.console()}"
            time.sleep(0.5)

    def _ready(self) -> bool:
        try:
            return requests.get(f"{self.url}/healthz/ready", timeout=5).status_code == 200
        except requests.ConnectionError:
            return False

    def console(self) -> str:
        """What `make run` prints in its terminal so far."""
        return self.console_path.read_text(errors="replace")

    def code_for(self, email: str, *, timeout: float = 30) -> str:
        """The verification code of the last e-mail to `email`, read off the console."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.console()
            start = text.rfind(f"E-mail to {email}")
            found = CODE.search(text, start) if start >= 0 else None
            if found:
                return found.group(1)
            assert time.monotonic() < deadline, f"no code for {email} on the console"
            time.sleep(0.3)

    def first_error(self) -> str:
        """The first traceback on the console, if any."""
        text = self.console()
        start = text.find("Traceback")
        return text[start : start + 4000] if start >= 0 else ""

    def stop(self) -> None:
        """Ctrl-C, as a developer stops `make run`; whatever is left is killed."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGINT)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
