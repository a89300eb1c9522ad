# Two commands matter: `make run` and `make test`. Everything they need is installed on demand.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
MANAGE := $(BIN)/python manage.py
# `make run`'s state: var/ in the clone unless LOCAGPU_VAR_DIR names another directory.
VAR := $(or $(LOCAGPU_VAR_DIR),var)
APPS := accounts catalog orders hosts payments billing api backoffice

.PHONY: run test rental-image lint format messages compilemessages lock deps bench services-check system-packages contracts clean

$(BIN)/.installed: requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.lock
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

deps: $(BIN)/.installed node_modules/.installed

compilemessages: $(BIN)/.installed system-packages
	$(MANAGE) compilemessages --ignore=.venv --ignore=node_modules -v0

# Re-extracts every translatable string; edit locale/fr and <app>/locale/fr afterwards.
messages: $(BIN)/.installed
	$(MANAGE) makemessages -l fr --no-obsolete --ignore=.venv --ignore=node_modules \
		--ignore=tests/* --ignore=bench/* $(foreach app,$(APPS),--ignore=$(app)/*)
	for app in $(APPS); do \
		if [ -d $$app/locale ]; then (cd $$app && ../$(MANAGE) makemessages -l fr --no-obsolete); fi; \
	done

run: deps compilemessages
	mkdir -p $(VAR)/celery/queue $(VAR)/celery/processed $(VAR)/celery/control
	$(MANAGE) migrate --no-input
	$(MANAGE) seed_catalog --if-empty
	# The GPU host of this machine: sshd on 127.0.0.1 (Procfile `sshd`), keys under var/ssh.
	$(MANAGE) local_gpu_host
	# Celery defaults to production settings (as gunicorn does): the Procfile's processes run local.
	DJANGO_SETTINGS_MODULE=rental.settings.local $(BIN)/honcho start

# Debian's packages the project drives: Chromium for the browser tests (Playwright cannot
# download its own here), docker-compose to validate docker-compose.yml, gettext for
# the translations, ssh-keygen to check SSH key fingerprints against OpenSSH's own; Docker
# Engine, debootstrap and socat for the rentals' containers (deploy/host/README.md: the
# suite's own engine, the offline rental image, the hosts' SSH and JupyterLab gateways).
# Each entry is command:package.
SYSTEM_PACKAGES := chromium:chromium docker-compose:docker-compose msgfmt:gettext java:default-jre-headless ssh-keygen:openssh-client sshd:openssh-server dockerd:docker.io debootstrap:debootstrap socat:socat
# Libraries have no command: each entry is library:package, found through ldconfig
# (Pango for WeasyPrint's invoice PDFs, and the font it embeds).
SYSTEM_LIBRARIES := libpango-1.0.so:libpango-1.0-0 libpangoft2-1.0.so:libpangoft2-1.0-0
system-packages:
	@missing=""; for entry in $(SYSTEM_PACKAGES); do \
		command -v $${entry%%:*} >/dev/null || missing="$$missing $${entry##*:}"; done; \
	for entry in $(SYSTEM_LIBRARIES); do \
		ldconfig -p | grep -q "$${entry%%:*}" || missing="$$missing $${entry##*:}"; done; \
	test -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf || missing="$$missing fonts-dejavu-core"; \
	if [ -n "$$missing" ]; then apt-get update -qq && apt-get install -y -qq $$missing; fi

services-check: $(BIN)/.installed
	$(BIN)/python tests/services.py

# Four pytest-xdist workers, each with its own test database, anvil chain, Chromium, cache
# keys, broker queues and OS accounts (tests/conftest.py, tests/cache.py,
# tests/provisioning/sshd.py): most of the suite's time is spent waiting on real processes
# (the make run stack, drills, browsers, sshd), which four workers overlap on two cores.
# Measured here, idle machine: 1,537-1,543 tests in 7 min 04 s to 7 min 42 s with `-n 4 --dist
# loadgroup` (three runs; `.ci/run` 7 min 22 s to 7 min 59 s, 2026-12-08). `make test
# PYTEST_ARGS=` runs them in one process. No
# session-wide cap: a slow machine makes a slow green run, never a red one; each test has its
# own timeout (pyproject.toml, 120 s; browser tests and drills 300 s, the make run journey
# 360 s); --durations prints the slowest.
# --dist loadgroup keeps the container tests (xdist_group "containers") on one worker, one
# Docker Engine loading the rental image (tests/containers/engine.py): pytest stays below 9.2,
# whose node ids pytest-xdist 3.8 cannot mark with the group (pyproject.toml says why).
PYTEST_ARGS ?= -n 4 --dist loadgroup
# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE=1 in this
# machine's shells, as in the image): otherwise every run compiles the modules again and pytest
# rewrites the asserts of ~570 of them (collection 5.2-6.2 s -> 2.1 s here, idle machine).
test: export PYTHONDONTWRITEBYTECODE :=
test: deps compilemessages system-packages services-check rental-image
	$(BIN)/pytest --durations=15 $(PYTEST_ARGS)

# The rentals' pytorch image the container tests start (deploy/host/images/build-pytorch):
# built into /var/cache/locagpu/images the first time (about 4 minutes here, with Debian's
# mirror and PyPI), found there afterwards.
rental-image: $(BIN)/.installed system-packages
	DJANGO_SETTINGS_MODULE=rental.settings.test $(BIN)/python -c \
		'import django; django.setup(); from tests.containers.engine import image_prepare; image_prepare()'


# Style, the app layers (`[tool.importlinter]`), import circles, types, missing migrations: the
# README's `make lint` row names each command, and tests/rental/test_docs.py keeps it true.
lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python bin/import_cycles.py
	$(BIN)/mypy
	DJANGO_SETTINGS_MODULE=rental.settings.local $(MANAGE) makemigrations --check --dry-run

format: $(BIN)/.installed
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Regenerates requirements.lock (development and tests) from pyproject.toml, then the image's
# requirements-runtime.lock: the runtime dependencies alone, at requirements.lock's pins.
lock: $(BIN)/.installed
	$(BIN)/pip-compile --quiet --extra dev --strip-extras --no-emit-index-url \
		--no-emit-find-links -o requirements.lock pyproject.toml
	$(BIN)/pip-compile --quiet --strip-extras --no-emit-index-url --no-emit-find-links \
		--constraint requirements.lock -o requirements-runtime.lock pyproject.toml

bench: deps compilemessages
	command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk)
	$(BIN)/python bench/run.py

# Recompiles contracts/*.sol and the npm contracts contracts/build.py names into contracts/build/
# (committed; Python needs no node).
contracts: node_modules/.installed
	$(BIN)/python contracts/build.py

clean:
	rm -rf var/* staticfiles .pytest_cache
