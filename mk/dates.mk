# The dates and times of file sources (tests/tools/dates.sh): a generated
# day starts with its session, --skip-idle, every protocol's exch_ts on the
# capture's day at --speed, a BinaryFILE's day and deterministic recv_ts.
# Part of make check.

.PHONY: dates-test

dates-test: $(O)/wb-dump $(O)/wb-gen $(O)/wb-export $(O)/wirebookd $(O)/wb-book $(LIB_SHM_SO)
	B=$(O) tests/tools/dates.sh

CHECK_EXTRA += dates-test
