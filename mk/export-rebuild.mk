# Issue 24's done-when test: a generated nine-venue day exported to HDF5,
# every book rebuilt from the order-level table alone at ten random times
# (tests/export/rebuild_books.py) equals the exported book and bbo tables.

.PHONY: export-rebuild-test

export-rebuild-test: $(O)/wb-export $(O)/wb-gen
	B=$(O) tests/service/run.sh tests/export/test_rebuild.sh

CHECK_EXTRA += export-rebuild-test
