# install.mk - `make install` / `make uninstall` (PREFIX, DESTDIR, the GNU names for the rest):
#   $(bindir)/vramtrace                      the CLI; `run` finds the library at ../lib/vramtrace/
#   $(libdir)/vramtrace/libvramtrace.so      the tracer (a preload, not a library to link: not on
#                                            the loader's path, no SONAME symlinks)
#   $(includedir)/vramtrace/*.h              the optional API (header only) and the trace format's names
#   $(libdir)/pkgconfig/vramtrace.pc         cflags for the header, and the tracer's path as `preload`
#   $(mandir)/man1/vramtrace*.1              generated from the CLI's --help (tools/gen-docs.py)
#   bash and zsh completion                  generated the same way
# Paths may hold spaces. Nothing outside these files is written; uninstall removes exactly them.
PREFIX      ?= /usr/local
DESTDIR     ?=
bindir      ?= $(PREFIX)/bin
libdir      ?= $(PREFIX)/lib
includedir  ?= $(PREFIX)/include
datarootdir ?= $(PREFIX)/share
mandir      ?= $(datarootdir)/man
bashcompdir ?= $(datarootdir)/bash-completion/completions
zshcompdir  ?= $(datarootdir)/zsh/site-functions
INSTALL     ?= install

VT_VERSION := $(shell sed -n 's/^\#define VRAMTRACE_VERSION "\([^"]*\)".*/\1/p' include/vramtrace/vramtrace.h)
MAN_PAGES  := vramtrace vramtrace-run vramtrace-report vramtrace-bandwidth
PUB_HEADERS := $(wildcard include/vramtrace/*.h)

.PHONY: install uninstall docs-gen
docs-gen: $(BUILD)/doc/man/vramtrace.1
$(BUILD)/doc/man/vramtrace.1: $(BUILD)/vramtrace tools/gen-docs.py
	python3 tools/gen-docs.py $(BUILD)/vramtrace $(BUILD)/doc

# written at install time: it names PREFIX, which a later `make install PREFIX=...` changes
install: lib cli docs-gen
	$(INSTALL) -d "$(DESTDIR)$(bindir)" "$(DESTDIR)$(libdir)/vramtrace" "$(DESTDIR)$(includedir)/vramtrace" \
	    "$(DESTDIR)$(libdir)/pkgconfig" "$(DESTDIR)$(mandir)/man1" "$(DESTDIR)$(bashcompdir)" "$(DESTDIR)$(zshcompdir)"
	$(INSTALL) -m 755 $(BUILD)/vramtrace "$(DESTDIR)$(bindir)/vramtrace"
	$(INSTALL) -m 755 $(BUILD)/libvramtrace.so "$(DESTDIR)$(libdir)/vramtrace/libvramtrace.so"
	$(INSTALL) -m 644 $(PUB_HEADERS) "$(DESTDIR)$(includedir)/vramtrace/"
	printf '%s\n' 'prefix=$(PREFIX)' 'includedir=$(patsubst $(PREFIX)/%,$${prefix}/%,$(includedir))' \
	    'libdir=$(patsubst $(PREFIX)/%,$${prefix}/%,$(libdir))' \
	    'preload=$${libdir}/vramtrace/libvramtrace.so' '' \
	    'Name: vramtrace' 'Description: optional API of the vramtrace CUDA memory tracer (header only)' \
	    'Version: $(VT_VERSION)' 'Cflags: -I$${includedir}' 'Libs: -ldl' >"$(DESTDIR)$(libdir)/pkgconfig/vramtrace.pc"
	chmod 644 "$(DESTDIR)$(libdir)/pkgconfig/vramtrace.pc"
	$(INSTALL) -m 644 $(MAN_PAGES:%=$(BUILD)/doc/man/%.1) "$(DESTDIR)$(mandir)/man1/"
	$(INSTALL) -m 644 $(BUILD)/doc/completion/vramtrace.bash "$(DESTDIR)$(bashcompdir)/vramtrace"
	$(INSTALL) -m 644 $(BUILD)/doc/completion/_vramtrace "$(DESTDIR)$(zshcompdir)/_vramtrace"

uninstall:
	rm -f "$(DESTDIR)$(bindir)/vramtrace" "$(DESTDIR)$(libdir)/vramtrace/libvramtrace.so" \
	    $(foreach h,$(notdir $(PUB_HEADERS)),"$(DESTDIR)$(includedir)/vramtrace/$(h)") \
	    "$(DESTDIR)$(libdir)/pkgconfig/vramtrace.pc" $(foreach m,$(MAN_PAGES),"$(DESTDIR)$(mandir)/man1/$(m).1") \
	    "$(DESTDIR)$(bashcompdir)/vramtrace" "$(DESTDIR)$(zshcompdir)/_vramtrace"
	-rmdir "$(DESTDIR)$(libdir)/vramtrace" "$(DESTDIR)$(includedir)/vramtrace" 2>/dev/null

# The Debian package and the wheel built from this tree and installed in a test (tests/cases/
# packages.sh): minutes, so not in `make test`; .ci/run runs it.
# Its prerequisites (all, the simulator, the test programs) are named in the Makefile.
.PHONY: test-packages
test-packages:
	@VT_TEST_PACKAGES=1 BUILD=$(BUILD) NVCC="$(NVCC)" CUDA_HOME="$(CUDA_HOME)" SAN="$(SAN)" sh tests/run.sh packages
