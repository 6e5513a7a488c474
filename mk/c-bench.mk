# The C benchmark (c/bench) and the C fuzzer (c/fuzz). See c/bench/README.md and c/fuzz/README.md.
BENCHES += c
SUITES += c-fuzz
APT_PACKAGES += cmake g++ clang libclang-rt-14-dev

C_BENCH_BUILD := build/c-bench
C_BENCH_DATA ?= ../shared/bench-data
C_BENCH_ROUNDS ?= 7
# Extra arguments for the C bench programs (`make bench QUICK=1` passes --quick; so does
# MPK_BENCH_QUICK=1 in the environment or on the command line).
C_BENCH_ARGS ?=
C_BENCH_QUICK := $(if $(filter 1,$(QUICK) $(MPK_BENCH_QUICK))$(filter --quick,$(C_BENCH_ARGS)),--quick,)
# what the programs get: C_BENCH_ARGS, with --quick once when quick
C_BENCH_FLAGS := $(filter-out --quick,$(C_BENCH_ARGS)) $(C_BENCH_QUICK)
C_BENCH_ROWS := $(C_BENCH_BUILD)/rows
C_BENCH_MD := bench/results/c.md

.PHONY: bench-c test-c-fuzz

# Builds against the working tree's c/, -O2, runs every row (mpk_bench), then the instruction counts
# (c/bench/profile.py), then Test1-Test4 and the Product against protobuf-c (mpk_bench_pb), then every
# common workload of build/bench-workloads (mpk_bench_workloads: mpk, msgpack-c, protobuf-c, RapidJSON),
# into bench/results/c.md; the programs' rows go into the sidecar bench/results/c.json
# (c/bench/sidecar.py; the workloads' rows first: the report labels a workload by its first row, the
# manifest's title). protobuf-c is installed here, not by `make deps`, so `make test` does not need it.
bench-c: bench-workloads
	@tools/apt-ensure libprotobuf-c-dev protobuf-c-compiler pkg-config libmsgpack-dev rapidjson-dev valgrind
	@cmake -S c/bench -B $(C_BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(C_BENCH_BUILD) -j2 >/dev/null
	@test -x $(C_BENCH_BUILD)/mpk_bench_workloads || { echo "bench-c: mpk_bench_workloads was not built (protobuf-c missing?)"; exit 1; }
	@mkdir -p bench/results $(C_BENCH_ROWS) && rm -f $(C_BENCH_ROWS)/*.jsonl
	@echo "[bench-c] mpk_bench: synthetic rows and the JSON corpora ($(if $(C_BENCH_QUICK),quick,$(C_BENCH_ROUNDS) rounds))"
	@$(C_BENCH_BUILD)/mpk_bench --rounds $(C_BENCH_ROUNDS) $(C_BENCH_FLAGS) --data $(C_BENCH_DATA) --out $(C_BENCH_MD) \
	  --rows $(C_BENCH_ROWS)/main.jsonl \
	  --env "Debian packages: libmsgpack-dev $$(dpkg-query -W -f='$${Version}' libmsgpack-dev), rapidjson-dev $$(dpkg-query -W -f='$${Version}' rapidjson-dev), libprotobuf-c-dev $$(dpkg-query -W -f='$${Version}' libprotobuf-c-dev)" \
	  --env "reproduce: make bench-c (C_BENCH_ROUNDS=$(C_BENCH_ROUNDS))$(if $(C_BENCH_QUICK), QUICK=1: small sizes and one round,)" >/dev/null
	@echo "[bench-c] profile.py: instruction counts under callgrind"
	@echo >> $(C_BENCH_MD)
	@python3 c/bench/profile.py --data $(C_BENCH_DATA) >> $(C_BENCH_MD)
	@echo "[bench-c] mpk_bench_pb: Test1-Test4 and the Product against protobuf-c"
	@echo >> $(C_BENCH_MD)
	@$(C_BENCH_BUILD)/mpk_bench_pb --rounds $(C_BENCH_ROUNDS) $(C_BENCH_FLAGS) --rows $(C_BENCH_ROWS)/pb.jsonl >> $(C_BENCH_MD)
	@echo "[bench-c] mpk_bench_workloads: the common workloads, mpk / msgpack-c / protobuf-c / RapidJSON"
	@echo >> $(C_BENCH_MD)
	@$(C_BENCH_BUILD)/mpk_bench_workloads --rounds $(C_BENCH_ROUNDS) $(C_BENCH_FLAGS) --dir build/bench-workloads \
	  --rows $(C_BENCH_ROWS)/workloads.jsonl >> $(C_BENCH_MD) 2>$(C_BENCH_ROWS)/workloads.log || { cat $(C_BENCH_ROWS)/workloads.log; exit 1; }
	@python3 c/bench/sidecar.py --out bench/results/c.json $(C_BENCH_QUICK) \
	  --version "gcc=$$(gcc -dumpfullversion)" \
	  --version "libmsgpack-dev=$$(dpkg-query -W -f='$${Version}' libmsgpack-dev)" \
	  --version "rapidjson-dev=$$(dpkg-query -W -f='$${Version}' rapidjson-dev)" \
	  --version "libprotobuf-c-dev=$$(dpkg-query -W -f='$${Version}' libprotobuf-c-dev)" \
	  $(C_BENCH_ROWS)/workloads.jsonl $(C_BENCH_ROWS)/pb.jsonl $(C_BENCH_ROWS)/main.jsonl
	@cat $(C_BENCH_MD)

# The fuzz smoke run (c/fuzz/smoke.py): build against the working tree's c/, replay every seed, fuzz 40 s.
test-c-fuzz:
	@$(SUITE) c-fuzz -- python3 c/fuzz/smoke.py --seconds 40
