# Orders at a price and queue positions (issue 25): the order detail read
# back through libwirebook, checked event for event against a separate
# FIFO model in Python (tests/queue/queue_ref.py) on generated ITCH, PITCH
# and XDP days. Part of make check; about a minute.
CHECK_EXTRA += queue-test

$(O)/test/queue_trace: tests/queue/queue_trace.c $(LIBS) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_WB) $(OPT) $< -o $@ $(LIBS) $(LDLIBS_WB)

.PHONY: queue-test
queue-test: $(O)/test/queue_trace $(O)/wb-gen $(O)/wb-dump $(O)/wirebookd $(LIB_SHM_SO)
	B=$(O) python3 tests/queue/queue_ref.py
