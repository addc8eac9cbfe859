# Two commands do all the set-up on a fresh machine with only python3:
#   make demo   - create .venv, install every package, run saxpy on the best device
#   make test   - the same set-up plus test tools, then run the whole suite
#   make wheels - wheels and sdists of the seven packages in dist/ (README, Install: how to install them)
#   make webgpu-setup - also the WebGPU plug-in (pygpgpu-webgpu, wgpu-py) in the venv; its tests need a
#                 Vulkan driver: lavapipe on the CPU is apt-get install mesa-vulkan-drivers libvulkan1
#                 (.ci/run installs it). Not part of test-setup: the shared suite runs every installed
#                 backend that has a device, and much of it needs what the WGSL target cannot write yet.
#   make coverage - the suite under coverage, then line coverage per package (PYTEST_ARGS narrows it)
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
PACKAGES = core translate opencl cuda hip
EDITABLE = $(foreach p,$(PACKAGES),-e packages/pygpgpu-$(p)) -e packages/pygpgpu
# Every install takes its versions from one file, so a command does not depend on what the index
# serves that day; dask and distributed are a pair, pinned here too (tests/test_install_pins.py checks both agree).
PIP     = $(PY) -m pip install -q -c requirements/constraints.txt

.PHONY: demo test setup test-setup webgpu-setup clean wheels coverage

$(VENV)/.installed: $(wildcard packages/*/pyproject.toml) scripts/ensure_opencl.sh requirements/constraints.txt
	@bash scripts/ensure_opencl.sh
	@bash scripts/ensure_venv.sh $(PYTHON)
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) "hatchling>=1.27" editables numpy
	$(PIP) --no-build-isolation $(EDITABLE)
	@touch $@

setup: $(VENV)/.installed

$(VENV)/.test-installed: $(VENV)/.installed
	$(PIP) pytest "nvidia-cuda-nvrtc>=13.0" "cuda-pathfinder>=1.3" cloudpickle "dask[array]==2026.8.0" "distributed==2026.8.0" pillow mypy pyright
	@touch $@

test-setup: $(VENV)/.test-installed

$(VENV)/.webgpu-installed: $(VENV)/.test-installed packages/pygpgpu-webgpu/pyproject.toml
	$(PIP) --no-build-isolation -e packages/pygpgpu-webgpu
	@touch $@

webgpu-setup: $(VENV)/.webgpu-installed

demo: setup
	$(PY) examples/demo.py

$(VENV)/.build-tools:
	@bash scripts/ensure_venv.sh $(PYTHON)
	$(PYTHON) -m venv $(VENV)
	$(PIP) "hatchling>=1.27"
	@touch $@

# hatchling from the venv (no build isolation, so no index is needed once it is installed).
wheels: $(VENV)/.build-tools
	rm -rf dist
	for p in $(PACKAGES:%=pygpgpu-%) pygpgpu-webgpu pygpgpu; do \
	  (cd packages/$$p && $(abspath $(PY)) -m hatchling build -d $(CURDIR)/dist) || exit 1; \
	done

test: test-setup
	$(PY) -m pytest tests -q -ra $(PYTEST_ARGS)

# coverage tools only for this target; data in the venv (ignored by git). Code run in child
# processes (oclgrind, spawn pools, the CLI) is not counted.
$(VENV)/.coverage-installed: $(VENV)/.test-installed
	$(PIP) coverage pytest-cov
	@touch $@

# the table is printed whether or not tests failed; the target fails if they did
COVERAGE_FILE ?= $(VENV)/coverage.dat
coverage: $(VENV)/.coverage-installed
	status=0; COVERAGE_FILE=$(COVERAGE_FILE) $(PY) -m pytest $(or $(PYTEST_ARGS),tests) -q -ra --cov-report= \
	  $(foreach p,$(PACKAGES),--cov=pygpgpu_$(p)) --cov=pygpgpu -W ignore::coverage.exceptions.CoverageWarning \
	  || status=$$?; \
	$(PY) scripts/coverage_by_package.py $(COVERAGE_FILE); exit $$status

clean:
	rm -rf $(VENV)
