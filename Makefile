# The two commands of the README, and friends. A thin layer over CMake:
#   make demo    sandbox + install + seed + writers + console
#   make test    install what is missing, build, start PostgreSQL, run ctest
#   make bench   benchmark programs (not part of make test)
#   make soak    the crash tests with many more kills and more data
BUILD      ?= build
SANITIZERS ?= OFF
READLINE   ?= ON
JOBS       ?= 2
CTEST_ARGS ?=

# What a fresh Debian 12 lacks for building and testing.
DEB_PACKAGES = build-essential cmake pkg-config libpq-dev postgresql-15 postgresql-client-15 \
               libncurses-dev libreadline-dev libcmocka-dev tmux jq procps

.PHONY: all deps configure build test demo bench soak clean

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

bench: build
	@cmake --build $(BUILD) --target bench -j$(JOBS)
	@sh scripts/bench.sh $(BUILD)

# CLEANUP_CRASH_ROUNDS scales the kills and the data (default in make test: 12).
soak: build
	@cd $(BUILD) && CLEANUP_CRASH_ROUNDS=$${CLEANUP_CRASH_ROUNDS:-100} ctest --output-on-failure -j$(JOBS) -R '^(pg_|crash_)'

clean:
	rm -rf $(BUILD)
