# The library as users meet it (issue 15). Part of make check:
#
#   make headers-test    every include/wirebook header, C11/C17, C++11..20, gcc and clang
#   make layering-test   every layer includes only the layers below it (DESIGN.md)
#   make api-test        tests/api/test_*.sh: the C++ and event examples, the Python
#                        package and wb-export, against a live wirebookd and an install
#   make abi-check       exported symbols, SONAME, abidiff against abi/libwirebook.abi
#   make portable-test   installed objects for baseline x86-64; NATIVE=1 for this CPU
#
# and make install runs install-python (INSTALL_EXTRA).

CXX     ?= c++
CXXFLAGS_WB := -std=c++17 -Wall -Wextra -Werror -pedantic -Iinclude

CXX_EXAMPLE_SRC := $(wildcard examples/*.cpp)
CXX_EXAMPLES := $(patsubst examples/%.cpp,$(O)/examples/%,$(CXX_EXAMPLE_SRC))
ALL_EXTRA += $(CXX_EXAMPLES)

$(O)/examples/%: examples/%.cpp $(LIB_SHM) $(wildcard include/wirebook/*.h)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS_WB) $(OPT) $< -o $@ $(LIB_SHM) -lrt

.PHONY: headers-test layering-test api-test

headers-test:
	tests/api/headers.sh

layering-test:
	tests/api/layering.sh

API_TESTS ?=

api-test: all
	B=$(O) tests/service/run.sh $(or $(API_TESTS),$(wildcard tests/api/test_*.sh))

CHECK_EXTRA += headers-test layering-test api-test

# ABI: lib/shm/libwirebook.map exports the public functions; abi-check
# compares build/libwirebook.so with the stored baseline (libabigail).
# After a deliberate change: make abi-baseline (and, when abi-check calls
# it incompatible, bump WB_SOVERSION first).
.PHONY: abi-check abi-baseline

abi-check: $(LIB_SHM_SO) $(LIB_SHM)
	B=$(O) SOVERSION=$(WB_SOVERSION) tests/api/abi.sh

abi-baseline: $(LIB_SHM_SO)
	@mkdir -p abi
	abidw --no-corpus-path --drop-private-types --headers-dir include/wirebook $< | \
		sed "s| comp-dir-path='[^']*'||" > abi/libwirebook.abi
	@echo "abi/libwirebook.abi: the ABI of libwirebook.so.$(WB_SOVERSION); commit it"

CHECK_EXTRA += abi-check

# Installed objects for the baseline x86-64 ISA (NATIVE=1: this CPU).
.PHONY: portable-test

portable-test: tools
	B=$(O) TOOLS="$(TOOLS)" tests/api/portable.sh

CHECK_EXTRA += portable-test

# The Python package (python/wirebook, ctypes over libwirebook.so). make
# install puts it where the prefix's python3 looks (Debian's layout; any
# other prefix: PYTHONPATH=PREFIX/lib/python3/dist-packages) and records
# the prefix's lib directory in it.
PYTHON ?= python3
PYTHONDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(if $(filter \
	/usr/local,$(PREFIX)),/usr/local/lib/$(shell $(PYTHON) -c \
	'import sys; print("python%d.%d" % sys.version_info[:2])')/dist-packages,$(PREFIX)/lib/python3/dist-packages))

.PHONY: install-python

install-python:
	install -d $(DESTDIR)$(PYTHONDIR)/wirebook
	install -m 644 python/wirebook/*.py $(DESTDIR)$(PYTHONDIR)/wirebook/
	echo "LIBDIR = '$(PREFIX)/lib'  # written by make install" > \
		$(DESTDIR)$(PYTHONDIR)/wirebook/_installed.py

INSTALL_EXTRA += install-python
