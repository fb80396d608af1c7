# A simulation's research output (issue 25): examples/join_bid's --fills and
# --queue CSV as wb-export's fills and queue tables (--sim-fills,
# --sim-queue; tools/export/simout.c), HDF5 and CSV, checked row by row and
# column by column with h5py against the CSV, and wirebook.simulate()'s
# export(). Part of make check; about 15 s.
CHECK_EXTRA += simout-test

.PHONY: simout-test
simout-test: $(O)/examples/join_bid $(O)/wb-gen $(O)/wb-export $(O)/wirebookd $(LIB_SHM_SO)
	B=$(O) python3 tests/simout/simout_test.py
