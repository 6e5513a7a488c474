# docs — the Markdown of the whole repository (tools/check-docs.py): every relative link resolves,
# and the top README's bench blocks match the committed bench/RESULTS.md and bench/results/
# (tools/readme-bench.py, which `make bench-report` runs after a full run to refresh them).
SUITES += docs

.PHONY: test-docs
test-docs:
	@$(SUITE) docs -- python3 tools/check-docs.py
