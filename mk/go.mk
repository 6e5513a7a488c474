# go/ — the Go module mpk.dev/go/mpk (pure Go, no dependencies). Its tests need only the Go
# toolchain; the benchmark module go/bench fetches its peers from the Go module proxy.
SUITES  += go go-fuzz
DRIVERS += go
BENCHES += go
# go/mpkrpc's live tests drive Debian's nvim (0.7.2).
APT_PACKAGES += neovim
GO ?= go

.PHONY: test-go test-go-fuzz driver-go bench-go

# go vet and staticcheck (pinned, fetched from the Go module proxy on first use), unit, corpus,
# stream, generator and example tests, then the stream tests, the generated encoders' shared
# scratch buffers and the RPC endpoint (go/mpkrpc, its hostile-peer memory bounds too) under the race detector. neovim is installed
# first: mpkrpc's live Neovim tests fail, not skip, without nvim.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
test-go:
	@tools/apt-ensure neovim
	@$(SUITE) go -- bash -c '$(GO) -C go vet ./... && $(GO) -C go run $(STATICCHECK) ./... && $(GO) -C go test -count=1 -v ./... && $(GO) -C go test -count=1 -race -v -run "Stream" . && $(GO) -C go test -count=1 -race -v -run "MarshalScratchConcurrent|MarshalPaths|MarshalLarge" ./internal/gentest && $(GO) -C go test -count=1 -race -v -run "Endpoint|NetRPC|Hostile" ./mpkrpc'

# Fuzz smoke: each target after its corpus seeds (spec/vectors), for a number of executions
# rather than a duration: go1.26's -fuzztime=<duration> can fail at the deadline with a spurious
# "context deadline exceeded" (golang/go#75804, fixed in go1.27). A few seconds a target here;
# -timeout only catches a hang, so it leaves a slow, loaded CI machine a wide margin.
GO_FUZZ_TARGETS := .:FuzzDecode:5000 .:FuzzLimits:20000 ./internal/gentest:FuzzGeneratedUnmarshal:50000
test-go-fuzz:
	@$(SUITE) go-fuzz -- bash -c 'set -e; for t in $(GO_FUZZ_TARGETS); do IFS=: read -r pkg name n <<< "$$t"; $(GO) -C go test -run "^$$" -fuzz "^$$name$$" -fuzztime "$${n}x" -timeout 600s -v "$$pkg"; done'

driver-go:
	@mkdir -p spec/drivers
	@$(GO) -C go build -o ../spec/drivers/go ./internal/driver

# 15 rounds of 30 ms per side (about 380 rows, 4 minutes); QUICK=1 (or MPK_BENCH_QUICK=1): 3 rounds
# of 20 ms per side; ROUNDS, BENCHTIME, CLOCK override.
bench-go:
	@tools/apt-ensure protobuf-compiler
	@$(if $(filter 1,$(QUICK)),MPK_BENCH_QUICK=1 ,)$(if $(ROUNDS),ROUNDS=$(ROUNDS) ,)$(if $(BENCHTIME),BENCHTIME=$(BENCHTIME) ,)$(if $(CLOCK),CLOCK=$(CLOCK) ,)bash go/bench/run.sh
