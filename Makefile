# SPDX-License-Identifier: GPL-2.0-only
# kmemtrace — plain GNU make.
#
#   make deps             install the Debian packages it needs (root)
#   make demo             record the built-in workload and show the result (root)
#   make                  build build/kmemtrace, its man page and bash completion
#   make install          install them under PREFIX (/usr/local); DESTDIR for packages
#   make uninstall        remove what make install installed
#   make check            build and run every test (unit, CLI, real kernel)
#   make golden           compare the printers with tests/golden (no root needed);
#                         make golden-update rewrites the expected outputs
#   make bench            run the benchmarks (writes bench/RESULTS.md)
#   make fuzz             build the libFuzzer targets and run each briefly
#   make kernels          boot Debian's stock kernels (5.10 to 6.12, x86-64 and
#                         arm64) under qemu and run kmemtrace's checks in each
#                         (tests/kernels/README.md; root, downloads them once)
#   DEVELOPER=1           warnings are errors
#   SANITIZE=address,undefined   build with sanitizers
#   V=1                   show the commands
#   CROSS_COMPILE=aarch64-linux-gnu- O=build-arm64
#                         cross build (CC, AR, LD, OBJCOPY with that prefix) of
#                         kmemtrace and the workloads; "make deps" then installs
#                         the cross toolchain and the target's libraries

ifneq ($(CROSS_COMPILE),)
CC = $(CROSS_COMPILE)gcc
AR = $(CROSS_COMPILE)ar
LD = $(CROSS_COMPILE)ld
OBJCOPY = $(CROSS_COMPILE)objcopy
CROSS_TRIPLET := $(CROSS_COMPILE:%-=%)
CROSS_CPU := $(firstword $(subst -, ,$(CROSS_TRIPLET)))
CROSS_ARCH := $(or $(shell dpkg-architecture -t $(CROSS_TRIPLET) -qDEB_HOST_ARCH 2>/dev/null),$(CROSS_CPU))
endif
CC ?= cc
OBJCOPY ?= objcopy
O ?= build
CFLAGS ?= -O2 -g
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions

# The version has one owner, KMT_VERSION in include/kmemtrace/base.h;
# the man page is built with it, and debian/rules builds no package whose
# debian/changelog says another.
VERSION := $(shell sed -n 's/^\#define KMT_VERSION "\(.*\)"$$/\1/p' include/kmemtrace/base.h)

KMT_CPPFLAGS = -Iinclude -Isrc -Isrc/lib -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64
KMT_CFLAGS = -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers \
	-Wshadow -Wformat=2 -Wno-format-nonliteral -Wstrict-prototypes \
	-Wmissing-prototypes -Wvla -Wpointer-arith -fno-strict-aliasing -pthread
LIBS = -lzstd -lz -lpthread
CMD_LIBS = -lsqlite3

ifeq ($(DEVELOPER),1)
KMT_CFLAGS += -Werror
endif
ifneq ($(SANITIZE),)
KMT_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
endif

ifneq ($(V),1)
Q = @
quiet = @printf '  %-7s %s\n' $(1) $(2);
endif

ALL_CFLAGS = $(KMT_CPPFLAGS) $(KMT_CFLAGS) $(CPPFLAGS) $(CFLAGS)

LIB_SRC := $(sort $(wildcard src/lib/*/*.c))
CMD_SRC := $(sort $(wildcard src/*.c $(filter-out src/lib/%,$(wildcard src/*/*.c))))
LIB_OBJ := $(LIB_SRC:%.c=$(O)/%.o)
CMD_OBJ := $(CMD_SRC:%.c=$(O)/%.o) $(O)/src/html/html-assets.o
LIB := $(O)/libkmemtrace.a
LIB_INTERNAL := $(O)/libkmemtrace-internal.a
BIN := $(O)/kmemtrace
MAN := $(O)/kmemtrace.1
COMPLETION := $(O)/kmemtrace.bash

