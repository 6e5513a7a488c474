# The C benchmark (c/bench) and the C fuzzer (c/fuzz). See c/bench/README.md and c/fuzz/README.md.
BENCHES += c
SUITES += c-fuzz
APT_PACKAGES += cmake g++ clang libclang-rt-14-dev libmsgpack-dev rapidjson-dev valgrind

C_BENCH_BUILD := build/c-bench
C_BENCH_DATA ?= ../shared/bench-data
C_BENCH_ROUNDS ?= 7

.PHONY: bench-c test-c-fuzz

# Builds against the working tree's c/, -O2, runs every row, then the instruction counts
# (c/bench/profile.py), into bench/results/c.md.
bench-c:
	@cmake -S c/bench -B $(C_BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(C_BENCH_BUILD) -j2 >/dev/null
	@$(C_BENCH_BUILD)/mpk_bench --rounds $(C_BENCH_ROUNDS) --data $(C_BENCH_DATA) --out bench/results/c.md \
	  --env "Debian packages: libmsgpack-dev $$(dpkg-query -W -f='$${Version}' libmsgpack-dev), rapidjson-dev $$(dpkg-query -W -f='$${Version}' rapidjson-dev)" \
	  --env "reproduce: make bench-c (C_BENCH_ROUNDS=$(C_BENCH_ROUNDS))" >/dev/null
	@echo >> bench/results/c.md
	@python3 c/bench/profile.py --data $(C_BENCH_DATA) >> bench/results/c.md
	@cat bench/results/c.md

# The fuzz smoke run (c/fuzz/smoke.py): build against HEAD's c/, replay every seed, fuzz 40 s.
test-c-fuzz:
	@$(SUITE) c-fuzz -- python3 c/fuzz/smoke.py --seconds 40
