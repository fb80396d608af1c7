# Command-line checks of wb-dump and wb-gen (tests/tools/cli.sh): the real
# captures print the spec's values, bad files fail clearly, the generator is
# deterministic and all its output formats decode alike. Part of make check.

.PHONY: tools-test

tools-test: $(O)/wb-dump $(O)/wb-gen
	B=$(O) tests/tools/cli.sh

CHECK_EXTRA += tools-test
