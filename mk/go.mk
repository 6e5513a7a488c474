# go/ — the Go module mpk.dev/go/mpk (pure Go, no dependencies). Its tests need only the Go
# toolchain; the benchmark module go/bench fetches its peers from the Go module proxy.
SUITES  += go go-fuzz
DRIVERS += go
BENCHES += go
GO ?= go

.PHONY: test-go test-go-fuzz driver-go bench-go

# Unit, corpus, stream, generator and example tests, then the stream tests under the race detector.
test-go:
	@$(SUITE) go -- bash -c '$(GO) -C go test -count=1 -v ./... && $(GO) -C go test -count=1 -race -v -run "Stream" .'

# Fuzz smoke: each target for 8 s after its corpus seeds (spec/vectors), under a minute in all.
GO_FUZZ_TARGETS := .:FuzzDecode .:FuzzLimits ./internal/gentest:FuzzGeneratedUnmarshal
test-go-fuzz:
	@$(SUITE) go-fuzz -- bash -c 'set -e; for t in $(GO_FUZZ_TARGETS); do $(GO) -C go test -run "^$$" -fuzz "^$${t#*:}$$" -fuzztime 8s -v "$${t%%:*}"; done'

driver-go:
	@mkdir -p spec/drivers
	@$(GO) -C go build -o ../spec/drivers/go ./internal/driver

bench-go:
	@bash go/bench/run.sh
