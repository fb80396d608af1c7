# Benchmarks beyond the tests/bench/bench_* programs `make bench` runs:
#
#   make bench-instructions   instructions/msg of decode, venue books and
#                             Super-Book under callgrind, on a fixed sample
#                             (deterministic; BENCH_INSTR_MESSAGES sizes it)
#   make bench-file           bench_file's four rows on a generated
#                             5,000,000-message day (8,000 symbols, ~1M
#                             live orders at the peak), written once to
#                             build/bench/day-5m.itch; BENCH_FILE=F another file
#   make bench-table          the issue's table (work, figure, target) from
#                             the two above, plus a whole wirebookd
#                             --itch-file run on the same file
#
# All three are part of `make bench`, in that order; none is a test.

BENCH_INSTR_MESSAGES ?= 200000
# valgrind 3.19 does not decode every -march=native instruction (AVX-512).
CALLGRIND_O := $(O)/callgrind
CALLGRIND_OPT := -O2 -g -march=x86-64-v3
BENCH_DAY := $(O)/bench/day-5m.itch
BENCH_FILE ?= $(BENCH_DAY)

.PHONY: bench-instructions bench-file bench-table

$(O)/bench/callgrind_sample: tests/bench/callgrind_sample.c $(GEN_LIBS) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_WB) $(OPT) $< -o $@ $(GEN_LIBS) $(LDLIBS_WB)

bench-instructions:
	@$(MAKE) --no-print-directory -s O=$(CALLGRIND_O) OPT="$(CALLGRIND_OPT)" $(CALLGRIND_O)/bench/callgrind_sample
	@mkdir -p $(O)/bench
	@scripts/bench-instructions.sh $(CALLGRIND_O)/bench/callgrind_sample $(BENCH_INSTR_MESSAGES) \
		> $(O)/bench/bench-instructions.out && cat $(O)/bench/bench-instructions.out

$(BENCH_DAY): | $(O)/wb-gen
	@mkdir -p $(dir $@)
	$(O)/wb-gen -q -p day -n 5000000 --symbols 8000 -f itch-file -o $@

bench-file: $(O)/bench/bench_file $(if $(filter $(BENCH_DAY),$(BENCH_FILE)),$(BENCH_DAY))
	$(O)/bench/bench_file $(BENCH_FILE) > $(O)/bench/bench-file.out && cat $(O)/bench/bench-file.out

bench-table: $(O)/wirebookd
	@test -s $(O)/bench/bench-file.out || $(MAKE) --no-print-directory bench-file
	@test -s $(O)/bench/bench-instructions.out || $(MAKE) --no-print-directory bench-instructions
	@scripts/bench-table.sh $(O)/bench/bench-file.out $(O)/bench/bench-instructions.out $(O)/wirebookd $(BENCH_FILE)

BENCH_EXTRA += bench-file bench-instructions bench-table
