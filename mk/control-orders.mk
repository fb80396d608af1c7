# Order detail and queue tracking through wirebookd's control socket
# (issue 25): wb-subscribe detail/track/position against a wirebookd paused
# mid-day, checked with the Python reader and the FIFO model
# (tests/queue/control_test.py). Part of make check; a few seconds.
CHECK_EXTRA += control-orders-test

.PHONY: control-orders-test
control-orders-test: $(O)/wb-gen $(O)/wb-dump $(O)/wirebookd $(O)/wb-subscribe $(LIB_SHM_SO)
	B=$(O) python3 tests/queue/control_test.py
