# A dead recovery server (tests/tools/recovery-dead.sh, issue 23.2): named
# on stderr at once, no crawl, no spinning core. Part of make check (a few
# seconds).

.PHONY: recovery-dead-test

recovery-dead-test: $(O)/wb-gen $(O)/wirebookd
	B=$(O) tests/tools/recovery-dead.sh

CHECK_EXTRA += recovery-dead-test
