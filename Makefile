# The two commands of the README, and friends. A thin layer over CMake:
#   make demo    sandbox + install + seed + writers + console
#   make test    install what is missing, build, start PostgreSQL, run ctest
#   make bench   benchmark programs (not part of make test)
#   make soak    the crash tests with many more kills and more data
#   make fuzz    every fuzz target, a million runs each (fuzz/README.md)
#   make package Debian packages cleanupctl and libcleanup-dev (CPack)
#   make clang   CI lane: clang, -Werror, build and the unit tests
#   make lintian CI lane: make package, then lintian on both .debs
# .ci/run runs make test, then the lanes (docs/ci.md).
BUILD      ?= build
SANITIZERS ?= OFF
READLINE   ?= ON
JOBS       ?= 2
CTEST_ARGS ?=

# What a fresh Debian 12 lacks for building and testing (file: CPack's
# dependency detection for make package and cli_test_package).
# postgresql-15-plpgsql-check: cli_test_plpgsql_check.
DEB_PACKAGES = build-essential cmake pkg-config libpq-dev postgresql-15 postgresql-client-15 \
               libncurses-dev libreadline-dev libcmocka-dev tmux jq procps file python3 pgbouncer \
               postgresql-15-plpgsql-check

.PHONY: all deps configure build test demo bench soak fuzz package clang lintian clean

all: build

deps:
	@sh scripts/install-deps.sh $(DEB_PACKAGES)

configure: deps
	@cmake -S . -B $(BUILD) -DENABLE_SANITIZERS=$(SANITIZERS) -DWITH_READLINE=$(READLINE) >/dev/null

build: configure
	@cmake --build $(BUILD) -j$(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j$(JOBS) $(CTEST_ARGS)

demo: build
	@sh scripts/demo.sh $(BUILD)

# BENCH_QUICK=1: the shape matrix's skewed library at 500,000 items instead
# of 5,000,000 (bench_shapes --quick; docs/benchmarks.md says which was run).
bench: build
	@cmake --build $(BUILD) --target bench -j$(JOBS)
	@BENCH_ARGS_bench_shapes="$(if $(BENCH_QUICK),--quick )$${BENCH_ARGS_bench_shapes:-}" sh scripts/bench.sh $(BUILD)

# CLEANUP_CRASH_ROUNDS scales the kills and the data (default in make test: 12).
soak: build
	@cd $(BUILD) && CLEANUP_CRASH_ROUNDS=$${CLEANUP_CRASH_ROUNDS:-100} ctest --output-on-failure -j$(JOBS) -R '^(pg_|crash_)'

# clang's libFuzzer when it installs (Debian 12: clang 14), else gcc and the
# built-in driver; AddressSanitizer and UBSan either way. FUZZ_RUNS runs per
# target (default 1000000), FUZZ_SEED (default 1; 0 = from the clock);
# FUZZ_CC=gcc forces the built-in driver (in a new FUZZ_BUILD directory).
FUZZ_BUILD    ?= build-fuzz
FUZZ_RUNS     ?= 1000000
FUZZ_CC       ?=
FUZZ_PACKAGES  = clang libclang-rt-14-dev
fuzz: deps
	@sh scripts/install-deps.sh $(FUZZ_PACKAGES) || echo "fuzz: no clang/libFuzzer; gcc and the built-in driver" >&2
	@cc=$(FUZZ_CC); [ -n "$$cc" ] || cc=$$(command -v clang >/dev/null 2>&1 && echo clang || echo gcc); \
	  [ -f $(FUZZ_BUILD)/CMakeCache.txt ] || export CC=$$cc; \
	  cmake -S . -B $(FUZZ_BUILD) -DENABLE_FUZZ=ON -DENABLE_SANITIZERS=ON -DWITH_READLINE=OFF -DBUILD_TESTING=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) --target fuzz_targets -j$(JOBS)
	@bash fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_RUNS) $(JOBS)

# Debian packages cleanupctl and libcleanup-dev into $(BUILD)/ (CPack).
package: build
	@cd $(BUILD) && cpack -G DEB

# CI lane: the whole tree (engine, console, tests, fuzz drivers) built by
# clang with -Werror in CLANG_BUILD, then the unit tests there. clang
# comes from Debian (clang 14 on Debian 12), installed like make test's
# packages.
CLANG_BUILD    ?= build-clang
CLANG_PACKAGES  = clang
clang: deps
	@sh scripts/install-deps.sh $(CLANG_PACKAGES)
	@cmake -S . -B $(CLANG_BUILD) -DCMAKE_C_COMPILER=clang -DENABLE_WERROR=ON \
	  -DWITH_READLINE=$(READLINE) >/dev/null
	@cmake --build $(CLANG_BUILD) -j$(JOBS)
	@cd $(CLANG_BUILD) && ctest --output-on-failure -j$(JOBS) -L unit $(CTEST_ARGS)

# CI lane: the .debs of make package checked by Debian's lintian; any
# error fails (warnings are printed). --tag-display-limit 0: every
# instance shown.
LINTIAN_PACKAGES = lintian
lintian: package
	@sh scripts/install-deps.sh $(LINTIAN_PACKAGES)
	@cd $(BUILD) && lintian --fail-on error --tag-display-limit 0 cleanupctl_*.deb libcleanup-dev_*.deb

clean:
	rm -rf $(BUILD)
