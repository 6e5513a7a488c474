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
