# cpp/ — typed MessagePack for C++17 on libmpk (header-only; CMake). Build output stays in cpp/build/.
SUITES += cpp cpp-asan
DRIVERS += cpp
APT_PACKAGES += cmake g++ make libgtest-dev
CPP_BUILD := cpp/build

.PHONY: test-cpp test-cpp-asan driver-cpp

# The GoogleTest suite, built as C++17 and as C++20 with -Wall -Wextra -Wpedantic -Werror, and the
# examples (one built with -fno-exceptions).
test-cpp:
	@$(SUITE) cpp -- cpp/test/run.sh cpp $(CPP_BUILD)/release -DCMAKE_BUILD_TYPE=Release

# The same suite with AddressSanitizer and UndefinedBehaviorSanitizer (the C core too).
test-cpp-asan:
	@$(SUITE) cpp-asan -- cpp/test/run.sh cpp-asan $(CPP_BUILD)/asan -DCMAKE_BUILD_TYPE=Debug \
		-DMPK_CPP_SANITIZE=ON -DMPK_CPP_TEST_STANDARDS=17

# The interop driver: cpp/driver/driver.cpp, copied to spec/drivers/cpp.
driver-cpp:
	@cmake -S cpp -B $(CPP_BUILD)/release -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(CPP_BUILD)/release --target mpk_cpp_driver -j2 >/dev/null
	@mkdir -p spec/drivers && cp $(CPP_BUILD)/release/mpk_cpp_driver spec/drivers/cpp
