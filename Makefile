# wirebook: top-level build.
#
#   make            user space (and the module where kernel headers exist)
#   make check      dependencies, build, unit tests (ASan+UBSan), fuzzers, VM tests
#   make demo       dependencies, build, a generated capture through the books
#   make bench      benchmarks (ns/message, instructions/message); never a test
#   make install PREFIX=/usr/local [DESTDIR=/stage] [SYSCONFDIR=/etc] [UNITDIR=...]
#
# Sources are found by convention, so adding a file rarely touches this file:
#   lib/feed/*.c         -> build/libwbfeed.a      (freestanding decoders; the module's too)
#   lib/feedtext/*.c     -> build/libwbfeedtext.a  (user space only: names, feeds.conf
#                        lines, raw-view lookups)
#   lib/book/*.c         -> build/libwbbook.a      (venue books, Super-Book, builder)
#   lib/shm/*.c          -> build/libwirebook.{a,so} (reader API)
#   lib/recovery/*.c     -> build/libwbrecovery.a  (gap-recovery clients: the services
#                        table, gap fill, snapshots, the book's recovery table)
#   tools/common/*.c     -> build/libwbtools.a     (options, config, control, text)
#   sim/*.c              -> build/libwbsim.a       (exchange simulators: the recovery
#                        servers; wb-recoveryd and the tests link it, no product does)
#   sim/wb-recoveryd.c   -> build/wb-recoveryd     (for tests and the demo; not installed)
#   tools/input/*.c      -> build/libwbinput.a     (packet sources, pcap, BinaryFILE)
#   tools/gen/*.c        -> build/libwbgen.a       (synthetic sessions: wb-gen,
#                        tests and benches link it; wirebookd does not)
#   tools/NAME.c         -> build/NAME
#   subscribe/NAME.c     -> build/NAME
#   examples/NAME.c      -> build/examples/NAME
#   tests/unit/test_*.c  -> build/test/test_*      (Check, sanitizers)
#   tests/fuzz/fuzz_feed.c -> build/fuzz/fuzz_<stem> (libFuzzer), one per row of
#                        the protocol table (lib/feed/protocols.h)
#   tests/fuzz/fuzz_recovery.c -> build/fuzz/fuzz_recovery (the recovery
#                        protocols' decoders in lib/recovery)
#   tests/bench/bench_*.c -> build/bench/bench_*
#   mk/*.mk              extra rules (module, VM tests, latency); they may add
#                        targets to CHECK_EXTRA, BENCH_EXTRA, ALL_EXTRA and
#                        INSTALL_EXTRA (run by make install).

