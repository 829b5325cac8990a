# toroid: the two commands of the README.
#   make demo   install what is missing, build, run toroid-demo
#   make test   install what is missing, build, run the test suites (unit, pmd, slow)
# Both work as root on a fresh Debian bookworm machine, with no hugepages.

BUILD    ?= build
MESON    ?= meson
NINJA    ?= ninja
# Debian packages the build and the tests need.
PACKAGES ?= gcc pkg-config meson ninja-build libdpdk-dev dpdk libpcap-dev libinih-dev \
            tcpdump python3 tshark
SUITES   ?= unit pmd
DEMO_ARGS ?=

.PHONY: all deps build demo test clean

all: build

deps:
	@missing=""; \
	for p in $(PACKAGES); do \
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
	$(MESON) test -C $(BUILD) --print-errorlogs $(addprefix --suite ,$(SUITES)) || rc=$$?; \
	python3 tools/test-summary.py $(BUILD)/meson-logs/testlog.json; \
	exit $$rc

clean:
	rm -rf $(BUILD)
