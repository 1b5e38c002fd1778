# parambus: the front door. `make demo` runs the demo instrument, `make test`
# runs every test; both install what they need (Debian packages, the Python
# venv) on a fresh machine. CMake and ninja do the building underneath: the
# three build trees are CMakePresets.json's configure presets dev, asan and
# tsan, in $(BUILD)/dev, $(BUILD)/asan and $(BUILD)/tsan (build/ unless
# BUILD says otherwise), and the tests are CTest's (tests/CMakeLists.txt).

BUILD     ?= build
VENV      := $(BUILD)/venv
PYTHON    := $(VENV)/bin/python
PREFIX    ?= /usr/local
JOBS      ?= $(shell nproc)

.PHONY: all deps venv build build-asan build-tsan demo demo-hw calculator java java-demo test test-quick bench bench-quick \
        install package format clean help

all: build

help:
	@echo "make demo         build and run the demo power supply (Ctrl-C stops it)"
	@echo "make demo-hw      the demo bound to GPIO, I2C and PWM devices, in the test VM"
	@echo "make calculator   build and run the Calculator: methods and broadcasts, server and client"
	@echo "make test         build everything (plain, ASan/UBSan, TSan) and run every test"
	@echo "make test-quick   the plain build's tests only (no sanitizers, fuzzers or VM)"
	@echo "make bench        run the benchmarks (results in $(BUILD)/bench/)"
	@echo "make bench-quick  run each benchmark briefly (smoke check)"
	@echo "make java         build the Java binding's jar (java/, needs a JDK 22+; $(BUILD)/java)"
	@echo "make java-demo    the demo power supply watched and switched from Java (examples/psu/java/)"
	@echo "make install PREFIX=DIR   install libraries, headers, package files, tools and the jar"
	@echo "make package      the .deb of it all (CPack), into $(BUILD)/package/"
	@echo "make format       apply .clang-format to the C sources"

deps:
	@scripts/install-deps

venv: deps
	@scripts/make-venv $(VENV)

# Configure a tree from its preset (again when the presets change); later
# builds re-run CMake by themselves when a CMakeLists.txt changes.
$(BUILD)/%/build.ninja: CMakePresets.json | venv
	cmake --preset $* -B $(BUILD)/$* -DPBUS_PYTHON=$(abspath $(PYTHON)) >/dev/null

build: venv $(BUILD)/dev/build.ninja
	cmake --build $(BUILD)/dev -j $(JOBS)

build-asan: venv $(BUILD)/asan/build.ninja
	cmake --build $(BUILD)/asan -j $(JOBS)

build-tsan: venv $(BUILD)/tsan/build.ninja
	cmake --build $(BUILD)/tsan -j $(JOBS)

demo: build
	@examples/psu/run-demo $(BUILD)/dev

# Methods and broadcasts: the Common API C Calculator example (pbusd as the
# registry, the server, one run of the client; examples/calculator/).
calculator: build
	@examples/calculator/run $(BUILD)/dev

# The demo bound to hardware: runs in the test VM (docs/hardware-guide.md).
demo-hw: build
	@tests/kernel/run -v test-demo-hw

# tests/run-all runs CTest in each tree and counts the suites' PASS/FAIL
# lines (ctest --preset dev runs the plain build's suites by themselves).
test: build build-asan build-tsan
	@python3 tests/run-all --build $(BUILD)

# The plain build's tests only, for a quick edit-test cycle.
test-quick: build
	@python3 tests/run-all --build $(BUILD) --quick

# Scenarios 1-3 (the table, the server, method calls), 5 (Java through
# FFM: JMH from Maven Central, needs a JDK 22+), 6 and 7 (SCPI, web,
# fleet, Python) on the host, scenario 4 (hardware) in the test VM.
bench: build
	@mkdir -p $(BUILD)/bench
	python3 bench/run-param-table.py $(BUILD)/dev
	python3 bench/run-socket-server.py $(BUILD)/dev
	python3 bench/run-methods.py $(BUILD)/dev
	python3 bench/run-hw.py --runs 5
	python3 bench/run-java.py $(BUILD)/dev
	python3 bench/run-java-hw.py --out $(BUILD)/bench/java.json
	$(PYTHON) bench/run-scpi.py $(BUILD)/dev
	$(PYTHON) bench/run-web.py $(BUILD)/dev
	$(PYTHON) bench/run-fleet.py $(BUILD)/dev
	$(PYTHON) bench/run-python.py $(BUILD)/dev

bench-quick: build
	@mkdir -p $(BUILD)/bench
	python3 bench/run-param-table.py $(BUILD)/dev --quick
	python3 bench/run-socket-server.py $(BUILD)/dev --quick
	python3 bench/run-methods.py $(BUILD)/dev --quick
	python3 bench/run-hw.py --quick
	python3 bench/run-java.py $(BUILD)/dev --quick
	python3 bench/run-java-hw.py --quick --out $(BUILD)/bench/java.json
	$(PYTHON) bench/run-scpi.py $(BUILD)/dev --quick
	$(PYTHON) bench/run-web.py --quick $(BUILD)/dev
	$(PYTHON) bench/run-fleet.py --quick $(BUILD)/dev
	$(PYTHON) bench/run-python.py --quick $(BUILD)/dev

# The Java binding's jar (docs/java.md), built by Maven with the JDK that
# scripts/java-env finds, into $(BUILD)/java/parambus-VERSION.jar.
JAVA_JAR = $(BUILD)/java/parambus-$(shell sed -n 's/^project.parambus VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt).jar
java:
	@home=$$(scripts/java-env) && JAVA_HOME=$$home MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow $$MAVEN_OPTS" mvn -q -B -Dstyle.color=never -f java/pom.xml \
	    -Dpbus.java.out=$(abspath $(BUILD))/java -DskipTests package
	@echo "java: $(JAVA_JAR)"

# The demo watched and switched from Java through the class pbus-gen
# generates for it (examples/psu/java/): the demo's pbusd and simulator in
# the background, PsuWatch for 20 s, both stopped at the end.
java-demo: build java
	@examples/psu/java/run $(BUILD)/dev $(JAVA_JAR) --seconds 20

# CMake's install rules do it all (the top CMakeLists.txt): pbus-gen and
# its package, the jar to PREFIX/share/java (Debian's place for jars) as
# parambus-VERSION.jar and parambus.jar, the Python package, the units.
install: build java
	cmake --install $(BUILD)/dev --prefix $(abspath $(PREFIX))

# The Debian package of the same (CPack), into $(BUILD)/package/.
package: build java
	cmake --build $(BUILD)/dev --target package

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD)
