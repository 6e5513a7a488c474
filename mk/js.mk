# js/ — the TypeScript implementation (npm package "mpk").
# Suites: js (node --test: corpus, streams, properties, API) and js-browser (the corpus in headless
# Chromium). Driver: spec/drivers/js. Bench: bench-js (Node and Chromium, writes bench/results/js.md and js.json).
SUITES  += js js-browser
DRIVERS += js
APT_PACKAGES += chromium
# the live MessagePack-RPC tests (test/rpcNeovim.test.ts) drive Neovim 0.7.2 over stdio and TCP
APT_PACKAGES += neovim

JS_STAMP := js/node_modules/.mpk-npm-ci

# npm ci again whenever the lock file changes
$(JS_STAMP): js/package.json js/package-lock.json
	@cd js && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

.PHONY: js-build test-js test-js-browser driver-js
js-build: $(JS_STAMP)
	@cd js && node scripts/build.mjs

test-js: js-build
	@$(SUITE) js -- bash -c 'node --test js/build/test/test/*.test.js'

# playwright-core drives Debian's /usr/bin/chromium and must never download a browser of its own
test-js-browser: js-build
	@PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(SUITE) js-browser -- node js/build/test/test/browser/run.js

driver-js: js-build
	@mkdir -p spec/drivers
	@printf '#!/bin/sh\n# made by make driver-js\nexec node "$$(dirname "$$0")/../../js/build/test/driver/main.js"\n' > spec/drivers/js
	@chmod +x spec/drivers/js

# The benchmark (not a test): its peers live in js/bench/package.json, apart from the package.
BENCHES += js
JS_BENCH_STAMP := js/bench/node_modules/.mpk-npm-ci
# npm install, not npm ci: npm 11's ci rejects this lock file for lacking msgpackr-extract's builds
# for other platforms (optional dependencies), though `npm install` writes the same lock file back.
$(JS_BENCH_STAMP): js/bench/package.json js/bench/package-lock.json
	@cd js/bench && npm install --no-audit --no-fund --loglevel=error
	@touch $@

# protobufjs's static code for the protobuf column, generated at bench time (never committed)
JS_BENCH_PB := build/js-bench/workloads_pb.cjs
$(JS_BENCH_PB): bench/workloads/seed.proto bench/workloads/workloads.proto $(JS_BENCH_STAMP)
	@mkdir -p $(dir $@)
	@js/bench/node_modules/.bin/pbjs -t static-module -w commonjs --dependency "$(CURDIR)/js/bench/node_modules/protobufjs/minimal.js" -o $@ $(filter %.proto,$^)

# QUICK=1 (or MPK_BENCH_QUICK=1 in the environment, which run.mjs reads itself): a short run
.PHONY: bench-js
bench-js: js-build $(JS_BENCH_STAMP) $(JS_BENCH_PB)
	@test -f build/bench-workloads/manifest.json || $(MAKE) --no-print-directory bench-workloads
	@node js/bench/run.mjs $(if $(filter 1,$(QUICK)),--quick,)
