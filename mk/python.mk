# python/ — the CPython extension (package "mpk") built on the C core's sources in c/src.
# Suite: python (pytest: corpus, streams, differential vs msgpack-python, hypothesis, limits, leaks).
# Driver: spec/drivers/python. Bench: bench-python (writes bench/results/python.md).
# The venv lives in python/build/venv; the targets create it and install what they need.
SUITES  += python
DRIVERS += python
BENCHES += python

PY_VENV := python/build/venv
PY := $(PY_VENV)/bin/python
PY_DEPS_STAMP := $(PY_VENV)/.mpk-deps
PY_PKG_STAMP := $(PY_VENV)/.mpk-installed
PY_SOURCES := $(wildcard python/ext/*.c python/ext/*.h python/src/mpk/*.py python/src/mpk/*.pyi \
	python/setup.py python/pyproject.toml c/src/*.c c/src/*.h c/include/*.h c/include/mpk/*.h)

.PHONY: test-python driver-python bench-python

# python3-venv provides ensurepip for Debian's python3; pyenv's python3 has it already
APT_PACKAGES += python3-venv python3-dev

$(PY_DEPS_STAMP): python/requirements-dev.txt
	@test -x $(PY) || python3 -m venv $(PY_VENV)
	@$(PY) -m pip install -q --disable-pip-version-check -r python/requirements-dev.txt
	@touch $@

$(PY_PKG_STAMP): $(PY_DEPS_STAMP) $(PY_SOURCES)
	@$(PY) -m pip install -q --disable-pip-version-check --no-deps --force-reinstall ./python
	@touch $@

test-python: $(PY_PKG_STAMP)
	@$(SUITE) python -- $(PY) -m pytest python/tests -p no:cacheprovider

driver-python: $(PY_PKG_STAMP)
	@mkdir -p spec/drivers
	@printf '#!/bin/sh\n# made by make driver-python\nexec "$$(dirname "$$0")/../../$(PY)" "$$(dirname "$$0")/../../python/spec_support/driver.py"\n' > spec/drivers/python
	@chmod +x spec/drivers/python

bench-python: $(PY_PKG_STAMP)
	@mkdir -p bench/results
	@$(PY) python/bench/bench.py --rounds 21 --out bench/results/python.md

# The same tests with the extension built under AddressSanitizer and UBSan (not part of `make test`:
# the interpreter is not instrumented, so the sanitizer runtimes are preloaded; leaks are left to
# tests/test_leaks.py). Its own venv, so the optimised build above is untouched.
PY_ASAN_VENV := python/build/asan-venv
.PHONY: test-python-asan
test-python-asan:
	@test -x $(PY_ASAN_VENV)/bin/python || python3 -m venv $(PY_ASAN_VENV)
	@$(PY_ASAN_VENV)/bin/python -m pip install -q --disable-pip-version-check -r python/requirements-dev.txt
	@CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -O1" LDFLAGS="-fsanitize=address,undefined" \
		$(PY_ASAN_VENV)/bin/python -m pip install -q --disable-pip-version-check --no-deps --force-reinstall --no-build-isolation ./python
	@LD_PRELOAD="$$(gcc -print-file-name=libasan.so):$$(gcc -print-file-name=libubsan.so)" ASAN_OPTIONS=detect_leaks=0 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		$(SUITE) python-asan -- $(PY_ASAN_VENV)/bin/python -m pytest python/tests -p no:cacheprovider -s
