# rpc — the cross-language MessagePack-RPC matrix (spec/rpc/README.md): every client (go, js,
# python) against every server over Unix sockets, then hostile frames sent by the runner itself.
# Its drivers: go/internal/rpcdriver (built to build/rpc/go-rpcdriver), js/driver/rpc.ts (built by
# js-build) and python/spec_support/rpc_driver.py (run by the default CPython's venv).
SUITES += rpc
APT_PACKAGES += python3

.PHONY: test-rpc rpc-driver-go

rpc-driver-go:
	@mkdir -p build/rpc
	@$(GO) -C go build -o ../build/rpc/go-rpcdriver ./internal/rpcdriver

test-rpc: rpc-driver-go js-build $(PY_VENV)/.mpk-installed
	@MPK_RPC_PYTHON=$(PY) $(SUITE) rpc -- python3 spec/rpc/run.py

# bench-rpc: calls per second on loopback TCP, mpk-RPC vs JSON-RPC 2.0 vs gRPC, in Go, Python and
# Node (bench/rpc/README.md); writes bench/results/rpc.md and rpc.json. Everything it installs goes
# to build/rpcbench/ (never into a test venv or js/node_modules), and `make test` installs none of it.
# QUICK=1 (MPK_BENCH_QUICK=1) runs 3 rounds of 0.1 s per cell instead of 7 of 0.4 s.
BENCHES += rpc
RPCB := build/rpcbench
RPCB_ABS := $(CURDIR)/$(RPCB)
RPCB_GO_SRC := $(wildcard bench/rpc/go/*.go) bench/rpc/go/go.mod bench/rpc/go/go.sum bench/rpc/rpcbench.proto $(wildcard go/*.go go/mpkrpc/*.go)

.PHONY: bench-rpc

# Go: the messages by protoc-gen-go (built from the module's own google.golang.org/protobuf) into
# build/, laid over bench/rpc/go/pb/ with -overlay, so the source tree gets nothing generated.
$(RPCB)/bin/rpcbench-go: $(RPCB_GO_SRC)
	@tools/apt-ensure protobuf-compiler
	@mkdir -p $(RPCB)/bin $(RPCB)/go
	@cd bench/rpc/go && $(GO) build -o $(RPCB_ABS)/bin/protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go
	@protoc --plugin=protoc-gen-go=$(RPCB)/bin/protoc-gen-go --go_out=$(RPCB)/go --go_opt=paths=source_relative -I bench/rpc bench/rpc/rpcbench.proto
	@printf '{"Replace":{"%s":"%s"}}\n' "$(CURDIR)/bench/rpc/go/pb/rpcbench.pb.go" "$(RPCB_ABS)/go/rpcbench.pb.go" > $(RPCB)/go/overlay.json
	@cd bench/rpc/go && $(GO) build -overlay $(RPCB_ABS)/go/overlay.json -o $(RPCB_ABS)/bin/rpcbench-go .

# Python: its own venv (the default CPython) with grpcio + grpcio-tools and mpk built from python/.
$(RPCB)/venv/.mpk-deps: bench/rpc/python/requirements.txt
	@test -x $(RPCB)/venv/bin/python || $(call py_find,$(PY_DEFAULT)) -m venv $(RPCB)/venv
	@$(RPCB)/venv/bin/python -m pip install $(PIP_QUIET) setuptools wheel -r bench/rpc/python/requirements.txt
	@touch $@
$(RPCB)/venv/.mpk-installed: $(RPCB)/venv/.mpk-deps $(PY_SOURCES)
	@rm -rf $(RPCB)/venv/mpk-build
	@MPK_BUILD_BASE=$(RPCB_ABS)/venv/mpk-build $(RPCB)/venv/bin/python -m pip install $(PIP_QUIET) --no-deps --no-build-isolation --force-reinstall ./python
	@touch $@
$(RPCB)/py/rpcbench_pb2.py: bench/rpc/rpcbench.proto $(RPCB)/venv/.mpk-deps
	@mkdir -p $(RPCB)/py
	@$(RPCB)/venv/bin/python -m grpc_tools.protoc -I bench/rpc --python_out=$(RPCB)/py --grpc_python_out=$(RPCB)/py bench/rpc/rpcbench.proto

# Node: @grpc/grpc-js and @grpc/proto-loader from bench/rpc/node's lock file.
$(RPCB)/node/.mpk-npm-ci: bench/rpc/node/package.json bench/rpc/node/package-lock.json
	@mkdir -p $(RPCB)/node && cp bench/rpc/node/package.json bench/rpc/node/package-lock.json $(RPCB)/node/
	@cd $(RPCB)/node && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# js/build (mpk/rpc/node), rebuilt only when js/'s sources changed since (js-build takes a while).
$(RPCB)/.js-built: $(shell find js/src -name '*.ts' 2>/dev/null) js/package.json
	@$(MAKE) --no-print-directory js-build
	@mkdir -p $(RPCB) && touch $@

bench-rpc: $(RPCB)/bin/rpcbench-go $(RPCB)/venv/.mpk-installed $(RPCB)/py/rpcbench_pb2.py $(RPCB)/node/.mpk-npm-ci $(RPCB)/.js-built
	@$(if $(filter 1,$(QUICK)),MPK_BENCH_QUICK=1) python3 bench/rpc/run.py --go $(RPCB)/bin/rpcbench-go \
		--python $(RPCB)/venv/bin/python --py-gen $(RPCB)/py --node-modules $(RPCB)/node
