# python/ — the CPython extension (package "mpk") built on the C core's sources in c/src.
# Suites: python-<version> for every supported CPython this machine has (pytest: corpus, streams,
# differential vs msgpack-python, hypothesis, limits, hostile input, leaks, stubs under mypy, mpk.rpc
# with live Neovim), and
# python-portable (the same tests on a build with every version-specific fast path turned off,
# MPKPY_PORTABLE; see python/ext/fast_paths.h). Driver: spec/drivers/python. Bench: bench-python.
# Each version has its own venv in python/build/venv-<version>; builds go to python/build/ too.
DRIVERS += python
BENCHES += python

# Supported versions (python/pyproject.toml's requires-python says the same), and newer ones that
# are run when present. An interpreter is pyenv's newest <version>.x, else python<version> on PATH.
PY_SUPPORTED := 3.11 3.12 3.13
PY_NEWER := 3.14 3.15 3.16
PYENV_DIR := $(or $(PYENV_ROOT),$(HOME)/.pyenv)
py_find = $(or $(lastword $(sort $(wildcard $(PYENV_DIR)/versions/$(1).[0-9]*/bin/python$(1)))),$(shell command -v python$(1) 2>/dev/null))
PY_FOUND := $(foreach v,$(PY_SUPPORTED) $(PY_NEWER),$(if $(call py_find,$(v)),$(v)))
PY_ABSENT := $(filter-out $(PY_FOUND),$(PY_SUPPORTED))
# the version of the driver, the benchmark and the portable build: the first one found
PY_DEFAULT := $(firstword $(PY_FOUND))

SUITES += $(addprefix python-,$(PY_FOUND)) python-portable

