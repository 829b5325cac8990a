# toroid: the two commands of the README.
#   make demo   install what is missing, build, run toroid-demo
#   make test   install what is missing, build, run the test suites (unit, pmd), then the
#               same suites under ASan+UBSan and a short libFuzzer run of the receive path
# Both work as root on a fresh Debian bookworm machine, with no hugepages.

BUILD    ?= build
MESON    ?= meson
NINJA    ?= ninja
# Debian packages the build and the tests need.
PACKAGES ?= gcc pkg-config meson ninja-build libdpdk-dev dpdk dpdk-dev libpcap-dev libinih-dev \
            tcpdump python3 tshark clang libclang-rt-14-dev iproute2 valgrind man-db \
            libfabric-dev libfabric-bin openmpi-bin libopenmpi-dev git clang-format \
            debhelper dpkg-dev systemd
# What `make bench` compares against (peers measured in the same run), installed by bench itself.
BENCH_PACKAGES ?= ucx-utils sockperf netpipe-openmpi
SUITES   ?= unit pmd
# `make test` also runs the suites under ASan+UBSan (gcc) and the libFuzzer harnesses (clang).
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
# Tests not run under ASan, as a grep -E pattern on test names:
# docs compiles the documentation's examples against the build's libraries, without ASan;
# packages checks the Makefile, not code: once is enough; ipm_smoke runs valgrind, which cannot
# run an ASan binary; install links a program without the sanitizer against the installed copy;
# vni_pdump starts dpdk-dumpcap as a secondary process, which cannot map an ASan primary's
# memory at the same addresses (ASan reserves them for its shadow); deb builds and installs the
# Debian packages from the sources, with no sanitizer: once is enough.
# bench_partial and bench_text run bench/run.py (Python) on stub programs: no compiled code.
# compare_smoke runs bench/compare.py on toroid-perf's in-process put_rate and put_lat, which
# perf_smoke runs under ASan. perf_hosts_veth is toroid-perf --server/--client over af_packet
# on a veth, paced and timed, and perf_hosts_memif the same over memif (the pacing, --duration
# and --interval): routed runs --server/--client over af_packet under ASan (and -R).
# perf_figures compares toroid-perf's figures with counters kept outside it, over memif and
# veth: the same program paths as perf_smoke and routed, which run under ASan. top runs the
# Python toroid-top against toroid-perf's telemetry, whose handlers test_telemetry and
# perf_smoke run under ASan. coll_27 is the 3-D scale run of the collectives (27 nodes) whose
# code coll_1, coll_5, coll_8 and coll_tiny run under ASan; tools checks how the programs end
# (interrupted, long runs, --hgrm), timed, and runs them again: their paths run under ASan in
# perf_smoke, app_args and the vni tests.
# layers, format and size check the sources and the build's link lines: no program of ours runs.
ASAN_SKIP ?= docs|packages|ipm_smoke|install|vni_pdump|deb|bench_partial|bench_text|compare_smoke|perf_hosts_veth|perf_hosts_memif|perf_figures|top|coll_27|tools|layers|format|size
# DPDK's EAL keeps its memory until exit by design: no leak report. Any other finding fails.
ASAN_ENV ?= ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
            UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
FUZZ_PARSE_SECONDS ?= 10
FUZZ_RX_SECONDS ?= 25
DEMO_ARGS ?=

.PHONY: all deps build demo test test-asan test-fuzz bench ipm compare deb clean

all: build

