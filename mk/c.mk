# c/ — libmpk, the C core (CMake). Build output stays in c/build/.
SUITES += c c-asan
DRIVERS += c
APT_PACKAGES += cmake gcc make pkg-config
C_BUILD := c/build

.PHONY: test-c test-c-asan driver-c

test-c:
	@$(SUITE) c -- c/test/run.sh c $(C_BUILD)/release -DCMAKE_BUILD_TYPE=Release

# The same suite built with AddressSanitizer and UndefinedBehaviorSanitizer.
test-c-asan:
	@$(SUITE) c-asan -- c/test/run.sh c-asan $(C_BUILD)/asan -DCMAKE_BUILD_TYPE=Debug \
		-DMPK_SANITIZE=ON -DMPK_BUILD_SHARED=OFF

# The interop driver: c/driver/driver.c, built with the library, copied to spec/drivers/c.
driver-c:
	@cmake -S c -B $(C_BUILD)/release -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(C_BUILD)/release --target mpk_driver -j2 >/dev/null
	@mkdir -p spec/drivers && cp $(C_BUILD)/release/mpk_driver spec/drivers/c
