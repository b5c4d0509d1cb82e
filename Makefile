# Atmosphere Matter Bridge — set-up, tests and demo.
#   make demo   install everything and run the bridge with virtual Matter devices
#   make test   install everything and run pytest, ruff and mypy --strict
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV            := .venv
CONTROLLER_VENV := .venv-controller
MATTER_SERVER   := python-matter-server[server]==8.1.2
APT_PACKAGES    := libnl-3-200 libnl-route-3-200 iproute2 systemd chromium chromium-driver nats-server
STAMPS          := .stamps
DEVICES_DIR     := devices

# Find a Python >= 3.12: on PATH first, then under pyenv.
PYTHON ?= $(shell for c in python3.13 python3.12 python3; do \
	  p=$$(command -v $$c 2>/dev/null) && $$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { echo $$p; exit 0; }; \
	done; \
	root=$$(pyenv root 2>/dev/null || echo $$HOME/.pyenv); \
	for p in $$(ls -d $$root/versions/3.1[2-9]*/bin/python 2>/dev/null | sort -rV); do \
	  $$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { echo $$p; exit 0; }; \
	done)

.PHONY: help
help:
	@echo "make demo   - install everything, start virtual devices + controller + bridge"
	@echo "make test   - install everything and run pytest, ruff and mypy --strict bridge"

.PHONY: check-python
check-python:
	@if [ -z "$(PYTHON)" ]; then \
	  echo "error: Python >= 3.12 not found on PATH or under pyenv; install python3.12 (e.g. apt install python3.12 or pyenv install 3.12)" >&2; exit 1; fi

$(STAMPS):
	@mkdir -p $(STAMPS)

# Debian packages the controller's CHIP SDK, the namespaces, the console tests and the
# sites tests (nats-server, the hub) need.
# Re-checked when this file changes (a package added to APT_PACKAGES gets installed).
$(STAMPS)/apt: Makefile | $(STAMPS)
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; fi; \
	fi
	@touch $@

$(VENV)/.installed: pyproject.toml | check-python
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	@touch $@

# The Matter controller lives in its own venv: its chip package clashes with the client's.
$(CONTROLLER_VENV)/.installed: | check-python
	$(PYTHON) -m venv $(CONTROLLER_VENV)
	$(CONTROLLER_VENV)/bin/pip install -q --upgrade pip
	$(CONTROLLER_VENV)/bin/pip install -q '$(MATTER_SERVER)'
	@touch $@

# Virtual Matter devices (matter.js, pinned by devices/package-lock.json). Node >= 18 is
# taken from PATH, else Debian's nodejs + npm are installed.
$(STAMPS)/node: | $(STAMPS)
	@if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then \
	  echo "installing Debian packages: nodejs npm"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm; fi; \
	fi
	@node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' || \
	  { echo "error: Node.js >= 18 is needed for the virtual devices (found $$(node --version))" >&2; exit 1; }
	@touch $@

$(DEVICES_DIR)/node_modules/.installed: $(DEVICES_DIR)/package.json $(DEVICES_DIR)/package-lock.json | $(STAMPS)/node
	cd $(DEVICES_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

.PHONY: devices
devices: $(DEVICES_DIR)/node_modules/.installed

.PHONY: install
install: $(STAMPS)/apt $(VENV)/.installed $(CONTROLLER_VENV)/.installed $(DEVICES_DIR)/node_modules/.installed

# The demo needs root for its private network namespace; DEMO_PORT picks the API port.
.PHONY: demo
demo: install
	@if [ "$$(id -u)" = 0 ]; then $(VENV)/bin/atmosphere-bridge demo; \
	else sudo -E $(VENV)/bin/atmosphere-bridge demo; fi

.PHONY: lint
lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy --strict bridge

# Under CI (CI=true or 1) nothing real may be skipped: a test that needs root, namespaces,
# Chromium, Node.js or the controller venv fails when they are missing (tests/support/real.py).
ATMOSPHERE_REQUIRE_REAL ?= $(if $(filter true True TRUE 1 yes,$(CI)),1,0)

.PHONY: test
test: install
	ATMOSPHERE_REQUIRE_REAL=$(ATMOSPHERE_REQUIRE_REAL) $(VENV)/bin/python -m pytest -q --durations=30
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy --strict bridge

.PHONY: clean
clean:
	rm -rf $(VENV) $(CONTROLLER_VENV) $(STAMPS) node_modules devices/node_modules
