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
include $(sort $(wildcard mk/*.mk))

.PHONY: test bench drivers deps test-spec test-spec-ref clean

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

bench: deps
	@$(MAKE) --no-print-directory $(addprefix bench-,$(BENCHES))
	@python3 tools/merge-bench.py

clean:
	rm -rf build spec/drivers/*
