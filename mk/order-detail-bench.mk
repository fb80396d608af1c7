# What order detail costs the live path (issue 25), in instructions per
# event (callgrind, deterministic): bench_file's decode + venue books +
# Super-Book row with --order-detail off, 600 and all
# (scripts/bench-order-detail.sh). A few minutes; not part of make bench.
.PHONY: bench-order-detail

bench-order-detail:
	@$(MAKE) --no-print-directory -s O=$(CALLGRIND_O) OPT="$(CALLGRIND_OPT)" $(CALLGRIND_O)/bench/bench_file
	@mkdir -p $(O)/bench
	@scripts/bench-order-detail.sh $(CALLGRIND_O)/bench/bench_file > $(O)/bench/bench-order-detail.out && \
		cat $(O)/bench/bench-order-detail.out
