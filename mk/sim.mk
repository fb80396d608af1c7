# The simulator (issue 25): wirebookd --lockstep with the example strategy
# examples/join_bid on generated ITCH, PITCH and XDP days: two runs give the
# same fills, and every fill and end state is the FIFO model's
# (tests/queue/queue_ref.py), with and without a latency model (fixed,
# sampled); with tests/sim/sim_probe the orders at every level at random
# steps, and the real captures of pcaps/ too. Part of make check; about 75 s.
CHECK_EXTRA += sim-test

.PHONY: sim-test
# tests/sim/sim_probe: a small strategy that joins the best level of any
# symbol with detail and prints its requests and the orders at every level
# at given steps (the real captures; the sampled delay).
$(O)/test/sim_probe: tests/sim/sim_probe.c $(LIBS) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_WB) $(OPT) $< -o $@ $(LIBS) $(LDLIBS_WB)

sim-test: $(O)/test/sim_probe $(O)/examples/join_bid $(O)/wb-gen $(O)/wb-dump $(O)/wirebookd $(LIB_SHM_SO)
	B=$(O) python3 tests/sim/sim_test.py

# make bench's simulate row: a generated day (BENCH_SIM_MESSAGES, 8,000
# symbols) replayed with --lockstep and examples/join_bid, detail for 600
# symbols, up to 1,000 virtual orders, against the replay alone. Not a test.
BENCH_SIM_MESSAGES ?= 50000000
BENCH_SIM_DAY := $(O)/bench/day-sim-$(BENCH_SIM_MESSAGES).itch
.PHONY: bench-simulate
$(BENCH_SIM_DAY): | $(O)/wb-gen
	@mkdir -p $(dir $@)
	$(O)/wb-gen -q -p day -n $(BENCH_SIM_MESSAGES) --symbols 8000 -f itch-file -o $@
bench-simulate: $(BENCH_SIM_DAY) $(O)/wirebookd $(O)/wb-dump $(O)/examples/join_bid
	@scripts/bench-simulate.sh $(O) $(BENCH_SIM_DAY) | tee $(O)/bench/bench-simulate.out
BENCH_EXTRA += bench-simulate
