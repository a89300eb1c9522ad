"""What the README and docs/ARCHITECTURE.md say about processes, apps and `make lint` is what
the Procfile, docker-compose.yml, INSTALLED_APPS and the Makefile hold."""

import re
from pathlib import Path

import yaml
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
NUMBERS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


def readme_paragraph(starting: str) -> str:
    start = README.index(starting)
    return README[start : README.index("\n\n", start)]


def test_the_readme_names_every_process_of_the_procfile():
    lines = (ROOT / "Procfile").read_text().splitlines()
    processes = [line.split(":")[0] for line in lines if line.strip()]
    described = readme_paragraph("`make run` needs only")
    assert sorted(name for name in processes if f"`{name}`" not in described) == []


def test_the_readme_names_every_service_of_compose_that_runs_the_image():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    ours = [name for name, service in services.items() if service.get("build") == "."]
    assert "heads" in ours
    described = readme_paragraph("The compose file reads `.env`")
    assert sorted(name for name in ours if f"`{name}`" not in described) == []


def test_the_architecture_counts_the_apps():
    apps = {entry.split(".")[0] for entry in settings.INSTALLED_APPS}
    ours = sorted(name for name in apps if (ROOT / name / "apps.py").exists() and name != "rental")
    assert "backoffice" in ours
    architecture = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    assert f"and {NUMBERS[len(ours) - 1]} apps." in architecture.splitlines()[2]


def lint_commands() -> list[str]:
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^lint:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE).group(1)
    commands = []
    for line in recipe.splitlines():
        command = re.sub(r"^(\w+=\S+ )+", "", line.strip())
        command = command.replace("$(BIN)/", "").replace("$(MANAGE)", "manage.py")
        commands.append(command.removesuffix(" ."))
    return commands


def test_the_readme_says_what_make_lint_runs():
    row = next(line for line in README.splitlines() if line.startswith("| `make lint` |"))
    commands = lint_commands()
    assert "mypy" in commands
    assert [command for command in commands if f"`{command}`" not in row] == []
