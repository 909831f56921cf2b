# SPDX-License-Identifier: MIT
# The user's entry points. Everything real happens in CMake; this file only
# names the steps. `make test` and `make demo` install missing Debian
# packages first (scripts/install-deps), so each works on a fresh machine.

BUILD      ?= build
ASAN_BUILD ?= build-asan
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc)
# Tests at once: three times the CPUs. Most of the suite's time is waiting
# (timeouts, sleeps, sockets, child processes), not computing: on two CPUs
# the whole suite took 323 s at -j2 and 202 s at -j4, the sanitizer half
# 443 s and 315 s (docs/status.md, session 44); at -j6 159 s and 210-242 s,
# at -j8 the sanitizer half no less (245 s), every test passing in each
# (session 48).
TEST_JOBS  ?= $(shell echo $$(( $(JOBS) * 3 )))

.PHONY: all build deps test test-fast test-asan demo demo-waves bench install clean

all: build

deps:
	scripts/install-deps

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

$(ASAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DCAP_SANITIZE=ON

# The whole suite twice: the normal build, then under ASan+UBSan.
test: deps build test-fast test-asan

test-fast: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(TEST_JOBS)

test-asan: $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(TEST_JOBS)

# The main job: Knot, the thread-per-connection web server on this
# library, serving its bundled site on a free port (the URL is printed;
# Ctrl-C stops it).
demo: deps build
	apps/knot/run-demo.sh $(BUILD)

# Threads at scale: 100,000 threads sleeping and waking in waves.
demo-waves: deps build
	$(BUILD)/demo/demo_waves

bench: build
	scripts/install-deps --bench
	bench/run-all

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
