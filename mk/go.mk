# go/ — the Go module mpk.dev/go/mpk (pure Go, no dependencies). Its tests need only the Go
# toolchain; the benchmark module go/bench fetches its peers from the Go module proxy.
SUITES  += go
DRIVERS += go
GO ?= go

.PHONY: test-go driver-go bench-go

# Unit, corpus, stream, generator and example tests, then the stream tests under the race detector.
test-go:
	@$(SUITE) go -- bash -c '$(GO) -C go test -count=1 -v ./... && $(GO) -C go test -count=1 -race -v -run "Stream" .'

driver-go:
	@mkdir -p spec/drivers
	@$(GO) -C go build -o ../spec/drivers/go ./internal/driver

bench-go:
	@bash go/bench/run.sh
