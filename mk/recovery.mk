# Gap recovery end to end (scripts/recovery.sh): a generated day lost at
# random on both lines, recovered through wb-recoveryd on loopback, its
# books compared with the whole day's by checksum. One line per feed and
# loss rate.
#
#   make recovery          loss 0.1 %, 1 % and 5 %, 400k messages a day
#   make recovery-short    loss 1 %, 100k messages (part of make check, a few seconds),
#                          and the command-line checks of tests/tools/recovery*.sh

.PHONY: recovery recovery-short

RECOVERY_BINS := $(O)/wb-gen $(O)/wb-recoveryd $(O)/wirebookd $(O)/wb-dump

recovery: $(RECOVERY_BINS)
	B=$(O) scripts/recovery.sh

recovery-short: $(RECOVERY_BINS)
	B=$(O) tests/tools/recovery.sh
	B=$(O) tests/tools/recovery-glimpse.sh
	B=$(O) tests/tools/recovery-utpsnap.sh
	B=$(O) tests/tools/recovery-spin.sh
	B=$(O) scripts/recovery.sh --short

CHECK_EXTRA += recovery-short

# wb-recoveryd, the exchange simulators' front end (sim/): built for the tests
# and the demo by make all, never installed (not in TOOLS: no bin/, no man page).
# Its servers are build/libwbsim.a, which no product links.
$(O)/wb-recoveryd: sim/wb-recoveryd.c $(LIB_SIM) $(LIBS) $(HEADERS)
	$(CC) $(CFLAGS_WB) -I. $(OPT) $< -o $@ $(LIB_SIM) $(LIBS) $(LDLIBS_WB)

ALL_EXTRA += $(O)/wb-recoveryd
