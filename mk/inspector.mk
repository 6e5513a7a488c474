# js/inspector/ — the MessagePack inspector, a static page (tree beside hex view) built from js/.
# `make inspector` writes it to build/inspector/ (open build/inspector/index.html). Suite:
# inspector (Node checks against the corpus, the js codec and the C `mpk` tool, then the page in
# headless Chromium: Debian's /usr/bin/chromium through playwright-core, no browser download).
SUITES += inspector
APT_PACKAGES += chromium cmake gcc make

INSPECTOR_STAMP := js/inspector/node_modules/.mpk-npm-ci
INSPECTOR_C := build/inspector-c

# npm ci again whenever the lock file changes
$(INSPECTOR_STAMP): js/inspector/package.json js/inspector/package-lock.json
	@cd js/inspector && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
	@touch $@

.PHONY: inspector inspector-mpk-tool test-inspector
inspector: $(INSPECTOR_STAMP)
	@cd js/inspector && node scripts/build.mjs ../../build/inspector
	@echo "inspector: build/inspector/index.html"

# the C tool, whose to-json/from-json the export's notation is checked against
inspector-mpk-tool:
	@cmake -S c -B $(INSPECTOR_C) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(INSPECTOR_C) --target mpk_tool -j2 >/dev/null

test-inspector: inspector inspector-mpk-tool
	@PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(SUITE) inspector -- bash -c 'cd js/inspector && node build/test/run.js ../../build/inspector ../../spec/vectors ../../$(INSPECTOR_C)/mpk'
