# Thin wrapper over CMake: `make bench` and `make test` are all a user needs.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX ?= /usr/local
CMAKE_FLAGS ?=

.PHONY: all configure build test bench install asan fuzz clean

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# All tests this machine can run (GPU tests skip with a reason when there is no device); after
# ctest's own summary, every skipped test with its reason. The exit status is ctest's.
test: build
	(cd $(BUILD) && ctest --output-on-failure -j $(JOBS)); status=$$?; \
	  sh scripts/test-summary.sh $(BUILD); exit $$status

# The default benchmark: on the GPU if one is present, else on the CPU.
bench: build
	$(BUILD)/nz bench

# Install the library, header, nz, the CMake package and nonzero.pc under PREFIX.
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# CPU tests under AddressSanitizer + UndefinedBehaviorSanitizer (no CUDA in this build).
asan:
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DNZ_SANITIZE=ON -DNZ_ENABLE_CUDA=OFF
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -LE gpu

# libFuzzer targets (clang), run briefly.
fuzz:
	CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNZ_FUZZ=ON \
	  -DNZ_ENABLE_CUDA=OFF -DNZ_BUILD_TESTS=ON
	cmake --build build-fuzz -j $(JOBS)
	sh scripts/run-fuzz.sh build-fuzz $${FUZZ_SECONDS:-20}

clean:
	rm -rf $(BUILD) build-asan build-fuzz
