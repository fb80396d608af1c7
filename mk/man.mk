# Man pages for wirebookd and every wb-* tool, made by help2man from their
# --help (one source of truth: the text the tool prints), with a NAME line
# and SEE ALSO from here; the C API's pages are written by hand in man/
# (libwirebook.3, wb_events.3, wb_sip.3, wb_recovery.3, wb_orders.3, wb_nats.3; the simulator's
# overview wb_simulate.7), and every exported function gets a link
# page naming its page. Installed by make install; man-test checks them.
#
#   make man            build/man/man{1,8}/*
#   man -l build/man/man8/wirebookd.8

MAN_VERSION := $(WB_VERSION)

# Section 8 for the daemon and the host tuner, 1 for the rest.
MAN8_TOOLS := wirebookd wb-tune
man_section = $(if $(filter $(1),$(MAN8_TOOLS)),8,1)
MAN_PAGES := $(foreach t,$(notdir $(TOOLS)),$(O)/man/man$(call man_section,$(t))/$(t).$(call man_section,$(t)))

desc_wirebookd       := build order books from exchange feeds and publish them in shared memory
desc_wb-book         := show the Super-Book of symbols from a running wirebookd
desc_wb-dump         := decode an exchange capture or BinaryFILE into wirebook events
desc_wb-export       := export a capture or BinaryFILE to CSV or HDF5 tables, DBN or hftbacktest files for research
desc_wb-gen          := generate a deterministic synthetic trading session as a capture
desc_wb-kread        := print the events the wirebook kernel module writes to its rings
desc_wb-latency-text := print the builder's binary latency logs as text
desc_wb-tune         := report and set the host settings that decide wirebook's latency
desc_wb-subscribe    := control the symbols, feeds and statistics of the wirebook producer, and wirebookd's order detail and queue tracking
desc_wb-sipstat      := compare the SIP's NBBO with the one wirebook builds from the direct feeds
desc_wb-recoveryd    := serve a capture's feeds over the exchanges' gap-recovery protocols, for tests

ALL_EXTRA += $(MAN_PAGES)

$(O)/man/see-also.h2m: mk/man.mk
	@mkdir -p $(dir $@)
	{ echo '[SEE ALSO]'; \
	  for t in $(sort $(notdir $(TOOLS))); do \
		case " $(MAN8_TOOLS) " in *" $$t "*) s=8 ;; *) s=1 ;; esac; echo ".BR $$t ($$s),"; done; \
	  echo 'and docs/tools.md in the wirebook source tree (make install puts the examples in'; \
	  echo '.IR PREFIX/share/wirebook/examples ).'; } > $@

# help2man reads "Usage:"; the tools print "usage:" (and continuation lines
# indented): a wrapper of the tool's name capitalises it on the way.
$(O)/man/man1/%.1 $(O)/man/man8/%.8: $(O)/% $(O)/man/see-also.h2m
	@mkdir -p $(dir $@) $(O)/man/bin
	printf '#!/bin/sh\n"%s" "$$@" | sed -e "1s/^usage:/Usage:/" -e "2,4s/^       \\([a-z]\\)/   or: \\1/"\n' \
		"$(abspath $<)" > $(O)/man/bin/$*
	chmod +x $(O)/man/bin/$*
	help2man --no-info --no-discard-stderr --version-string=$(MAN_VERSION) -S wirebook \
		-s $(call man_section,$*) -n "$(desc_$*)" -i $(O)/man/see-also.h2m \
		-o $@ $(O)/man/bin/$*

.PHONY: man install-man man-test

man: $(MAN_PAGES)

MANDIR ?= $(PREFIX)/share/man

# The C API: wb_events_* are in wb_events.3, every other function in
# libwirebook.3; the function list is the version script's.
API_FUNCS = $(shell sed -n 's/^[[:space:]]*\(wb_[a-z0-9_]*\);/\1/p' $(WB_SO_MAP))
api_page = $(if $(filter wb_nats_%,$(1)),wb_nats,$(if $(filter wb_orders_% wb_order_levels wb_queue_% wb_virtual_%,$(1)),wb_orders,$(if $(filter wb_events_%,$(1)),wb_events,$(if $(filter wb_sip_% wb_delay_%,$(1)),wb_sip,$(if $(filter wb_recovery_% wb_symbol_recovering,$(1)),wb_recovery,libwirebook)))))

install-man: $(MAN_PAGES)
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8
	install -m 644 $(filter %.1,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(filter %.8,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man8/
	install -m 644 man/*.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 644 man/*.7 $(DESTDIR)$(MANDIR)/man7/
	@for f in $(API_FUNCS); do \
		case $$f in wb_events_*) p=wb_events ;; wb_sip_*|wb_delay_*) p=wb_sip ;; \
		wb_recovery_*|wb_symbol_recovering) p=wb_recovery ;; \
		wb_nats_*) p=wb_nats ;; \
		wb_orders_*|wb_order_levels|wb_queue_*|wb_virtual_*) p=wb_orders ;; \
		*) p=libwirebook ;; esac; \
		[ -e man/$$f.3 ] || echo ".so man3/$$p.3" > $(DESTDIR)$(MANDIR)/man3/$$f.3; \
	done

INSTALL_EXTRA += install-man

man-test: all
	B=$(O) TOOLS="$(notdir $(TOOLS))" FUNCS="$(API_FUNCS)" tests/api/man.sh

CHECK_EXTRA += man-test
