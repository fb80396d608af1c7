# The SIP decoders' instructions per message under callgrind (make bench):
# bench_sip built without -march=native, one pass per case.

.PHONY: bench-sip-callgrind

$(O)/cg/bench/bench_sip: tests/bench/bench_sip.c $(FEED_SRC) $(FEEDTEXT_SRC) $(TCOMMON_SRC) $(INPUT_SRC) $(GEN_SRC) $(HEADERS)
	$(MAKE) -s O=$(O)/cg OPT="-O2 -g" $(O)/cg/bench/bench_sip

bench-sip-callgrind: $(O)/cg/bench/bench_sip
	@echo "== bench_sip under callgrind"
	@scripts/bench-sip-callgrind.sh $(O)/cg/bench/bench_sip

BENCH_EXTRA += bench-sip-callgrind

# The SIP-vs-direct comparison against a generated day whose lag and
# locked/crossed episodes wb-gen knows (tests/tools/sip_compare.sh).
.PHONY: sip-compare-test

sip-compare-test: $(O)/wb-gen $(O)/wb-sipstat $(O)/wirebookd
	B=$(O) tests/tools/sip_compare.sh

CHECK_EXTRA += sip-compare-test