deps:
	@missing=""; \
	for p in $(PACKAGES) $(EXTRA_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing$$missing"; \
		if [ "$$(id -u)" != 0 ]; then echo "deps: run as root (or install:$$missing)"; exit 1; fi; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends $$missing >/dev/null \
			|| { echo "deps: apt-get install failed"; exit 1; }; \
	fi

$(BUILD)/build.ninja:
	$(MESON) setup $(BUILD) --buildtype=release

build: deps $(BUILD)/build.ninja
	$(NINJA) -C $(BUILD)

demo: build
	./$(BUILD)/apps/toroid-demo/toroid-demo $(DEMO_ARGS)

test: build
	@set -e; rc=0; \
	rm -f $(ASAN_BUILD)/meson-logs/testlog.json $(FUZZ_BUILD)/fuzz/testlog.json; \
	$(MESON) test -C $(BUILD) --print-errorlogs $(addprefix --suite ,$(SUITES)) || rc=$$?; \
	$(MAKE) --no-print-directory test-asan || rc=1; \
	$(MAKE) --no-print-directory test-fuzz || rc=1; \
	python3 tools/test-summary.py $(BUILD)/meson-logs/testlog.json \
		$(ASAN_BUILD)/meson-logs/testlog.json $(FUZZ_BUILD)/fuzz/testlog.json; \
	exit $$rc

# The suites again, built with AddressSanitizer and UndefinedBehaviorSanitizer.
# -Og: under the sanitizers gcc compiles the engine 3 x faster than at -O2 (core/tx.c in 11 s
# against 33 s on the 2-CPU machine; the whole build 2.3 min against 4.5), and keeps more of
# the checks that optimisation would fold away.
$(ASAN_BUILD)/build.ninja:
	CC=gcc $(MESON) setup $(ASAN_BUILD) -Ddebug=true -Doptimization=g -Db_lto=false \
		-Db_sanitize=address,undefined -Db_lundef=false -Dc_args=-fno-sanitize-recover=undefined

test-asan: deps $(ASAN_BUILD)/build.ninja
	$(NINJA) -C $(ASAN_BUILD)
	@tests=$$($(MESON) test -C $(ASAN_BUILD) --list $(addprefix --suite ,$(SUITES)) 2>/dev/null | \
		sed -n 's|^.* / ||p' | grep -vxE '$(ASAN_SKIP)'); \
	echo "test-asan: ASan+UBSan, not run: $(ASAN_SKIP)"; \
	$(ASAN_ENV) $(MESON) test -C $(ASAN_BUILD) --print-errorlogs $$tests

# libFuzzer: seed corpora, then a short run of each harness (fuzz/run.sh).
$(FUZZ_BUILD)/build.ninja:
	CC=clang $(MESON) setup $(FUZZ_BUILD) -Dfuzz=true -Db_lundef=false -Db_lto=false

test-fuzz: deps $(FUZZ_BUILD)/build.ninja
	$(NINJA) -C $(FUZZ_BUILD) fuzz/fuzz_parse fuzz/fuzz_rx fuzz/gen_seeds
	fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_PARSE_SECONDS) $(FUZZ_RX_SECONDS)

# The Debian packages (debian/, docs/deploying.md#debian-packages) in $(BUILD)/deb, built from
# a copy of the tree; the `deb` test of `make test` builds them too (without LTO) and installs them.
DEB_BUILD_OPTIONS ?= parallel=2
deb: deps
	DEB_BUILD_OPTIONS="$(DEB_BUILD_OPTIONS)" tools/build-deb.sh $(BUILD)/deb

# The benchmark suite (not part of test): writes docs/benchmarks.md in a few minutes.
bench: build
	@$(MAKE) --no-print-directory deps EXTRA_PACKAGES="$(BENCH_PACKAGES)"
	python3 bench/run.py --build $(BUILD)

# Instructions per 64 B message by stage, toroid beside raw DPDK (callgrind; repeatable).
ipm: build
	python3 bench/ipm.py --build $(BUILD)

# The benchmarks of an older commit and of this tree, taking turns in one run:
# make compare BEFORE=<commit>. The old tree is extracted and built under $(BUILD)/compare-src.
compare: build
	@test -n "$(BEFORE)" || { echo "usage: make compare BEFORE=<commit> [RUNS=5]" >&2; exit 2; }
	rm -rf $(BUILD)/compare-src && mkdir -p $(BUILD)/compare-src
	git archive "$(BEFORE)" | tar -x -C $(BUILD)/compare-src
	cd $(BUILD)/compare-src && $(MESON) setup build >/dev/null && $(NINJA) -C build >/dev/null
	python3 bench/compare.py --before $(BUILD)/compare-src/build --after $(BUILD) --runs $(or $(RUNS),5)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
