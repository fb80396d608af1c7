# The simulator (issue 25): wirebookd --lockstep with the example strategy
# examples/join_bid on generated ITCH, PITCH and XDP days: two runs give the
# same fills, and every fill and end state is the FIFO model's
# (tests/queue/queue_ref.py), with and without a latency model. Part of
# make check; about a minute.
CHECK_EXTRA += sim-test

.PHONY: sim-test
sim-test: $(O)/examples/join_bid $(O)/wb-gen $(O)/wb-dump $(O)/wirebookd $(LIB_SHM_SO)
	B=$(O) python3 tests/sim/sim_test.py
