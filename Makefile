# Thin wrapper over CMake: `make bench` and `make test` are all a user needs.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX ?= /usr/local
CMAKE_FLAGS ?=

.PHONY: all configure build test bench install wheel asan tsan fuzz clean

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

# The Python package with the built library inside, as a wheel in $(BUILD)/wheel (offline;
# Debian's python3-setuptools, python3-wheel, python3-pip).
wheel: build
	sh scripts/build-wheel.sh $(BUILD) $(BUILD)/wheel

# CPU tests under AddressSanitizer + UndefinedBehaviorSanitizer (no CUDA in this build).
asan:
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DNZ_SANITIZE=ON -DNZ_ENABLE_CUDA=OFF
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -LE gpu

# The unit tests (the thread-safety test among them) under ThreadSanitizer (clang, no CUDA).
# OpenMP is off in this build: libgomp is not instrumented, so every parallel region would be
# reported as a race (false positives); the tests' own pthreads are what TSan checks here.
# unit/test_spmm is left out: it starts no threads and ran past ctest's 600 s under TSan.
tsan:
	CC=clang cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNZ_ENABLE_CUDA=OFF \
	  -DCMAKE_DISABLE_FIND_PACKAGE_OpenMP=TRUE -DCMAKE_C_FLAGS=-fsanitize=thread \
	  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	  ctest --output-on-failure -j $(JOBS) -L unit -E 'unit/test_spmm$$'

# libFuzzer targets (clang), run briefly.
fuzz:
	CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNZ_FUZZ=ON \
	  -DNZ_ENABLE_CUDA=OFF -DNZ_BUILD_TESTS=ON
	cmake --build build-fuzz -j $(JOBS)
	sh scripts/run-fuzz.sh build-fuzz $${FUZZ_SECONDS:-20}

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz
