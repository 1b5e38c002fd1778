# parambus: the front door. `make demo` runs the demo instrument, `make test`
# runs every test; both install what they need (Debian packages, the Python
# venv) on a fresh machine. CMake and ninja do the building underneath.

BUILD     ?= build
VENV      := $(BUILD)/venv
PYTHON    := $(VENV)/bin/python
PREFIX    ?= /usr/local
JOBS      ?= $(shell nproc)
CMAKE_GEN := -G Ninja -DPBUS_PYTHON=$(abspath $(PYTHON))

.PHONY: all deps venv build build-asan build-tsan demo demo-hw test test-quick bench bench-quick \
        install format clean help

all: build

help:
	@echo "make demo         build and run the demo power supply (Ctrl-C stops it)"
	@echo "make demo-hw      the demo bound to GPIO, I2C and PWM devices, in the test VM"
	@echo "make test         build everything (plain, ASan/UBSan, TSan) and run every test"
	@echo "make bench        run the benchmarks (results in $(BUILD)/bench/)"
	@echo "make bench-quick  run each benchmark briefly (smoke check)"
	@echo "make install PREFIX=DIR   install libraries, headers, package files and tools"
	@echo "make format       apply .clang-format to the C sources"

deps:
	@scripts/install-deps

venv: deps
	@scripts/make-venv $(VENV)

$(BUILD)/dev/build.ninja: | venv
	cmake -S . -B $(BUILD)/dev $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

build: venv $(BUILD)/dev/build.ninja
	ninja -C $(BUILD)/dev -j $(JOBS)

build-asan: venv
	cmake -S . -B $(BUILD)/asan $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Debug \
	      -DPBUS_SANITIZE=address,undefined -DPBUS_BUILD_BENCH=OFF >/dev/null
	ninja -C $(BUILD)/asan -j $(JOBS)

build-tsan: venv
	cmake -S . -B $(BUILD)/tsan $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	      -DPBUS_SANITIZE=thread -DPBUS_BUILD_BENCH=OFF >/dev/null
	ninja -C $(BUILD)/tsan -j $(JOBS)

demo: build
	@examples/psu/run-demo $(BUILD)/dev

# The demo bound to hardware: runs in the test VM (docs/hardware-guide.md).
demo-hw: build
	@tests/kernel/run -v test-demo-hw

test: build build-asan build-tsan
	@python3 tests/run-all --build $(BUILD) --venv $(VENV)

# The plain build's tests only, for a quick edit-test cycle.
test-quick: build
	@python3 tests/run-all --build $(BUILD) --venv $(VENV) --quick

# Scenario 1 (the table) on the host, scenario 4 (hardware) in the test VM.
bench: build
	@mkdir -p $(BUILD)/bench
	python3 bench/run-param-table.py $(BUILD)/dev
	python3 bench/run-socket-server.py $(BUILD)/dev
	python3 bench/run-hw.py --runs 5

bench-quick: build
	@mkdir -p $(BUILD)/bench
	python3 bench/run-param-table.py $(BUILD)/dev --quick
	python3 bench/run-socket-server.py $(BUILD)/dev --quick
	python3 bench/run-hw.py --quick

install: build
	cmake --install $(BUILD)/dev --prefix $(abspath $(PREFIX))
	$(PYTHON) -m pip install -q --disable-pip-version-check --upgrade \
	    --target $(abspath $(PREFIX))/lib/parambus/python ./gen
	install -D -m 755 scripts/pbus-gen.in $(abspath $(PREFIX))/bin/pbus-gen

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD)
