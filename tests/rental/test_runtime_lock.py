"""The image installs the runtime dependencies alone (requirements-runtime.lock), at the pins the
suite ran with (requirements.lock): no test runner, browser driver or type checker in
production, and nothing the apps import left out of it."""

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions, requires
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
APPS = [
    "rental",
    "accounts",
    "catalog",
    "orders",
    "hosts",
    "payments",
    "billing",
    "api",
    "backoffice",
]
PIN = re.compile(r"^([A-Za-z0-9._-]+)==(\S+)", re.MULTILINE)


def pins(lock: str) -> dict[str, str]:
    text = (ROOT / lock).read_text()
    return {canonicalize_name(name): version for name, version in PIN.findall(text)}


def runtime_closure() -> set[str]:
    """pyproject's runtime dependencies and theirs, as installed here (markers and extras
    evaluated as pip-compile does)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    waiting = [Requirement(requirement) for requirement in project["dependencies"]]
    seen: set[tuple[str, frozenset[str]]] = set()
    while waiting:
        requirement = waiting.pop()
        key = (canonicalize_name(requirement.name), frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        for text in requires(requirement.name) or []:
            needed = Requirement(text)
            extras = requirement.extras or {""}
            if needed.marker is None or any(needed.marker.evaluate({"extra": e}) for e in extras):
                waiting.append(needed)
    return {name for name, _ in seen}


def test_the_image_installs_the_runtime_lock():
    installs = [
        line for line in (ROOT / "Dockerfile").read_text().splitlines() if "pip install" in line
    ]
    assert installs and all("-r requirements-runtime.lock" in line for line in installs)


def test_every_pin_of_the_runtime_lock_is_the_one_the_suite_ran_with():
    runtime, everything = pins("requirements-runtime.lock"), pins("requirements.lock")
    assert "django" in runtime
    assert {
        name: version for name, version in runtime.items() if everything.get(name) != version
    } == {}


def test_the_runtime_lock_holds_the_runtime_dependencies_and_no_development_tool():
    runtime = set(pins("requirements-runtime.lock"))
    assert {"pytest", "playwright", "mypy", "ruff", "pip-tools"} & runtime == set()
    # Pillow is a dev extra too, and WeasyPrint's own: it belongs in the image.
    assert "pillow" in runtime
    closure = runtime_closure()
    assert (sorted(runtime - closure), sorted(closure - runtime)) == ([], [])


def imported_top_level_modules() -> set[str]:
    modules = set()
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    modules |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules.add(node.module.split(".")[0])
    return modules - set(sys.stdlib_module_names) - set(APPS)


def test_every_package_the_apps_import_is_in_the_runtime_lock():
    runtime = pins("requirements-runtime.lock")
    distributions = packages_distributions()
    missing = {
        module: distributions.get(module, [])
        for module in imported_top_level_modules()
        if not any(canonicalize_name(d) in runtime for d in distributions.get(module, []))
    }
    assert missing == {}
