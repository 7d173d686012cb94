# lctrace: build and install the binary with its manual page and shell completions.
#   make                               release build (.build/release/lctrace)
#   make sample                        the README's quick start: build, load SampleTraces, report
#   make install [PREFIX=/usr/local]   binary, man page, bash/zsh/fish completions
#   make uninstall [PREFIX=/usr/local]
# DESTDIR stages an install for packaging. The man page and the completions are written by
# the installed binary itself (lctrace help --man, lctrace completions SHELL), so they list
# exactly its commands and options.

PREFIX ?= /usr/local
CONFIGURATION ?= release
SWIFT ?= swift
# Linux: link the Swift runtime into the binary, so it runs without the toolchain installed.
# (macOS has the Swift runtime in the system.)
STATIC_STDLIB ?= $(if $(filter Linux,$(shell uname -s)),--static-swift-stdlib,)

BIN = .build/$(CONFIGURATION)/lctrace
BINDIR = $(DESTDIR)$(PREFIX)/bin
MANDIR = $(DESTDIR)$(PREFIX)/share/man/man1
BASHDIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHDIR = $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISHDIR = $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d

.PHONY: all build sample install uninstall

all: build

build:
	$(SWIFT) build -c $(CONFIGURATION) $(STATIC_STDLIB) --product lctrace

# The quick start: load the sample sessions into sample.db (ignored by git) and print every
# finding (--fail-on never: the samples hold errors on purpose, which would exit 1).
sample: build
	"$(BIN)" ingest --db sample.db SampleTraces
	"$(BIN)" report --db sample.db --fail-on never

install: build
	install -d "$(BINDIR)" "$(MANDIR)" "$(BASHDIR)" "$(ZSHDIR)" "$(FISHDIR)"
	install -m 755 "$(BIN)" "$(BINDIR)/lctrace"
	"$(BIN)" help --man > "$(MANDIR)/lctrace.1"
	"$(BIN)" completions bash > "$(BASHDIR)/lctrace"
	"$(BIN)" completions zsh > "$(ZSHDIR)/_lctrace"
	"$(BIN)" completions fish > "$(FISHDIR)/lctrace.fish"

uninstall:
	rm -f "$(BINDIR)/lctrace" "$(MANDIR)/lctrace.1" "$(BASHDIR)/lctrace" "$(ZSHDIR)/_lctrace" "$(FISHDIR)/lctrace.fish"