UNIT_SRC := $(sort $(wildcard tests/unit/test-*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(O)/tests/%)
UNIT_HELPERS := $(filter-out tests/unit/test-%.c,$(wildcard tests/unit/*.c))
UNIT_HELPER_OBJ := $(UNIT_HELPERS:%.c=$(O)/%.o)
WORKLOAD_SRC := $(sort $(wildcard tests/workloads/*.c))
WORKLOAD_BIN := $(WORKLOAD_SRC:tests/workloads/%.c=$(O)/workloads/%)

all: $(BIN) $(MAN) $(COMPLETION)

# A cross build also makes the workloads, for the guests of the kernel matrix.
ifneq ($(CROSS_COMPILE),)
all: $(WORKLOAD_BIN)
endif

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# The page's style and script, built in (.incbin: no generator needed).
$(O)/src/html/html-assets.o: src/html/html-assets.S src/html/report.css $(wildcard src/html/page-*.js)
	@mkdir -p $(dir $@)
	$(call quiet,AS,$@)$(CC) -c -o $@ $<

# The library's public surface is exactly include/kmemtrace/: its objects
# are linked into one, and what the private headers declare (hidden, as
# libtracefs's __hidden) becomes local to it. Unit tests, which look
# inside, link every object as it is.
$(LIB): $(LIB_OBJ)
	$(call quiet,AR,$@)rm -f $@ $(O)/libkmemtrace.o && \
	$(LD) -r -o $(O)/libkmemtrace.o $^ && \
	$(OBJCOPY) --localize-hidden $(O)/libkmemtrace.o && \
	$(AR) rcs $@ $(O)/libkmemtrace.o

$(LIB_INTERNAL): $(LIB_OBJ)
	$(call quiet,AR,$@)rm -f $@ && $(AR) rcs $@ $^

$(BIN): $(CMD_OBJ) $(LIB)
	$(call quiet,LINK,$@)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(CMD_OBJ) $(LIB) $(LIBS) $(CMD_LIBS)

# The manual, with the version it documents.
$(MAN): docs/kmemtrace.1 include/kmemtrace/base.h
	$(call quiet,GEN,$@)sed 's/@VERSION@/$(VERSION)/g' $< > $@.tmp && mv $@.tmp $@

# The bash completion, written by the program from its own tables; a cross
# build runs it under qemu's user mode if there is one, or goes without.
ifeq ($(CROSS_COMPILE),)
$(COMPLETION): $(BIN)
	$(call quiet,GEN,$@)$(BIN) completion bash > $@.tmp && mv $@.tmp $@
else
$(COMPLETION): $(BIN)
	$(Q)qemu=$$(command -v qemu-$(CROSS_CPU)-static || command -v qemu-$(CROSS_CPU)) || \
		{ echo "  SKIP    $@ (no qemu-$(CROSS_CPU)-static to run the $(CROSS_ARCH) binary)"; exit 0; }; \
	printf '  %-7s %s\n' GEN $@; $$qemu $(BIN) completion bash > $@.tmp && mv $@.tmp $@
endif

# The out-of-memory test fails the library's allocations on purpose.
$(O)/tests/test-oom: LDFLAGS += -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc

$(O)/tests/%: $(O)/tests/unit/%.o $(UNIT_HELPER_OBJ) $(LIB_INTERNAL)
	@mkdir -p $(dir $@)
	$(call quiet,LINK,$@)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(UNIT_HELPER_OBJ) $(LIB_INTERNAL) $(LIBS) -lcmocka

# Ground-truth workloads: plain programs, no library.
$(O)/workloads/%: tests/workloads/%.c
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) -O2 -g -std=gnu11 -Wall -Wextra $(if $(filter 1,$(DEVELOPER)),-Werror) -o $@ $<

# Synthetic trace files, through the unit tests' trace builder.
$(O)/tests/kmt-synth: $(O)/tests/tools/kmt-synth.o $(UNIT_HELPER_OBJ) $(LIB_INTERNAL)
	$(call quiet,LINK,$@)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(UNIT_HELPER_OBJ) $(LIB_INTERNAL) $(LIBS)

# The model in shards fed live against one model, on a file's events.
$(O)/tests/kmt-live: $(O)/tests/tools/kmt-live.o $(LIB_INTERNAL)
	$(call quiet,LINK,$@)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_INTERNAL) $(LIBS)

tests: all $(LIB) $(UNIT_BIN) $(WORKLOAD_BIN) $(O)/tests/kmt-synth $(O)/tests/kmt-live

check: tests
	$(Q)KMT_BUILD=$(O) tests/run.sh

# The printers' golden outputs (tests/golden): no root, no tracefs.
golden: tests
	$(Q)KMT_BUILD=$(O) tests/run.sh t0050-golden

golden-update: tests
	$(Q)KMT_GOLDEN_UPDATE=1 KMT_BUILD=$(O) tests/run.sh t0050-golden

$(O)/bench/kmt-walk: bench/walk.c $(LIB)
	@mkdir -p $(dir $@)
	$(call quiet,LINK,$@)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LIBS)

$(O)/bench/kmt-wcpus: bench/wcpus.c $(LIB)
	@mkdir -p $(dir $@)
	$(call quiet,LINK,$@)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LIBS)

$(O)/bench/kmt-shards: bench/shards.c $(LIB_INTERNAL)
	@mkdir -p $(dir $@)
	$(call quiet,LINK,$@)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_INTERNAL) $(LIBS)

bench: $(BIN) $(WORKLOAD_BIN) $(O)/bench/kmt-walk $(O)/bench/kmt-wcpus $(O)/bench/kmt-shards
	$(Q)KMT_BUILD=$(O) bench/run.sh

fuzz:
	$(Q)$(MAKE) -f fuzz/Makefile O=$(O)/fuzz

# Debian 12 packages: build (sqlite for export), tests (cmocka, trace-cmd
# as a second reader, hackbench for the loss test, chromium to render the
# HTML pages, go tool pprof, protoc and sqlite3 to read the exports),
# benchmarks (perf), fuzzing (clang), bash-completion (which loads the
# completion make install puts in PREFIX), and debhelper and lintian for
# the package test.
DEPS = build-essential libzstd-dev zlib1g-dev libsqlite3-dev libcmocka-dev trace-cmd rt-tests \
	linux-perf clang procps jq chromium fonts-dejavu-core golang-go protobuf-compiler sqlite3 tmux \
	bash-completion debhelper lintian
# The kernel matrix (make kernels): qemu for both guests' architectures,
# cpio for their initramfs and xz for the kernels' modules.
DEPS += qemu-system-x86 qemu-system-arm cpio xz-utils
# A cross build (CROSS_COMPILE) installs only its toolchain, the target's
# libraries (a foreign dpkg architecture) and qemu's user mode, which runs
# the target's binary to write the bash completion.
CROSS_DEPS = gcc-$(CROSS_TRIPLET) binutils-$(CROSS_TRIPLET) libc6-dev-$(CROSS_ARCH)-cross \
	libzstd-dev:$(CROSS_ARCH) zlib1g-dev:$(CROSS_ARCH) libsqlite3-dev:$(CROSS_ARCH) qemu-user-static
ifeq ($(CROSS_COMPILE),)
deps:
	DEBIAN_FRONTEND=noninteractive apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(DEPS)
else
deps:
	dpkg --add-architecture $(CROSS_ARCH)
	DEBIAN_FRONTEND=noninteractive apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(CROSS_DEPS)
endif

# The kernel matrix: Debian's stock kernels booted under qemu (TCG), the
# checks of tests/kernels/guest/checks.sh in each, a table kernel x check and
# "N passed, N failed". The arm64 guests run a cross build in $(O)-arm64.
# Kernels are cached in KMT_KERNEL_CACHE (/var/cache/kmemtrace-kernels);
# KMT_KERNELS="ID ..." runs only some (tests/kernels/kernels.list).
kernels: $(BIN) $(WORKLOAD_BIN)
	$(Q)$(MAKE) --no-print-directory CROSS_COMPILE=aarch64-linux-gnu- O=$(O)-arm64 all
	$(Q)KMT_BUILD=$(O) KMT_BUILD_ARM64=$(O)-arm64 tests/kernels/run.sh $(KMT_KERNELS)

# Record kmt-gt (known xattr allocations on a tmpfs file) and report on it.
DEMO_OUT ?= demo.dat
demo: $(BIN) $(WORKLOAD_BIN)
	@f=$$(mktemp /dev/shm/kmt-demo.XXXXXX) && \
	$(BIN) record -o $(DEMO_OUT) -- $(O)/workloads/kmt-gt -g 100 -x 20 -r 5 -l 2 $$f; \
	rc=$$?; rm -f $$f; [ $$rc -eq 0 ] && $(BIN) report -n 10 $(DEMO_OUT)

install: all
	install -D -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/kmemtrace
	install -D -m 0644 $(MAN) $(DESTDIR)$(MANDIR)/man1/kmemtrace.1
	install -D -m 0644 $(COMPLETION) $(DESTDIR)$(BASHCOMPDIR)/kmemtrace

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/kmemtrace $(DESTDIR)$(MANDIR)/man1/kmemtrace.1 \
	      $(DESTDIR)$(BASHCOMPDIR)/kmemtrace

clean:
	rm -rf $(O)

.PHONY: all tests check golden golden-update bench fuzz install uninstall clean deps demo kernels
.SECONDARY:

-include $(LIB_OBJ:.o=.d) $(CMD_OBJ:.o=.d) $(UNIT_BIN:$(O)/tests/%=$(O)/tests/unit/%.d) \
	 $(UNIT_HELPER_OBJ:.o=.d) $(O)/tests/tools/kmt-synth.d $(O)/tests/tools/kmt-live.d $(O)/bench/kmt-walk.d $(O)/bench/kmt-wcpus.d $(O)/bench/kmt-shards.d
