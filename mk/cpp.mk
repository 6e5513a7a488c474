# cpp/ — typed MessagePack for C++17 on libmpk (header-only; CMake). Build output stays in cpp/build/.
SUITES += cpp cpp-asan
DRIVERS += cpp
APT_PACKAGES += cmake g++ clang make libgtest-dev
CPP_BUILD := cpp/build

.PHONY: test-cpp test-cpp-asan driver-cpp

# The GoogleTest suite, built as C++17 and as C++20 with -Wall -Wextra -Wpedantic -Werror, the
# examples (one built with -fno-exceptions), and a clang++ warning check of both standards.
test-cpp:
	@$(SUITE) cpp -- cpp/test/run.sh cpp $(CPP_BUILD)/release -DCMAKE_BUILD_TYPE=Release

# The same suite with AddressSanitizer and UndefinedBehaviorSanitizer (the C core too).
test-cpp-asan:
	@MPK_CPP_NO_CLANG=1 $(SUITE) cpp-asan -- cpp/test/run.sh cpp-asan $(CPP_BUILD)/asan -DCMAKE_BUILD_TYPE=Debug \
		-DMPK_CPP_SANITIZE=ON -DMPK_CPP_TEST_STANDARDS=17

# The interop driver: cpp/driver/driver.cpp, copied to spec/drivers/cpp.
driver-cpp:
	@cmake -S cpp -B $(CPP_BUILD)/release -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(CPP_BUILD)/release --target mpk_cpp_driver -j2 >/dev/null
	@mkdir -p spec/drivers && cp $(CPP_BUILD)/release/mpk_cpp_driver spec/drivers/cpp

# The seed's benchmark (cpp/bench): mpk vs msgpack-cxx 4.1.3 vs Protocol Buffers 3.21 vs RapidJSON on
# Test1-Test4, Product and 100 Products (typed), every other common workload with a protobuf message
# (typed, one message per op: cpp/bench/workloads.cpp), and the schemaless ones (twitter,
# citm_catalog, canada, rb_twitter, js_*) through each library's tree. Its Debian packages are installed here, not by `make deps`, so `make test` does
# not need them. Writes bench/results/cpp.md and the sidecar bench/results/cpp.json.
# QUICK=1 (or MPK_BENCH_QUICK=1): 1 run of 1/8 of the counts.
BENCHES += cpp
CPP_BENCH_RUNS ?= 5

.PHONY: bench-cpp
bench-cpp: bench-workloads
	@tools/apt-ensure libmsgpack-cxx-dev libprotobuf-dev protobuf-compiler rapidjson-dev
	@cmake -S cpp -B $(CPP_BUILD)/bench -DCMAKE_BUILD_TYPE=Release -DMPK_CPP_BUILD_BENCH=ON \
		-DMPK_CPP_BUILD_TESTS=OFF -DMPK_CPP_BUILD_DRIVER=OFF >/dev/null
	@cmake --build $(CPP_BUILD)/bench -j2 >/dev/null
	@mkdir -p bench/results
	@$(CPP_BUILD)/bench/bench/mpk_cpp_bench --runs $(CPP_BENCH_RUNS) $(if $(filter 1,$(QUICK)),--quick,) \
		--data build/bench-workloads --md bench/results/cpp.md --json bench/results/cpp.json \
		--env "Debian packages: libmsgpack-cxx-dev $$(dpkg-query -W -f='$${Version}' libmsgpack-cxx-dev), libprotobuf-dev $$(dpkg-query -W -f='$${Version}' libprotobuf-dev), rapidjson-dev $$(dpkg-query -W -f='$${Version}' rapidjson-dev); reproduce: make bench-cpp (CPP_BENCH_RUNS=$(CPP_BENCH_RUNS))" \
		>/dev/null
	@cat bench/results/cpp.md
