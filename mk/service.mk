# Running wirebook as a service (tests/service/): the control socket for the
# whole life of wirebookd, readers across restarts, install into a prefix,
# strict options, captures of every link type, the metrics endpoint, the
# config file and a short soak. Part of make check.
#
#   make service-test                  every tests/service/test_*.sh
#   make service-test SERVICE_TESTS=tests/service/test_control.sh

SERVICE_TESTS ?=

.PHONY: service-test

service-test: all
	B=$(O) tests/service/run.sh $(SERVICE_TESTS)

CHECK_EXTRA += service-test