PY_VENV := python/build/venv-$(PY_DEFAULT)
PY := $(PY_VENV)/bin/python
PY_SOURCES := $(wildcard python/ext/*.c python/ext/*.h python/src/mpk/*.py python/src/mpk/*.pyi \
	python/setup.py python/pyproject.toml python/MANIFEST.in c/src/*.c c/src/*.h c/include/*.h c/include/mpk/*.h)
PIP_QUIET := -q --disable-pip-version-check

# python3-venv provides ensurepip for Debian's python3; pyenv's python3 has it already
APT_PACKAGES += python3-venv python3-dev
# neovim: the live peer of mpk.rpc's tests (tests/test_rpc_neovim.py), which fail, not skip, without
# nvim; every suite installs it first
APT_PACKAGES += neovim

.PHONY: test-python python-versions driver-python bench-python $(addprefix bench-python-,$(PY_FOUND)) test-python-portable test-python-asan

# Prints which CPython versions run and which supported ones this machine lacks.
python-versions:
	@echo "python: CPython versions run: $(or $(foreach v,$(PY_FOUND),$(v) ($(call py_find,$(v)))),none)"
	@absent="$(PY_ABSENT)"; if [ -n "$$absent" ]; then echo "python: ABSENT (supported, not tested on this machine): CPython $$absent; install it with pyenv or the system's packages"; fi

# test-python runs every version's suite and the portable one.
test-python: python-versions $(addprefix test-python-,$(PY_FOUND)) test-python-portable

# One venv per version: $(1) the version, $(2) the venv, $(3) the interpreter, $(4) extra build
# environment, $(5) the requirements file (default: the tests'). The build's temporary files go to the venv's own directory (MPK_BUILD_BASE), so that
# builds for several versions and flags never share object files and the source tree stays clean.
define PY_VENV_RULES
$(2)/.mpk-deps: $(or $(5),python/requirements-test.txt)
	@test -x $(2)/bin/python || $(3) -m venv $(2)
	@$(2)/bin/python -m pip install $(PIP_QUIET) -r $(or $(5),python/requirements-test.txt)
	@touch $$@

$(2)/.mpk-installed: $(2)/.mpk-deps $(PY_SOURCES)
	@rm -rf $(2)/mpk-build
	@MPK_BUILD_BASE=$(CURDIR)/$(2)/mpk-build $(4) $(2)/bin/python -m pip install $(PIP_QUIET) --no-deps --no-build-isolation --force-reinstall ./python
	@touch $$@
endef

define PY_VERSION_RULES
$(call PY_VENV_RULES,$(1),python/build/venv-$(1),$(call py_find,$(1)),)
test-python-$(1): python-versions python/build/venv-$(1)/.mpk-installed
	@tools/apt-ensure neovim
	@$(if $(filter $(1),$(PY_DEFAULT)),MPK_TEST_PACKAGING=1) $(SUITE) python-$(1) -- python/build/venv-$(1)/bin/python -m pytest python/tests -p no:cacheprovider
endef
$(foreach v,$(PY_FOUND),$(eval $(call PY_VERSION_RULES,$(v))))

# The portable build on the default version: the fast paths of fast_paths.h off (their fallbacks
# are what every other version runs).
PY_PORTABLE_VENV := python/build/venv-portable
$(eval $(call PY_VENV_RULES,portable,$(PY_PORTABLE_VENV),$(call py_find,$(PY_DEFAULT)),MPK_PORTABLE=1))
test-python-portable: python-versions $(PY_PORTABLE_VENV)/.mpk-installed
	@tools/apt-ensure neovim
	@MPK_EXPECT_PORTABLE=1 $(SUITE) python-portable -- $(PY_PORTABLE_VENV)/bin/python -m pytest python/tests -p no:cacheprovider

driver-python: $(PY_VENV)/.mpk-installed
	@mkdir -p spec/drivers
	@printf '#!/bin/sh\n# made by make driver-python\nexec "$$(dirname "$$0")/../../$(PY)" "$$(dirname "$$0")/../../python/spec_support/driver.py"\n' > spec/drivers/python
	@chmod +x spec/drivers/python

# The benchmark runs on every version found, each in its own venv under build/bench-python/ (the
# peers and the protobuf runtime live there, never in the test venvs), then combines the per-version
# parts into bench/results/python.md and the sidecar python.json. QUICK=1 (or MPK_BENCH_QUICK=1 in
# the environment) runs a few short rounds. The protobuf code is generated at bench time from
# bench/workloads/*.proto by Debian's protoc 3.21, whose output the pinned runtime (protobuf 4.21,
# requirements-bench.txt) reads.
PY_BENCH_DIR := build/bench-python
define PY_BENCH_RULES
$(call PY_VENV_RULES,bench-$(1),$(PY_BENCH_DIR)/venv-$(1),$(call py_find,$(1)),,python/requirements-bench.txt)
bench-python-$(1): $(PY_BENCH_DIR)/venv-$(1)/.mpk-installed $(PY_BENCH_DIR)/pb/workloads_pb2.py
	@$(PY_BENCH_DIR)/venv-$(1)/bin/python python/bench/bench.py $(if $(filter 1,$(QUICK)),--quick,) \
		--pb $(PY_BENCH_DIR)/pb --part $(PY_BENCH_DIR)/part-$(1).json
endef
$(foreach v,$(PY_FOUND),$(eval $(call PY_BENCH_RULES,$(v))))

$(PY_BENCH_DIR)/pb/workloads_pb2.py: bench/workloads/seed.proto bench/workloads/workloads.proto
	@tools/apt-ensure protobuf-compiler
	@mkdir -p $(PY_BENCH_DIR)/pb
	@protoc -Ibench/workloads --python_out=$(PY_BENCH_DIR)/pb bench/workloads/seed.proto bench/workloads/workloads.proto

# QUICK=1 benches the newest CPython found only: on a fresh clone each version costs about 20 s of
# venv and extension build before its first round, which a first look can do without.
PY_BENCH_VERSIONS = $(if $(filter 1,$(QUICK) $(MPK_BENCH_QUICK)),$(lastword $(PY_FOUND)),$(PY_FOUND))
bench-python: python-versions
	@test -f build/bench-workloads/manifest.json || $(MAKE) --no-print-directory bench-workloads
	@rm -f $(PY_BENCH_DIR)/part-*.json
	@$(MAKE) --no-print-directory $(addprefix bench-python-,$(PY_BENCH_VERSIONS))
	@mkdir -p bench/results
	@python3 python/bench/bench.py --combine $(addprefix $(PY_BENCH_DIR)/part-,$(addsuffix .json,$(PY_BENCH_VERSIONS))) \
		--out bench/results/python.md --json bench/results/python.json

# The same tests with the extension built under AddressSanitizer and UBSan (not part of `make test`:
# the interpreter is not instrumented, so the sanitizer runtimes are preloaded; leaks are left to
# tests/test_leaks.py; allocator_may_return_null lets a huge buf_size fail with MemoryError as it
# does without ASan). Its own venv, so the optimised build above is untouched.
PY_ASAN_VENV := python/build/asan-venv
$(eval $(call PY_VENV_RULES,asan,$(PY_ASAN_VENV),$(call py_find,$(PY_DEFAULT)),CFLAGS="-fsanitize=address -fsanitize=undefined -fno-omit-frame-pointer -O1" LDFLAGS="-fsanitize=address -fsanitize=undefined"))
test-python-asan: $(PY_ASAN_VENV)/.mpk-installed
	@tools/apt-ensure neovim
	@LD_PRELOAD="$$(gcc -print-file-name=libasan.so):$$(gcc -print-file-name=libubsan.so)" \
		ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		$(SUITE) python-asan -- $(PY_ASAN_VENV)/bin/python -m pytest python/tests -p no:cacheprovider
