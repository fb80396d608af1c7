# Benchmarks beyond the tests/bench/bench_* programs `make bench` runs:
#
#   make bench-instructions   instructions/msg of decode, venue books and
#                             Super-Book under callgrind, on a fixed sample
#                             (deterministic; BENCH_INSTR_MESSAGES sizes it)
#                             and on a hostile-day sample (BENCH_INSTR_HOSTILE)
#   make bench-file           bench_file's four rows on the two generated
#                             5,000,000-message days whose recipes are in
#                             scripts/bench.sh, written once to build/bench/:
#                             the friendly day (day-5m.itch: 8,000 symbols,
#                             Zipf-like activity, ~1M live orders at the peak)
#                             and the hostile day (day-hostile-5m.itch: ~1M
#                             live orders all day, even over the symbols and
#                             levels); BENCH_FILE=F: that file alone
#   make bench-table          the issue's table (work, figure, target) from
#                             the two above, plus a whole wirebookd
#                             --itch-file run on the same file
#
# All three are part of `make bench`, in that order; none is a test.

BENCH_INSTR_MESSAGES ?= 200000
# The hostile day's sample (issue 21): messages, profile, symbols; 1M over
# 1,600 symbols keeps the 5M-message day's depth a symbol (scripts/bench-instructions.sh).
BENCH_INSTR_HOSTILE ?= 1000000 hostile 1600
# valgrind 3.19 does not decode every -march=native instruction (AVX-512).
CALLGRIND_O := $(O)/callgrind
CALLGRIND_OPT := -O2 -g -march=x86-64-v3
BENCH_DAY := $(O)/bench/day-5m.itch
BENCH_HOSTILE_DAY := $(O)/bench/day-hostile-5m.itch
BENCH_FILE ?= $(BENCH_DAY)
BENCH_BOTH_DAYS := $(filter $(BENCH_DAY),$(BENCH_FILE))

.PHONY: bench-instructions bench-file bench-table

$(O)/bench/callgrind_sample: tests/bench/callgrind_sample.c $(GEN_LIBS) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_WB) $(OPT) $< -o $@ $(GEN_LIBS) $(LDLIBS_WB)

bench-instructions:
	@$(MAKE) --no-print-directory -s O=$(CALLGRIND_O) OPT="$(CALLGRIND_OPT)" $(CALLGRIND_O)/bench/callgrind_sample
	@mkdir -p $(O)/bench
	@scripts/bench-instructions.sh $(CALLGRIND_O)/bench/callgrind_sample $(BENCH_INSTR_MESSAGES) \
		> $(O)/bench/bench-instructions.out && cat $(O)/bench/bench-instructions.out
	@scripts/bench-instructions.sh $(CALLGRIND_O)/bench/callgrind_sample $(BENCH_INSTR_HOSTILE) \
		> $(O)/bench/bench-instructions-hostile.out && cat $(O)/bench/bench-instructions-hostile.out

$(BENCH_DAY): | $(O)/wb-gen
	scripts/bench.sh --day friendly $(O)/wb-gen $@

$(BENCH_HOSTILE_DAY): | $(O)/wb-gen
	scripts/bench.sh --day hostile $(O)/wb-gen $@

# bench-file.out stays the friendly day's (or BENCH_FILE's): bench-table reads it.
bench-file: $(O)/bench/bench_file $(if $(BENCH_BOTH_DAYS),$(BENCH_DAY) $(BENCH_HOSTILE_DAY))
ifneq ($(BENCH_BOTH_DAYS),)
	@scripts/bench.sh --file-rows friendly $(O)/bench/bench_file $(BENCH_DAY) $(O)/bench/bench-file.out
	@scripts/bench.sh --file-rows hostile $(O)/bench/bench_file $(BENCH_HOSTILE_DAY) \
		$(O)/bench/bench-file-hostile.out
else
	$(O)/bench/bench_file $(BENCH_FILE) > $(O)/bench/bench-file.out && cat $(O)/bench/bench-file.out
endif

bench-table: $(O)/wirebookd
	@test -s $(O)/bench/bench-file.out || $(MAKE) --no-print-directory bench-file
	@test -s $(O)/bench/bench-instructions.out || $(MAKE) --no-print-directory bench-instructions
	@scripts/bench-table.sh $(O)/bench/bench-file.out $(O)/bench/bench-instructions.out $(O)/wirebookd $(BENCH_FILE)

BENCH_EXTRA += bench-file bench-instructions bench-table
