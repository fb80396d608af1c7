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

# wb-recoveryd: its protocol servers beside it in tools/recoveryd/.
RECOVERYD_SRC := tools/wb-recoveryd.c $(wildcard tools/recoveryd/*.c)

$(O)/wb-recoveryd: $(RECOVERYD_SRC) $(wildcard tools/recoveryd/*.h) $(LIBS) $(HEADERS)
	$(CC) $(CFLAGS_WB) $(OPT) $(RECOVERYD_SRC) -o $@ $(LIBS) $(LDLIBS_WB)
