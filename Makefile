# mpk — top-level build. Each implementation plugs in through mk/<name>.mk, which appends its name to
# SUITES (and to DRIVERS / BENCHES when it has them) and defines test-<name>, driver-<name>,
# bench-<name>; APT_PACKAGES collects the Debian packages those targets need.
SHELL := /bin/bash
RESULTS := build/results
SUITE := python3 tools/suite.py
SUITES :=
DRIVERS :=
BENCHES :=
APT_PACKAGES := python3

# `make bench QUICK=1`: fewer rounds everywhere, for a first look (the report says so at the top).
# Set before the fragments so that their `?=` defaults give way; folders whose bench takes no
# round count yet get MPK_BENCH_QUICK=1 in their environment (see bench/README.md).
QUICK ?=
ifeq ($(QUICK),1)
C_BENCH_ROUNDS := 2
C_BENCH_ARGS := --quick
CPP_BENCH_RUNS := 1
RB_BENCH_ROUNDS := 2
BENCH_QUICK_VARS := ROUNDS=3 BENCHTIME=20ms MPK_BENCH_QUICK=1
endif
include $(sort $(wildcard mk/*.mk))

.PHONY: test bench drivers deps test-spec test-spec-ref clean bench-workloads bench-sizes bench-report bench-browser bench-browser-headless

# Every suite runs even when an earlier one fails (-k), so the total counts all of them;
# tools/total.py then fails the run if any suite failed or did not report.
test: deps
	@rm -rf $(RESULTS); mkdir -p $(RESULTS)
	@$(MAKE) --no-print-directory -k test-spec-ref $(addprefix test-,$(SUITES)) test-spec || true
	@python3 tools/total.py $(RESULTS) spec-ref $(SUITES) spec

deps:
	@tools/apt-ensure $(sort $(APT_PACKAGES))

drivers: $(addprefix driver-,$(DRIVERS))

test-spec-ref:
	@$(SUITE) spec-ref -- python3 spec/test_spec.py

test-spec: drivers
	@$(SUITE) spec -- python3 spec/interop

# Every step runs even when an earlier one fails (its log is kept in build/bench-logs/), so the
# report always has what could be measured; the run fails at the end if any step did.
BENCH_STEPS = bench-workloads bench-sizes $(addprefix bench-,$(BENCHES)) bench-browser-headless bench-report
bench: deps
	@mkdir -p build/bench-logs; all_start=$$(date +%s); steps="$(BENCH_STEPS)"; n=$$(echo $$steps | wc -w); i=0; failed=""; \
	echo "[bench] $$n steps$(if $(filter 1,$(QUICK)), (QUICK=1: fewer rounds),); logs in build/bench-logs/"; \
	for s in $$steps; do i=$$((i+1)); t=$$(date +%s); echo "[bench $$i/$$n] $$s ..."; \
	  if $(MAKE) --no-print-directory $$s QUICK=$(QUICK) $(BENCH_QUICK_VARS) > build/bench-logs/$$s.log 2>&1; then \
	    echo "[bench $$i/$$n] $$s done in $$(( $$(date +%s) - t )) s"; \
	  else echo "[bench $$i/$$n] $$s FAILED after $$(( $$(date +%s) - t )) s: tail of build/bench-logs/$$s.log:"; \
	    tail -n 15 build/bench-logs/$$s.log | sed 's/^/    /'; failed="$$failed $$s"; fi; \
	done; \
	echo "[bench] done in $$(( $$(date +%s) - all_start )) s: bench/RESULTS.md, bench/plots/"; \
	if [ -n "$$failed" ]; then echo "[bench] failed:$$failed"; exit 1; fi

# The common workloads (bench/workloads/gen.py) and their sizes; protoc makes the .pb files.
bench-workloads:
	@tools/apt-ensure protobuf-compiler zstd
	@python3 bench/workloads/gen.py

bench-sizes: bench-workloads
	@python3 bench/sizes.py

# The browser page: mpk (js/build/browser, made by js-build) vs msgpackr vs protobuf.js vs JSON.parse.
# Its peers are installed from bench/browser's lock file into build/bench-browser (not js/).
# `make bench-browser` serves it and prints the URL (PORT=8765 by default; Ctrl-C stops it);
# `make bench` runs it in headless Chromium into bench/results/browser.md (bench-browser-headless).
BENCH_BROWSER := build/bench-browser
$(BENCH_BROWSER)/.mpk-npm-ci: bench/browser/package.json bench/browser/package-lock.json
	@mkdir -p $(BENCH_BROWSER) && cp bench/browser/package.json bench/browser/package-lock.json $(BENCH_BROWSER)/
	@cd $(BENCH_BROWSER) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

bench-browser: js-build bench-workloads $(BENCH_BROWSER)/.mpk-npm-ci
	@python3 bench/browser/serve.py --port $(or $(PORT),8765)

bench-browser-headless: js-build bench-workloads $(BENCH_BROWSER)/.mpk-npm-ci
	@tools/apt-ensure chromium
	@mkdir -p bench/results
	@PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 node bench/browser/headless.mjs $(if $(filter 1,$(QUICK)),--quick,)

# The plotting environment: matplotlib in its own venv, never in `make test`'s.
BENCH_VENV := build/bench-venv
BENCH_PY := $(BENCH_VENV)/bin/python
$(BENCH_VENV)/.mpk-deps: bench/requirements.txt
	@test -x $(BENCH_PY) || python3 -m venv $(BENCH_VENV)
	@$(BENCH_PY) -m pip install -q --disable-pip-version-check -r bench/requirements.txt
	@touch $@

# Sidecars for every folder's results, the plots from them, then bench/RESULTS.md.
bench-report: $(BENCH_VENV)/.mpk-deps
	@test -f build/bench-workloads/manifest.json || $(MAKE) --no-print-directory bench-sizes
	@python3 tools/merge-bench.py --sidecars-only
	@$(BENCH_PY) bench/plot.py
	@python3 tools/merge-bench.py $(if $(filter 1,$(QUICK)),--quick,)
	@$(if $(filter 1,$(QUICK)),echo "bench-report: README.md left as it is (QUICK numbers are not quoted)",python3 tools/readme-bench.py)

clean:
	rm -rf build spec/drivers/*
