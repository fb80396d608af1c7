# wb-export's order-level formats (issue 24): --format dbn (Databento's
# DBN, tools/export/dbn.c) and --format hftbacktest (.npz event arrays,
# tools/export/hftbacktest.c), fed by tools/export/sink.c. DBN files are
# zstd-compressed when libzstd's pkg-config file is there (Debian:
# libzstd-dev); ZSTD=0, or a machine without it, writes plain .dbn.
#
#   make export-formats-test   golden bytes of each DBN record kind, the
#                              metadata and an hftbacktest row (Check), and
#                              a generated day's files read back by decoders
#                              written from the specs (tests/export/*.py)

ZSTD ?= 1
ifeq ($(ZSTD),1)
ZSTD_LIBS := $(shell pkg-config --libs libzstd 2>/dev/null)
endif
ifneq ($(ZSTD_LIBS),)
EXPORT_ZSTD := -DWB_ZSTD $(shell pkg-config --cflags libzstd)
endif

EXPORT_FORMATS_SRC := tools/export/dbn.c tools/export/hftbacktest.c tools/export/sink.c

$(O)/test/test_export_formats: tests/export/test_export_formats.c $(EXPORT_FORMATS_SRC) \
		$(wildcard tools/export/*.h) $(SLIBS) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_C) $(INC_tools) -I. $(SAN) $< $(EXPORT_FORMATS_SRC) -o $@ $(SLIBS) \
		$(LDLIBS_WB) $$(pkg-config --libs check)

.PHONY: export-formats-test

export-formats-test: $(O)/test/test_export_formats $(O)/wb-export $(O)/wb-gen
	$(O)/test/test_export_formats
	B=$(O) tests/service/run.sh tests/export/test_formats.sh

CHECK_EXTRA += export-formats-test
