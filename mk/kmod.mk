# The kernel module and its VM integration test.
#
#   make module     build kmod/wirebook.ko for every installed kernel build
#                   tree (/lib/modules/*/build): build/kmod/<kver>/wirebook.ko.
#                   Prints a note and succeeds when no headers are installed,
#                   so it is part of `make` (ALL_EXTRA).
#   make vmtest     boot every installed Debian kernel that has headers under
#                   qemu (TCG) and run the module scenarios (tests/vm/run.sh);
#                   part of `make check`. VMTEST_ARGS passes options, e.g.
#                   make vmtest VMTEST_ARGS="--kernel 6.1.0-56-amd64 --keep"

KMOD_KVERS := $(sort $(patsubst /lib/modules/%/build/Makefile,%,$(wildcard /lib/modules/*/build/Makefile)))
VMTEST_ARGS ?=

.PHONY: module vmtest

module:
	@if [ -z "$(KMOD_KVERS)" ]; then \
		echo "module: no kernel headers installed (apt-get install linux-headers-amd64): skipped"; \
	fi
	@for k in $(KMOD_KVERS); do \
		echo "module: building for $$k"; \
		$(MAKE) --no-print-directory -s -C kmod KVER=$$k STAGE=$(abspath $(O))/kmod/$$k || exit 1; \
	done

# The VM test's helpers (tests/vm/vm-*.c): a ring reader and a GSO sender.
$(O)/vm/%: tests/vm/%.c $(LIBS) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_WB) $(OPT) $< -o $@ $(LIBS) $(LDLIBS_WB)

vmtest: module $(O)/vm/vm-read $(O)/vm/vm-gso-send $(O)/wb-subscribe $(O)/wb-dump $(O)/wb-gen \
		$(O)/wirebookd $(O)/wb-book
	tests/vm/run.sh $(VMTEST_ARGS)

ALL_EXTRA += module
CHECK_EXTRA += vmtest
