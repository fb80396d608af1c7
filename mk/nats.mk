# The normalized stream and the books over NATS JetStream (issue 26):
# tools/net/*.c -> build/libwbnet.a, linked into wirebookd (--publish,
# --source nats://...). With libnats (Debian: libnats-dev; pkg-config
# libnats) they talk to NATS; without it they build as stubs that say
# wirebookd was built without NATS, and nats-test is skipped. A stamp
# rebuilds them when that changes.
#
#   make nats-test   a real nats-server -js on loopback: origin --publish,
#                    a --source rebuilding the same books (tests/nats/nats.sh);
#                    wb-export nats://... and the counters in libwirebook
#                    (tests/nats/ops.sh)

NATS_LIBS := $(shell pkg-config --libs libnats 2>/dev/null)
ifneq ($(NATS_LIBS),)
NATS_CFLAGS := -DWB_NATS $(shell pkg-config --cflags libnats)
endif
NET_SRC := $(wildcard tools/net/*.c)
LIB_NET := $(O)/libwbnet.a
HEADERS += $(wildcard tools/net/*.h)

$(O)/.nats: FORCE
	@mkdir -p $(O)
	@echo '$(NATS_CFLAGS) $(NATS_LIBS)' | cmp -s - $@ || echo '$(NATS_CFLAGS) $(NATS_LIBS)' > $@

$(call obj,$(NET_SRC)): CFLAGS_C += $(NATS_CFLAGS)
$(call obj,$(NET_SRC)): $(O)/.nats
$(LIB_NET): $(call obj,$(NET_SRC))

$(O)/wirebookd: tools/wirebookd.c $(LIB_NET) $(LIBS) $(HEADERS) $(O)/.nats
	$(CC) $(CFLAGS_WB) $(OPT) $(NATS_CFLAGS) $< -o $@ $(LIB_NET) $(LIBS) $(LDLIBS_WB) $(NATS_LIBS)

# The light consumer of the conflated book subjects nats-test runs.
ifneq ($(NATS_LIBS),)
NATS_TEST_BINS := $(O)/nats_books_sub
endif
$(O)/nats_books_sub: tests/nats/nats_books_sub.c tools/net/nats_books.c tools/net/nats_batch.c $(LIB_SHM) $(HEADERS)
	$(CC) $(CFLAGS_WB) $(OPT) $(NATS_CFLAGS) $< tools/net/nats_books.c tools/net/nats_batch.c -o $@ \
		$(LIB_SHM) $(LDLIBS_WB) $(NATS_LIBS)

.PHONY: nats-test
nats-test: $(O)/wirebookd $(O)/wb-gen $(O)/wb-export $(LIB_SHM_SO) $(NATS_TEST_BINS)
	B=$(O) tests/nats/nats.sh
	B=$(O) tests/nats/ops.sh

CHECK_EXTRA += nats-test

# The unit test compiles the server-free parts in (the batch format, the
# addresses): without WB_NATS, so it runs wherever Check does.
NATS_TEST_SRC := tools/net/nats_batch.c tools/net/nats_client.c
$(O)/test/test_nats: tests/unit/test_nats.c $(NATS_TEST_SRC) $(SLIBS) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_C) $(INC_tests) -I. $(SAN) $< $(NATS_TEST_SRC) -o $@ $(SLIBS) $(LDLIBS_WB) \
		$$(pkg-config --libs check)

# The book snapshots' format, the publisher's shadow books and the book
# messages' prices (server-free).
NATS_SNAP_TEST_SRC := tools/net/nats_snapshot.c tools/net/nats_shadow.c tools/net/nats_books.c
$(O)/test/test_nats_snapshot: tests/unit/test_nats_snapshot.c $(NATS_SNAP_TEST_SRC) $(SLIBS) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_C) $(INC_tests) -I. $(SAN) $< $(NATS_SNAP_TEST_SRC) -o $@ $(SLIBS) $(LDLIBS_WB) \
		$$(pkg-config --libs check)

# make fanout: the benchmark of issue 26 (scripts/fanout.sh; not a test).
.PHONY: fanout
fanout: $(O)/wirebookd $(O)/wb-gen
	scripts/fanout.sh $(O)

# wb-export nats://...: the day read back from the stream (tools/net/nats_read.c).
$(O)/wb-export: $(LIB_NET) $(O)/.nats

# The --nats-* options' parser, shared by wirebookd and wb-export.
$(O)/test/test_nats_options: tests/unit/test_nats_options.c tools/net/nats_options.c $(SLIBS) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_C) $(INC_tests) -I. $(SAN) $< tools/net/nats_options.c -o $@ $(SLIBS) $(LDLIBS_WB) \
		$$(pkg-config --libs check)

# The batches' ordering heap, with libnats when this build has it (its
# messages hold the batches).
$(O)/test/test_nats_order: tests/unit/test_nats_order.c tools/net/nats_order.c tools/net/nats_batch.c \
		$(SLIBS) $(HEADERS) $(O)/.nats
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_C) $(INC_tests) -I. $(SAN) $(NATS_CFLAGS) $< tools/net/nats_order.c \
		tools/net/nats_batch.c -o $@ $(SLIBS) $(LDLIBS_WB) $(NATS_LIBS) $$(pkg-config --libs check)
