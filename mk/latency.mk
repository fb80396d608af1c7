# Per-feed latency: `make latency` measures hook/receive-to-Super-Book latency
# over a veth pair (scripts/latency.sh); `make latency-test` checks the
# latency scripts' parsing, statistics and multi-rate table on fixture logs,
# and wb-tune on fake /proc and /sys trees (part of make check).
#
#   make latency                              1k, 10k, 100k, 300k, 1M msg/s, each
#                                             builder path (wirebookd --path), one
#                                             table (latency-scripts/rates)
#   make latency LATENCY_ARGS="--rates 10000 --seconds 5"
#   make latency LATENCY_ARGS="--rates 1000,100000 --paths rtc --plot"
#   make latency LATENCY_ARGS="--mps 1000000 --seconds 5"   one rate, per feed
#   make latency LATENCY_ARGS="--multiplier 2"
#   make latency LATENCY_ARGS="--kernel --iface eth1 ..."   (real server, see
#                                             latency-scripts/README.md)

LATENCY_ARGS ?=

.PHONY: latency latency-test

latency: tools
	scripts/latency.sh $(LATENCY_ARGS)

latency-test: $(O)/wb-latency-text $(O)/wb-tune
	WB_LATENCY_TEXT=$(O)/wb-latency-text python3 tests/latency-scripts/test_latency_scripts.py
	WB_TUNE=$(O)/wb-tune python3 tests/latency-scripts/test_wb_tune.py

CHECK_EXTRA += latency-test
