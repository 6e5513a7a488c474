# ruby/ — the CRuby extension (gem "mpk", `require "mpk"`) built on the C core's sources in c/src.
# Suite: ruby (RSpec: corpus, streams, differential vs Debian's msgpack-ruby, limits, hostile input,
# GC.stress). Driver: spec/drivers/ruby. Everything builds under ruby/build/.
SUITES  += ruby
DRIVERS += ruby
APT_PACKAGES += ruby ruby-dev ruby-rspec rake ruby-msgpack gcc make

RB_BUILD := ruby/build
RB_SO := $(RB_BUILD)/lib/mpk/mpk.so
RB_SOURCES := $(wildcard ruby/ext/mpk/*.c ruby/ext/mpk/*.h ruby/ext/mpk/extconf.rb \
	c/src/*.c c/src/*.h c/include/*.h c/include/mpk/*.h)

.PHONY: test-ruby driver-ruby

# The extension is compiled by its own extconf.rb (mkmf) in ruby/build/ext, then placed where
# `-I ruby/build/lib` finds it as "mpk/mpk".
$(RB_SO): $(RB_SOURCES)
	@tools/apt-ensure ruby ruby-dev gcc make
	@rm -rf $(RB_BUILD)/ext # mkmf's Makefile does not track headers: a stale object can outlive a header change
	@mkdir -p $(RB_BUILD)/ext $(RB_BUILD)/lib/mpk
	@cd $(RB_BUILD)/ext && { ruby ../../ext/mpk/extconf.rb && $(MAKE) --no-print-directory V=0; } > build.log 2>&1 \
		|| { cat build.log; exit 1; }
	@cp $(RB_BUILD)/ext/mpk.so $@.tmp && mv -f $@.tmp $@ # a new file: a running process keeps the old one

test-ruby: $(RB_SO)
	@tools/apt-ensure ruby-rspec ruby-msgpack
	@$(SUITE) ruby -- ruby/spec/run

driver-ruby: $(RB_SO)
	@mkdir -p spec/drivers
	@printf '#!/bin/sh\n# made by make driver-ruby\nd="$$(dirname "$$0")/../.."\nexec ruby -I "$$d/ruby/lib" -I "$$d/$(RB_BUILD)/lib" "$$d/ruby/spec_support/driver.rb"\n' > spec/drivers/ruby
	@chmod +x spec/drivers/ruby

# The benchmark (not a test): mpk vs msgpack-ruby, Oj, json and google-protobuf on every workload
# of build/bench-workloads (made by `make bench-workloads` when missing; google-protobuf on the
# typed ones), into bench/results/ruby.md and its sidecar ruby.json. The protobuf classes are
# generated here, at bench time, from bench/workloads/*.proto into build/ruby-bench-pb
# (google-protobuf is a bench-only dependency, not installed by `make test`).
# QUICK=1 / MPK_BENCH_QUICK=1: 2 rounds of short samples (about 30 s); the full run about 3 minutes.
BENCHES += ruby
RB_BENCH_ROUNDS ?= 9
RB_BENCH_PB := build/ruby-bench-pb
.PHONY: bench-ruby
bench-ruby: $(RB_SO)
	@tools/apt-ensure ruby-msgpack ruby-oj ruby-google-protobuf protobuf-compiler
	@test -f build/bench-workloads/manifest.json || $(MAKE) --no-print-directory bench-workloads
	@mkdir -p bench/results $(RB_BENCH_PB)
	@protoc --ruby_out=$(RB_BENCH_PB) -I bench/workloads bench/workloads/seed.proto bench/workloads/workloads.proto
	@ruby -I ruby/lib -I $(RB_BUILD)/lib ruby/bench/bench.rb --rounds $(RB_BENCH_ROUNDS) --pb-dir $(RB_BENCH_PB) \
		$(if $(filter 1,$(QUICK) $(MPK_BENCH_QUICK)),--quick,) --out bench/results/ruby.md --json bench/results/ruby.json

# The suite with the extension built under AddressSanitizer and UBSan (not part of `make test`:
# the interpreter is not instrumented, so the runtimes are preloaded, and the examples that start
# child processes (tagged :subprocess: ulimit, Ractors, the gem build) are left out).
RB_ASAN := $(RB_BUILD)/asan
.PHONY: test-ruby-asan
test-ruby-asan:
	@mkdir -p $(RB_ASAN)/ext $(RB_ASAN)/lib/mpk
	@cd $(RB_ASAN)/ext && { MPK_OPTFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
		ruby ../../../ext/mpk/extconf.rb --with-ldflags="-fsanitize=address,undefined" && $(MAKE) --no-print-directory V=0; } \
		> build.log 2>&1 || { cat build.log; exit 1; }
	@cp $(RB_ASAN)/ext/mpk.so $(RB_ASAN)/lib/mpk/mpk.so.tmp && mv -f $(RB_ASAN)/lib/mpk/mpk.so.tmp $(RB_ASAN)/lib/mpk/mpk.so
	@LD_PRELOAD="$$(gcc -print-file-name=libasan.so):$$(gcc -print-file-name=libubsan.so)" \
		ASAN_OPTIONS=detect_leaks=0:detect_stack_use_after_return=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		$(SUITE) ruby-asan -- ruby -C ruby -I lib -I build/asan/lib -S rspec --require ./spec/spec_helper.rb \
		--format progress --format MPKSpecCount --tag ~subprocess