CC      ?= cc
CLANG   ?= clang
PREFIX  ?= /usr/local
# Config files: /etc for the system prefixes, PREFIX/etc for any other
# (a private install never writes outside its prefix).
SYSCONFDIR ?= $(if $(filter /usr /usr/local,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR ?= $(PREFIX)/lib/systemd/system
O       := build
FUZZ_SECONDS ?= 20

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-missing-field-initializers
CPPFLAGS_WB := -D_GNU_SOURCE

# Include paths, one per layer: a layer sees only the layers it may use
# (DESIGN.md, "Parts and their rooms"), so that lib/ including tools/ is a
# build error (tests/api/layering.sh checks the same by reading the
# includes). An object's folder names its layer: INC_<folder, / as _>,
# else its parent folder's (tools/common/x.c: INC_tools). A new room is one
# line here.
# lib/wire and lib/feed are freestanding (lib/feed is the module's too);
# examples build as users build them, against the public headers only.
INC_lib_wire     := -Iinclude -Ilib
INC_lib_feed     := -Iinclude -Ilib
INC_lib_feedtext := -Iinclude -Ilib
INC_lib_book     := -Iinclude -Ilib
INC_lib_shm      := -Iinclude -Ilib
INC_lib_recovery := -Iinclude -Ilib
INC_tools        := -Iinclude -Ilib -Itools
INC_subscribe    := $(INC_tools)
INC_examples     := -Iinclude
# The simulators' headers are named "sim/..." from the top: only they, the
# tests and wb-recoveryd see the top directory.
INC_sim          := $(INC_tools) -I.
INC_tests        := $(INC_tools) -Itests/unit
inc_dir = $(subst /,_,$(patsubst %/,%,$(dir $(1))))
inc_of = $(or $(INC_$(call inc_dir,$(1))),$(INC_$(call inc_dir,$(patsubst %/,%,$(dir $(1))))),$(error \
	$(1): no include path for its layer (add INC_$(call inc_dir,$(1)) to the Makefile)))

# Installed libraries and tools run on any x86-64: the baseline ISA by
# default. NATIVE=1 builds for this machine's CPU (-march=native), for the
# server that runs it; a change of OPT rebuilds every object (a stamp).
NATIVE  ?= 0
ifeq ($(NATIVE),1)
MARCH   := -march=native
else ifneq ($(filter x86_64-%,$(shell $(CC) -dumpmachine)),)
MARCH   := -march=x86-64 -mtune=generic
else
MARCH   :=
endif
OPT     ?= -O2 $(MARCH) -g
CFLAGS_C  := -std=c11 $(WARN) $(CPPFLAGS_WB) -fPIC
# Programs (tools, tests, benches) see every layer; objects see their own (inc_of).
CFLAGS_WB := $(CFLAGS_C) $(INC_tools)
SAN     := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
LDLIBS_WB := -lpcap -lnuma -lhwloc -lz -lpthread -lrt -lm

FEED_SRC   := $(wildcard lib/feed/*.c)
FEEDTEXT_SRC := $(wildcard lib/feedtext/*.c)
BOOK_SRC   := $(wildcard lib/book/*.c)
SHM_SRC    := $(wildcard lib/shm/*.c)
RECOVERY_SRC := $(wildcard lib/recovery/*.c)
SIM_SRC    := $(filter-out sim/wb-recoveryd.c,$(wildcard sim/*.c))
TCOMMON_SRC := $(wildcard tools/common/*.c)
INPUT_SRC  := $(wildcard tools/input/*.c)
GEN_SRC    := $(wildcard tools/gen/*.c)
TOOL_SRC   := $(wildcard tools/*.c) $(wildcard subscribe/*.c)
EXAMPLE_SRC := $(wildcard examples/*.c)
TEST_SRC   := $(wildcard tests/unit/test_*.c)
# The protocol table's stems: X(ID, stem) rows of lib/feed/protocols.h.
PROTOCOL_STEMS := $(shell sed -n 's/^[[:space:]]*X([A-Z0-9_]*, *\([a-z0-9_]*\)).*/\1/p' lib/feed/protocols.h)
BENCH_SRC  := $(wildcard tests/bench/bench_*.c)
HEADERS    := $(wildcard include/wirebook/*.h lib/*/*.h tools/common/*.h tools/input/*.h tools/gen/*.h \
		sim/*.h)

# The release, one for the tools' --version, the man pages and wirebook.pc.
WB_VERSION := $(shell sed -n 's/^Version: *//p' scripts/wirebook.pc.in)

# Release objects
obj = $(patsubst %.c,$(O)/obj/%.o,$(1))
# Sanitizer objects for tests
sobj = $(patsubst %.c,$(O)/sobj/%.o,$(1))

LIB_FEED  := $(O)/libwbfeed.a
LIB_FEEDTEXT := $(O)/libwbfeedtext.a
LIB_BOOK  := $(O)/libwbbook.a
LIB_SHM   := $(O)/libwirebook.a
LIB_SHM_SO := $(O)/libwirebook.so
LIB_RECOVERY := $(O)/libwbrecovery.a
LIB_TOOLS := $(O)/libwbtools.a
LIB_INPUT := $(O)/libwbinput.a
LIBS      := $(LIB_INPUT) $(LIB_RECOVERY) $(LIB_TOOLS) $(LIB_BOOK) $(LIB_SHM) $(LIB_FEEDTEXT) $(LIB_FEED)
LIB_GEN   := $(O)/libwbgen.a
LIB_SIM   := $(O)/libwbsim.a
# What links the generators: wb-gen, the tests, the benches.
GEN_LIBS  := $(LIB_GEN) $(LIBS)

SLIB_FEED  := $(O)/san/libwbfeed.a
SLIB_FEEDTEXT := $(O)/san/libwbfeedtext.a
SLIB_BOOK  := $(O)/san/libwbbook.a
SLIB_SHM   := $(O)/san/libwirebook.a
SLIB_RECOVERY := $(O)/san/libwbrecovery.a
SLIB_TOOLS := $(O)/san/libwbtools.a
SLIB_INPUT := $(O)/san/libwbinput.a
SLIBS      := $(SLIB_INPUT) $(SLIB_RECOVERY) $(SLIB_TOOLS) $(SLIB_BOOK) $(SLIB_SHM) $(SLIB_FEEDTEXT) $(SLIB_FEED)
SLIB_GEN   := $(O)/san/libwbgen.a
SLIB_SIM   := $(O)/san/libwbsim.a

TOOLS    := $(patsubst %.c,$(O)/%,$(notdir $(TOOL_SRC)))
EXAMPLES := $(patsubst examples/%.c,$(O)/examples/%,$(EXAMPLE_SRC))
TESTS    := $(patsubst tests/unit/%.c,$(O)/test/%,$(TEST_SRC))
FUZZERS  := $(addprefix $(O)/fuzz/fuzz_,$(PROTOCOL_STEMS)) $(O)/fuzz/fuzz_recovery
BENCHES  := $(patsubst tests/bench/%.c,$(O)/bench/%,$(BENCH_SRC))

CHECK_EXTRA :=
BENCH_EXTRA :=
ALL_EXTRA   :=
INSTALL_EXTRA :=

.PHONY: all deps deps-demo check demo bench install clean unit fuzz tools
.DEFAULT_GOAL := all

-include $(sort $(wildcard mk/*.mk))

all: tools $(EXAMPLES) $(O)/wirebook.pc $(O)/wirebookd@.service $(ALL_EXTRA)

tools: $(LIBS) $(LIB_SHM_SO) $(TOOLS)

deps:
	@scripts/deps.sh --for check

# The demo needs the build packages only (no qemu, kernels or test tools).
deps-demo:
	@scripts/deps.sh --for demo

$(O)/obj/%.o: %.c $(HEADERS) $(O)/.opt
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_C) $(call inc_of,$<) $(OPT) -c $< -o $@

$(O)/sobj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_C) $(call inc_of,$<) $(SAN) -c $< -o $@

# Only the version's object knows it: a new release rebuilds that one.
$(O)/obj/tools/common/version.o $(O)/sobj/tools/common/version.o: scripts/wirebook.pc.in
$(O)/obj/tools/common/version.o $(O)/sobj/tools/common/version.o: \
	CFLAGS_C += -DWB_VERSION='"$(WB_VERSION)"'

$(LIB_FEED): $(call obj,$(FEED_SRC))
$(LIB_FEEDTEXT): $(call obj,$(FEEDTEXT_SRC))
$(LIB_BOOK): $(call obj,$(BOOK_SRC))
$(LIB_SHM): $(call obj,$(SHM_SRC))
$(LIB_RECOVERY): $(call obj,$(RECOVERY_SRC))
$(LIB_TOOLS): $(call obj,$(TCOMMON_SRC))
$(LIB_INPUT): $(call obj,$(INPUT_SRC))
$(LIB_GEN): $(call obj,$(GEN_SRC))
$(LIB_SIM): $(call obj,$(SIM_SRC))
$(SLIB_FEED): $(call sobj,$(FEED_SRC))
$(SLIB_FEEDTEXT): $(call sobj,$(FEEDTEXT_SRC))
$(SLIB_BOOK): $(call sobj,$(BOOK_SRC))
$(SLIB_SHM): $(call sobj,$(SHM_SRC))
$(SLIB_RECOVERY): $(call sobj,$(RECOVERY_SRC))
$(SLIB_TOOLS): $(call sobj,$(TCOMMON_SRC))
$(SLIB_INPUT): $(call sobj,$(INPUT_SRC))
$(SLIB_GEN): $(call sobj,$(GEN_SRC))
$(SLIB_SIM): $(call sobj,$(SIM_SRC))

$(O)/%.a:
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^

# The SONAME's number changes with any incompatible ABI change (abi-check
# says when); lib/shm/libwirebook.map exports the public functions only.
WB_SOVERSION := 1
WB_SO_MAP := lib/shm/libwirebook.map

$(LIB_SHM_SO): $(call obj,$(SHM_SRC)) $(WB_SO_MAP)
	$(CC) -shared -Wl,-soname,libwirebook.so.$(WB_SOVERSION) -Wl,--version-script,$(WB_SO_MAP) \
		-Wl,-z,defs -o $@ $(filter %.o,$^) -lrt

$(O)/%: tools/%.c $(LIBS) $(HEADERS)
	$(CC) $(CFLAGS_WB) $(OPT) $< -o $@ $(LIBS) $(LDLIBS_WB)

# The one tool that generates sessions.
$(O)/wb-gen: tools/wb-gen.c $(GEN_LIBS) $(HEADERS)
	$(CC) $(CFLAGS_WB) $(OPT) $< -o $@ $(GEN_LIBS) $(LDLIBS_WB)

$(O)/%: subscribe/%.c $(LIBS) $(HEADERS)
	$(CC) $(CFLAGS_WB) $(OPT) $< -o $@ $(LIBS) $(LDLIBS_WB)

$(O)/examples/%: examples/%.c $(LIB_SHM) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_C) $(INC_examples) $(OPT) $< -o $@ $(LIB_SHM) -lrt

$(O)/test/%: tests/unit/%.c $(SLIB_GEN) $(SLIB_SIM) $(SLIBS) $(HEADERS) $(wildcard tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_C) $(INC_tests) -I. $(SAN) $< -o $@ $(SLIB_GEN) $(SLIB_SIM) $(SLIBS) $(LDLIBS_WB) \
		$$(pkg-config --libs check)

$(O)/bench/%: tests/bench/%.c $(GEN_LIBS) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_WB) $(OPT) $< -o $@ $(GEN_LIBS) $(LDLIBS_WB)

# The recovery protocols' decoders in lib/recovery (SoupBinTCP, GLIMPSE and
# UTP Snap-Shot ends, Cboe GRP/Spin, the XDP Request Server). tools/common
# comes whole, and its control requests for order detail read through
# libwirebook (lib/shm).
$(O)/fuzz/fuzz_recovery: tests/fuzz/fuzz_recovery.c $(FEED_SRC) $(FEEDTEXT_SRC) $(RECOVERY_SRC) $(TCOMMON_SRC) $(SHM_SRC) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CLANG) -std=c11 $(WARN) $(CPPFLAGS_WB) $(INC_tests) -g -O1 \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $< $(FEED_SRC) $(FEEDTEXT_SRC) \
		$(RECOVERY_SRC) $(TCOMMON_SRC) $(SHM_SRC) -o $@ $(LDLIBS_WB)

# libFuzzer targets compile the freestanding decoders straight in.
$(O)/fuzz/fuzz_%: tests/fuzz/fuzz_feed.c $(FEED_SRC) $(FEEDTEXT_SRC) $(HEADERS) $(wildcard tests/fuzz/*.h) \
		tests/unit/test_util.h
	@mkdir -p $(dir $@)
	$(CLANG) -std=c11 $(WARN) $(CPPFLAGS_WB) $(INC_tests) -DFUZZ_STEM=$* -g -O1 \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $< $(FEED_SRC) $(FEEDTEXT_SRC) -o $@

# Files that name the install locations are made again whenever PREFIX or
# SYSCONFDIR differ from the last build's (a stamp holds them).
$(O)/.install-dirs: FORCE
	@mkdir -p $(O)
	@echo '$(PREFIX) $(SYSCONFDIR)' | cmp -s - $@ || echo '$(PREFIX) $(SYSCONFDIR)' > $@

# The flags release objects were built with; objects follow a change.
$(O)/.opt: FORCE
	@mkdir -p $(O)
	@echo '$(CC) $(OPT)' | cmp -s - $@ || echo '$(CC) $(OPT)' > $@

$(O)/wirebook.pc: scripts/wirebook.pc.in $(O)/.install-dirs
	sed 's|@PREFIX@|$(PREFIX)|g' $< > $@

$(O)/wirebookd@.service: scripts/wirebookd@.service.in $(O)/.install-dirs
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' $< > $@

.PHONY: FORCE
FORCE:

unit: $(TESTS)
	@scripts/run-unit-tests.sh $(TESTS)

fuzz: $(FUZZERS)
	@scripts/run-fuzzers.sh $(FUZZ_SECONDS) $(FUZZERS)

check: deps
	$(MAKE) all
	$(MAKE) unit
	$(MAKE) fuzz
	@for t in $(CHECK_EXTRA); do $(MAKE) $$t || exit 1; done
	@echo "make check: all passed"

demo: deps-demo
	$(MAKE) all
	@scripts/demo.sh

bench: all $(BENCHES)
	@scripts/bench.sh $(BENCHES)
	@for t in $(BENCH_EXTRA); do $(MAKE) $$t || exit 1; done

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/include/wirebook $(DESTDIR)$(PREFIX)/share/wirebook/examples \
		$(DESTDIR)$(SYSCONFDIR)/wirebook $(DESTDIR)$(UNITDIR)
	install -m 755 $(TOOLS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 include/wirebook/*.h $(DESTDIR)$(PREFIX)/include/wirebook/
	install -m 644 $(LIB_SHM) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIB_SHM_SO) $(DESTDIR)$(PREFIX)/lib/libwirebook.so.$(WB_SOVERSION)
	ln -sf libwirebook.so.$(WB_SOVERSION) $(DESTDIR)$(PREFIX)/lib/libwirebook.so
	install -m 644 $(O)/wirebook.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	install -m 644 feeds.conf $(DESTDIR)$(PREFIX)/share/wirebook/feeds.conf.sample
	install -m 644 scripts/wirebookd.conf.sample $(DESTDIR)$(PREFIX)/share/wirebook/
	install -m 644 examples/*.c examples/*.cpp $(DESTDIR)$(PREFIX)/share/wirebook/examples/
	install -m 644 $(O)/wirebookd@.service $(DESTDIR)$(UNITDIR)/
	@for t in $(INSTALL_EXTRA); do $(MAKE) --no-print-directory $$t || exit 1; done
	@# config files are the operator's: never overwritten
	@test -e $(DESTDIR)$(SYSCONFDIR)/wirebook/feeds.conf || \
		install -m 644 feeds.conf $(DESTDIR)$(SYSCONFDIR)/wirebook/feeds.conf
	@echo "installed under $(DESTDIR)$(PREFIX); config in $(DESTDIR)$(SYSCONFDIR)/wirebook;" \
		"unit $(DESTDIR)$(UNITDIR)/wirebookd@.service"
	@# the dynamic linker's cache knows only the system prefixes
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" -eq 0 ] && command -v ldconfig >/dev/null && \
		case "$(PREFIX)" in /usr|/usr/local) true ;; *) false ;; esac; then ldconfig; fi

clean:
	rm -rf $(O)
