# wb-export (tools/wb-export.c and its table writers in tools/export/):
# CSV always; HDF5 too when libhdf5's pkg-config file is there (Debian:
# libhdf5-dev, which deps --for check installs). A stamp rebuilds it when
# that changes.

HDF5_LIBS := $(shell pkg-config --libs hdf5 2>/dev/null)
ifneq ($(HDF5_LIBS),)
EXPORT_HDF5 := -DWB_HDF5 $(shell pkg-config --cflags hdf5)
# HDF5 chunks deflated by libdeflate (Debian: libdeflate-dev) when its
# pkg-config file is there, 2-3 times faster than zlib; LIBDEFLATE=0, or a
# machine without it, deflates with zlib. Either writes standard zlib streams.
LIBDEFLATE ?= 1
ifeq ($(LIBDEFLATE),1)
LIBDEFLATE_LIBS := $(shell pkg-config --libs libdeflate 2>/dev/null)
endif
ifneq ($(LIBDEFLATE_LIBS),)
EXPORT_HDF5 += -DWB_LIBDEFLATE $(shell pkg-config --cflags libdeflate)
HDF5_LIBS += $(LIBDEFLATE_LIBS)
endif
endif
EXPORT_SRC := tools/wb-export.c $(wildcard tools/export/*.c)

$(O)/.export-hdf5: FORCE
	@mkdir -p $(O)
	@echo '$(EXPORT_HDF5) $(HDF5_LIBS) $(EXPORT_ZSTD)' | cmp -s - $@ || \
		echo '$(EXPORT_HDF5) $(HDF5_LIBS) $(EXPORT_ZSTD)' > $@

$(O)/wb-export: $(EXPORT_SRC) $(wildcard tools/export/*.h) $(LIBS) $(HEADERS) $(O)/.export-hdf5
	$(CC) $(CFLAGS_WB) $(OPT) $(EXPORT_HDF5) $(EXPORT_ZSTD) $(EXPORT_SRC) -o $@ $(LIB_NET) $(LIBS) \
		$(LDLIBS_WB) $(HDF5_LIBS) $(ZSTD_LIBS) $(NATS_LIBS)

# Its unit test compiles the table writer in, with HDF5 when this build has it.
$(O)/test/test_export_table: tests/unit/test_export_table.c tools/export/table.c tools/export/table.h \
		$(SLIBS) $(HEADERS) $(O)/.export-hdf5
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_C) $(INC_tests) -I. $(SAN) $(EXPORT_HDF5) $< tools/export/table.c -o $@ $(SLIBS) \
		$(LDLIBS_WB) $(HDF5_LIBS) $$(pkg-config --libs check)
