# The C benchmark (c/bench) and the C fuzzer (c/fuzz). See c/bench/README.md and c/fuzz/README.md.
BENCHES += c
SUITES += c-fuzz
APT_PACKAGES += cmake g++ clang libclang-rt-14-dev libmsgpack-dev rapidjson-dev valgrind

C_BENCH_BUILD := build/c-bench
C_BENCH_DATA ?= ../shared/bench-data
C_BENCH_ROUNDS ?= 7
# Extra arguments for both C bench programs (`make bench QUICK=1` passes --quick).
C_BENCH_ARGS ?=

.PHONY: bench-c test-c-fuzz

# Builds against the working tree's c/, -O2, runs every row, then the instruction counts
# (c/bench/profile.py), then Test1-Test4 against protobuf-c (mpk_bench_pb), into bench/results/c.md.
# protobuf-c is installed here, not by `make deps`, so `make test` does not need it.
bench-c:
	@tools/apt-ensure libprotobuf-c-dev protobuf-c-compiler pkg-config
	@cmake -S c/bench -B $(C_BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(C_BENCH_BUILD) -j2 >/dev/null
	@$(C_BENCH_BUILD)/mpk_bench --rounds $(C_BENCH_ROUNDS) $(C_BENCH_ARGS) --data $(C_BENCH_DATA) --out bench/results/c.md \
	  --env "Debian packages: libmsgpack-dev $$(dpkg-query -W -f='$${Version}' libmsgpack-dev), rapidjson-dev $$(dpkg-query -W -f='$${Version}' rapidjson-dev)" \
	  --env "reproduce: make bench-c (C_BENCH_ROUNDS=$(C_BENCH_ROUNDS))" >/dev/null
	@echo >> bench/results/c.md
	@python3 c/bench/profile.py --data $(C_BENCH_DATA) >> bench/results/c.md
	@echo >> bench/results/c.md
	@$(C_BENCH_BUILD)/mpk_bench_pb --rounds $(C_BENCH_ROUNDS) $(C_BENCH_ARGS) >> bench/results/c.md
	@cat bench/results/c.md

# The fuzz smoke run (c/fuzz/smoke.py): build against the working tree's c/, replay every seed, fuzz 40 s.
test-c-fuzz:
	@$(SUITE) c-fuzz -- python3 c/fuzz/smoke.py --seconds 40
