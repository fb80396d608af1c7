# Running wirebook as a service (tests/service/): the control socket for the
# whole life of wirebookd, readers across restarts, install into a prefix,
# strict options, captures of every link type, the metrics endpoint, the
# config file and a short soak. Part of make check.
#
#   make service-test                  every tests/service/test_*.sh
#   make service-test SERVICE_TESTS=tests/service/test_control.sh

SERVICE_TESTS ?=

.PHONY: service-test

service-test: all $(O)/soak/soak-send $(O)/soak/soak-reader
	B=$(O) tests/service/run.sh $(SERVICE_TESTS)

CHECK_EXTRA += service-test

# The soak test's sender and reader (not installed).
$(O)/soak/soak-send: tests/service/soak_send.c $(LIBS) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_WB) $(OPT) $< -o $@ $(LIBS) $(LDLIBS_WB)

$(O)/soak/soak-reader: tests/service/soak_reader.c $(LIB_SHM) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_WB) $(OPT) $< -o $@ $(LIB_SHM) -lrt

SOAK_TOOLS := $(O)/soak/soak-send $(O)/soak/soak-reader

# make soak: 10 minutes at 1 M msg/s (scripts/soak.sh; needs root). The
# rate and length are parameters: make soak SOAK_ARGS="--rate 500000".
# make check runs a 60-second version at a rate a shared 2-core machine
# keeps up with (soak-check).
SOAK_ARGS ?= --seconds 600 --rate 1000000
SOAK_CHECK_ARGS ?= --seconds 60 --rate 200000

.PHONY: soak soak-check

soak: all $(SOAK_TOOLS)
	B=$(O) scripts/soak.sh $(SOAK_ARGS)

soak-check: all $(SOAK_TOOLS)
	B=$(O) scripts/soak.sh $(SOAK_CHECK_ARGS)

CHECK_EXTRA += soak-check
