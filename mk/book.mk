# wirebookd + libwirebook end to end, in make check: the demo (generated
# session -> wirebookd -> shared memory -> wb-book) must show a Super-Book
# and the per-feed stats, and exit 0.
CHECK_EXTRA += book-smoke

.PHONY: book-smoke
book-smoke: all
	@scripts/demo.sh > $(O)/book-smoke.out 2>&1 || { cat $(O)/book-smoke.out; echo "book-smoke: demo failed"; exit 1; }
	@grep -q '^NBBO   bid ' $(O)/book-smoke.out && grep -q 'nasdaq  itch' $(O)/book-smoke.out || \
		{ cat $(O)/book-smoke.out; echo "book-smoke: no Super-Book or no stats in the demo output"; exit 1; }
	@for v in NASDAQ BZX BYX EDGX EDGA NYSE ARCA; do \
		grep -qE "^  $$v +bid +[0-9]+\.[0-9]+ x" $(O)/book-smoke.out || \
		{ cat $(O)/book-smoke.out; echo "book-smoke: $$v does not quote in the demo's Super-Book"; exit 1; }; \
	done
	@echo "book-smoke: ok"
