# A simulation's research output (issue 25): examples/join_bid's --fills and
# --queue CSV as wb-export's fills and queue tables (--sim-fills,
# --sim-queue; tools/export/simout.c), HDF5 and CSV, checked row by row and
# column by column with h5py against the CSV, and wirebook.simulate()'s
# export(). Part of make check; about 15 s.
CHECK_EXTRA += simout-test

.PHONY: simout-test
simout-test: $(O)/examples/join_bid $(O)/wb-gen $(O)/wb-export $(O)/wirebookd $(LIB_SHM_SO)
	B=$(O) python3 tests/simout/simout_test.py

# Its unit test compiles the CSV reader and the table writer in (CSV only:
# the HDF5 side is the table writer's own test's and simout-test's).
$(O)/test/test_export_simout: tests/unit/test_export_simout.c tools/export/simout.c tools/export/table.c \
		tools/export/simout.h tools/export/table.h $(SLIBS) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_C) $(INC_tests) -I. $(SAN) $< tools/export/simout.c tools/export/table.c -o $@ $(SLIBS) \
		$(LDLIBS_WB) $$(pkg-config --libs check)
