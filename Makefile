# Makefile for kvplan: the C core, the Lua binding and CLI, tests and benchmarks.
# `make run` runs the default scenario, `make test` every test, `make check` the
# tests under ASan and UBSan. Both install missing Debian packages when run as root.

# ---- settings you may change ------------------------------------------------
CC = cc
CFLAGS = -std=c11 -O2 -g
WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith \
       -Wcast-align -Wwrite-strings -Wundef -Wformat=2
LDFLAGS =
PREFIX = /usr/local
DESTDIR =
B = build
LUA = lua5.4
# make test and make check run this many test targets at once, each one's
# output printed whole when it ends (--output-sync); make check's valgrind
# this many files at once. JOBS=1: one after the other. A `make -jN` of
# yours is used for the targets instead (its jobserver).
JOBS = $(shell nproc 2>/dev/null || echo 1)

# kvplan counts the C allocations of its own objects against --max-memory
# (engine/cli/limits.c): the linker sends them through __wrap_malloc etc.
MEMWRAP = -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free

# Debian packages the build and tests need: GNU parallel runs the README's
# sharding recipe in the CLI tests; gnuplot (no X) draws `kvplan plot` charts.
DEB_PKGS = liblua5.4-dev libcsv-dev libcmocka-dev libjansson-dev pkg-config lua5.4 \
           parallel gnuplot-nox
# ... and `make test` alone: zsh checks the zsh completion kvplan generates
TEST_PKGS = zsh

# ---- nothing to change below --------------------------------------------------
# the sub-make's -j unless make was given one (its jobserver then serves both)
PAR = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS)) --output-sync=target
LUA_CFLAGS = $(shell pkg-config --cflags lua5.4 2>/dev/null)
LUA_LIBS = $(shell pkg-config --libs lua5.4 2>/dev/null)
CMOCKA_LIBS = $(shell pkg-config --libs cmocka 2>/dev/null)
JANSSON_CFLAGS = $(shell pkg-config --cflags jansson 2>/dev/null)
JANSSON_LIBS = $(shell pkg-config --libs jansson 2>/dev/null)
ALL_CFLAGS = $(CFLAGS) $(WARN) -D_POSIX_C_SOURCE=200809L
PIC = -fPIC

# Three layers, one folder each, dependencies one way: cli -> lua -> core.
#   engine/core/  pure computation (kvplan.h): sees only its own headers
#   engine/io/    report writing (csvw.h): files, no Lua, no core
#   engine/lua/   the bindings (kvplan_lua.h): the only files that see <lua.h>;
#                 embed.c is the build tool that embeds the stdlib
#   engine/cli/   the program: arguments, state setup, errors
# Each layer gets only the include paths of the layers below it, so a core
# file that includes <lua.h> or csvw.h does not compile.
CORE_INC = -Iengine/core
IO_INC = -Iengine/io $(JANSSON_CFLAGS)
LUA_INC = $(CORE_INC) $(IO_INC) -Iengine/lua $(LUA_CFLAGS) $(JANSSON_CFLAGS)
CORE = $(patsubst engine/core/%.c,%,$(wildcard engine/core/*.c))
OUTPUT = $(patsubst engine/io/%.c,%,$(wildcard engine/io/*.c))
BIND = $(patsubst engine/lua/%.c,%,$(wildcard engine/lua/*_lua.c))
CLI = $(patsubst engine/cli/%.c,%,$(wildcard engine/cli/*.c))
CORE_H = $(wildcard engine/core/*.h)
IO_H = $(wildcard engine/io/*.h)
LUA_H = $(wildcard engine/lua/*.h) $(CORE_H) $(IO_H)
CLI_H = $(wildcard engine/cli/*.h) $(LUA_H)
STDLIB = $(shell find stdlib -name '*.lua' | LC_ALL=C sort)

CORE_O = $(CORE:%=$(B)/obj/%.o)
OUTPUT_O = $(OUTPUT:%=$(B)/obj/%.o)
BIND_O = $(BIND:%=$(B)/obj/%.o) $(B)/obj/stdlib.o
PIC_O = $(CORE:%=$(B)/pic/%.o) $(OUTPUT:%=$(B)/pic/%.o) $(BIND:%=$(B)/pic/%.o) $(B)/pic/stdlib.o
UNIT = $(CORE) $(OUTPUT)
UNIT_BIN = $(UNIT:%=$(B)/tests/test_%)

KVPLAN = $(B)/kvplan

.PHONY: all binaries run test check bench install clean deps test-only unit-tests lua-tests \
        golden-tests cli-tests module-test install-test fault-tests validate-tests layers-test \
        docs-tests docs

# deps first, then the build in a new make: the pkg-config flags above are read
# when make starts, so a make that installed Lua's headers itself would compile
# without them, and under -j the compiles would not wait for the install.
all: deps
	@$(MAKE) --no-print-directory binaries
binaries: $(KVPLAN) $(B)/kvplan.so $(B)/libkvplan.a

# Check for the Debian packages; install them as root, else name them.
deps:
	@command -v dpkg-query >/dev/null 2>&1 || exit 0; \
	missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "kvplan: installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	else \
	  echo "kvplan: missing Debian packages:$$missing"; \
	  echo "kvplan: install them with: sudo apt-get install$$missing"; exit 1; \
	fi

# Each object from its layer's folder with its layer's include paths.
$(B)/obj/%.o: engine/core/%.c $(CORE_H) | $(B)/obj
	$(CC) $(ALL_CFLAGS) $(CORE_INC) -c $< -o $@
$(B)/pic/%.o: engine/core/%.c $(CORE_H) | $(B)/pic
	$(CC) $(ALL_CFLAGS) $(CORE_INC) $(PIC) -c $< -o $@
$(B)/obj/%.o: engine/io/%.c $(IO_H) | $(B)/obj
	$(CC) $(ALL_CFLAGS) $(IO_INC) -c $< -o $@
$(B)/pic/%.o: engine/io/%.c $(IO_H) | $(B)/pic
	$(CC) $(ALL_CFLAGS) $(IO_INC) $(PIC) -c $< -o $@
$(B)/obj/%.o: engine/lua/%.c $(LUA_H) | $(B)/obj
	$(CC) $(ALL_CFLAGS) $(LUA_INC) -c $< -o $@
$(B)/pic/%.o: engine/lua/%.c $(LUA_H) | $(B)/pic
	$(CC) $(ALL_CFLAGS) $(LUA_INC) $(PIC) -c $< -o $@
$(B)/obj/%.o: engine/cli/%.c $(CLI_H) | $(B)/obj
	$(CC) $(ALL_CFLAGS) $(LUA_INC) -Iengine/cli -DKVPLAN_SCRIPTS_DIR='"$(PREFIX)/share/kvplan/scripts"' -c $< -o $@

# The stdlib, embedded as C arrays by a build tool.
$(B)/embed: engine/lua/embed.c | $(B)
	$(CC) $(ALL_CFLAGS) $< -o $@
$(B)/stdlib.c: $(B)/embed $(STDLIB)
	$(B)/embed $@ stdlib $(STDLIB)
$(B)/obj/stdlib.o: $(B)/stdlib.c engine/lua/embed.h | $(B)/obj
	$(CC) $(ALL_CFLAGS) -Iengine/lua -c $< -o $@
$(B)/pic/stdlib.o: $(B)/stdlib.c engine/lua/embed.h | $(B)/pic
	$(CC) $(ALL_CFLAGS) -Iengine/lua $(PIC) -c $< -o $@

$(B)/libkvplan.a: $(CORE_O)
	rm -f $@ && ar rcs $@ $^

$(KVPLAN): $(CLI:%=$(B)/obj/%.o) $(BIND_O) $(OUTPUT_O) $(B)/libkvplan.a
	$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LUA_LIBS) $(JANSSON_LIBS) -lcsv -lm $(MEMWRAP) -o $@

# require "kvplan" from a stock lua5.4: the interpreter provides the Lua symbols.
$(B)/kvplan.so: $(PIC_O)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared $^ $(JANSSON_LIBS) -lcsv -lm -o $@

$(B) $(B)/obj $(B)/pic $(B)/tests:
	mkdir -p $@

# ---- tests ------------------------------------------------------------------------
$(B)/tests/test_%: tests/unit/test_%.c $(B)/libkvplan.a $(OUTPUT_O) | $(B)/tests
	$(CC) $(ALL_CFLAGS) $(CORE_INC) $(IO_INC) $< $(OUTPUT_O) $(B)/libkvplan.a $(LDFLAGS) $(CMOCKA_LIBS) $(JANSSON_LIBS) -lcsv -lm -o $@

unit-tests: $(UNIT_BIN)
	@fail=0; for t in $(UNIT_BIN); do $$t || fail=1; done; exit $$fail

lua-tests: $(KVPLAN)
	@sh tests/run_lua.sh $(KVPLAN)

golden-tests: $(KVPLAN)
	@sh tests/run_golden.sh $(KVPLAN)

validate-tests: $(KVPLAN)
	@sh tests/run_validate.sh $(KVPLAN)

cli-tests: $(KVPLAN)
	@sh tests/run_cli.sh $(KVPLAN)

module-test: $(B)/kvplan.so $(KVPLAN)
	@sh tests/run_module.sh $(LUA) $(B)

# Fault injection: failing writes through an LD_PRELOAD shim, signals
# mid-write, merge and batch past any fixed size. SHIM= (empty) skips the
# shim's cases (the sanitizer runtime must come first in the preload list).
SHIM = $(B)/fault_shim.so
$(B)/fault_shim.so: tests/fault/shim.c | $(B)
	$(CC) $(ALL_CFLAGS) -D_GNU_SOURCE -shared $(PIC) $< -o $@ -ldl
.PHONY: guard-tests
test-only: guard-tests
guard-tests: $(KVPLAN)
	@sh tests/run_guard.sh $(KVPLAN)

# docs/layout.md has a line for every file of engine/, stdlib/ and scripts/
.PHONY: layout-tests
test-only: layout-tests
layout-tests:
	@sh tests/run_layout.sh

# every command README.md, docs/commands.md and the man page show runs, the
# outputs they show are what kvplan prints, the README's charts what its
# commands draw and the figures the README and docs/catalogs.md quote what the
# catalogs and the validation run give (tests/run_docs.sh); make docs rewrites
# them after a change that moves a number
DOCS_RUN = README.md docs/commands.md docs/kvplan.1 docs/catalogs.md docs/predictions.md
test-only: docs-tests
docs-tests: $(KVPLAN)
	@sh tests/run_docs.sh $(KVPLAN) check $(DOCS_RUN)
docs: $(KVPLAN)
	@sh tests/run_docs.sh $(KVPLAN) update $(DOCS_RUN)

fault-tests: $(KVPLAN) $(SHIM)
	@sh tests/fault/run.sh $(KVPLAN) $(SHIM)

# HTML reports (-f html): their content from the command line, then loaded in
# Debian's Chromium headless. Chromium (chromium and chromium-common: 350 MB) is
# for this test alone, so it is not in DEB_PKGS (make and make run do
# without it): the test installs it as the others are installed, and is
# skipped, saying so, only when it cannot be.
BROWSER_PKGS = chromium
.PHONY: html-tests browser-tests
test-only: html-tests browser-tests
html-tests: $(KVPLAN)
	@sh tests/run_html.sh $(KVPLAN)
browser-tests: $(KVPLAN)
	@$(MAKE) --no-print-directory DEB_PKGS="$(BROWSER_PKGS)" deps || \
	  echo "kvplan: Chromium could not be installed: the browser test is skipped"
	@sh tests/run_browser.sh $(KVPLAN)

test-only: unit-tests lua-tests golden-tests cli-tests module-test install-test fault-tests validate-tests

# No circle between the objects of engine/, no layer using a higher one (nm).
test-only: layers-test
layers-test: $(KVPLAN)
	@sh tests/run_layers.sh $(B)

test: deps
	@$(MAKE) --no-print-directory DEB_PKGS="$(TEST_PKGS)" deps
	@$(MAKE) --no-print-directory $(PAR) all
	@$(MAKE) --no-print-directory $(PAR) test-only

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer. The
# module test loads the library into a stock lua5.4 and is skipped there. The
# binary lives in $(B)/asan, where the ready scripts are not beside it.
SAN = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
check: deps
	@$(MAKE) --no-print-directory $(PAR) B=$(B)/asan CFLAGS="$(CFLAGS) -O1 $(SAN)" \
	  LDFLAGS="$(LDFLAGS) $(SAN)" $(B)/asan/kvplan $(B)/asan/libkvplan.a
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 KVPLAN_SCRIPTS=$(CURDIR)/scripts \
	  $(MAKE) --no-print-directory $(PAR) B=$(B)/asan CFLAGS="$(CFLAGS) -O1 $(SAN)" \
	  LDFLAGS="$(LDFLAGS) $(SAN)" SHIM= unit-tests lua-tests golden-tests cli-tests fault-tests validate-tests guard-tests
	@$(MAKE) --no-print-directory check-more

# make check, continued: the fuzz corpus replayed under the sanitizers; the
# module test with the sanitized kvplan.so in a stock lua5.4 (the sanitizer
# runtime preloaded, as it must come first); valgrind's memcheck over the Lua
# tests and examples with the plain build.
CHECK_PKGS = valgrind
.PHONY: check-more valgrind-tests
check-more:
	@$(MAKE) --no-print-directory DEB_PKGS="$(CHECK_PKGS)" deps
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(MAKE) --no-print-directory $(PAR) B=$(B)/asan CFLAGS="$(CFLAGS) -O1 $(SAN)" \
	  LDFLAGS="$(LDFLAGS) $(SAN)" fuzz-replay $(B)/asan/kvplan.so
	@ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$$($(CC) -print-file-name=libasan.so)" \
	  $(MAKE) --no-print-directory B=$(B)/asan module-test
	@$(MAKE) --no-print-directory $(PAR) all
	@$(MAKE) --no-print-directory valgrind-tests
valgrind-tests: $(KVPLAN)
	@JOBS=$(JOBS) sh tests/run_valgrind.sh $(KVPLAN)

# ---- fuzzing ---------------------------------------------------------------------
# libFuzzer targets (tests/fuzz/fuzz_*.lua through tests/fuzz/harness.c):
# config.json and safetensors headers, CSV catalogs, key=value arguments,
# startup logs, kvplan plot's script from a report, batch manifests. `make fuzz` builds them with clang (Debian: clang,
# libclang-rt-14-dev) under ASan+UBSan and runs each for FUZZ_TIME seconds;
# `make test` replays tests/fuzz/corpus/TARGET/ (every input that ever
# failed, and the seeds) through the same entry built by $(CC).
FUZZ = hf csv args log plot manifest
FUZZ_TIME = 60
FUZZ_CC = clang
FUZZ_PKGS = clang libclang-rt-14-dev
FUZZ_FLAGS = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all

# a target's chunk as a C string: backslashes and quotes escaped, one line a line
$(B)/fuzz_%.h: tests/fuzz/fuzz_%.lua | $(B)
	{ echo 'static const char target[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/  "/' -e 's/$$/\\n"/' $<; echo ';'; } > $@

$(B)/replay_%: tests/fuzz/harness.c $(B)/fuzz_%.h $(BIND_O) $(OUTPUT_O) $(B)/libkvplan.a
	$(CC) $(ALL_CFLAGS) $(LUA_INC) -I$(B) -DKVP_REPLAY -DTARGET_LUA='"fuzz_$*.h"' $< $(BIND_O) \
	  $(OUTPUT_O) $(B)/libkvplan.a $(LDFLAGS) $(LUA_LIBS) $(JANSSON_LIBS) -lcsv -lm -o $@

$(B)/fuzzer_%: tests/fuzz/harness.c $(B)/fuzz_%.h $(BIND_O) $(OUTPUT_O) $(B)/libkvplan.a
	$(CC) $(ALL_CFLAGS) $(LUA_INC) -I$(B) -DTARGET_LUA='"fuzz_$*.h"' -fsanitize=fuzzer $< $(BIND_O) \
	  $(OUTPUT_O) $(B)/libkvplan.a $(LDFLAGS) $(LUA_LIBS) $(JANSSON_LIBS) -lcsv -lm -o $@

# the manifest target is C alone (kvplan batch's reader, engine/cli/manifest.c)
$(B)/replay_manifest: tests/fuzz/fuzz_manifest.c engine/cli/manifest.c engine/cli/manifest.h | $(B)
	$(CC) $(ALL_CFLAGS) -Iengine/cli -DKVP_REPLAY tests/fuzz/fuzz_manifest.c engine/cli/manifest.c \
	  $(LDFLAGS) -o $@

$(B)/fuzzer_manifest: tests/fuzz/fuzz_manifest.c engine/cli/manifest.c engine/cli/manifest.h | $(B)
	$(CC) $(ALL_CFLAGS) -Iengine/cli -fsanitize=fuzzer tests/fuzz/fuzz_manifest.c engine/cli/manifest.c \
	  $(LDFLAGS) -o $@

.PHONY: fuzz fuzz-replay
test-only: fuzz-replay
fuzz-replay: $(FUZZ:%=$(B)/replay_%)
	@fail=0; for t in $(FUZZ); do \
	  if n=$$($(B)/replay_$$t tests/fuzz/corpus/$$t 2>/dev/null); then echo "ok   fuzz corpus $$t: $$n"; \
	  else echo "FAIL fuzz corpus $$t"; fail=1; fi; done; \
	echo "fuzz corpus: $$fail failed"; exit $$fail

fuzz: deps
	@$(MAKE) --no-print-directory DEB_PKGS="$(FUZZ_PKGS)" deps
	@$(MAKE) --no-print-directory B=$(B)/fuzz CC=$(FUZZ_CC) \
	  CFLAGS="$(CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link" LDFLAGS="$(LDFLAGS) $(FUZZ_FLAGS)" \
	  $(FUZZ:%=$(B)/fuzz/fuzzer_%)
	@for t in $(FUZZ); do \
	  mkdir -p $(B)/fuzz/work/$$t $(B)/fuzz/found/$$t; \
	  echo "kvplan: fuzzing $$t for $(FUZZ_TIME) s"; \
	  $(B)/fuzz/fuzzer_$$t -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 \
	    -max_len=65536 -artifact_prefix=$(B)/fuzz/found/$$t/ -print_final_stats=1 \
	    $(B)/fuzz/work/$$t tests/fuzz/corpus/$$t 2> $(B)/fuzz/$$t.log; rc=$$?; \
	  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" $(B)/fuzz/$$t.log; \
	  if [ $$rc -ne 0 ]; then echo "kvplan: fuzz $$t found a failure: $(B)/fuzz/found/$$t/ (log $(B)/fuzz/$$t.log);"; \
	    echo "  fix it, then keep the input: cp $(B)/fuzz/found/$$t/* tests/fuzz/corpus/$$t/"; exit 1; fi; \
	done

run: deps
	@$(MAKE) --no-print-directory $(KVPLAN)
	@$(KVPLAN)

# The benchmark also needs python3 (the article's Python functions as a baseline), GNU time and bc.
BENCH_PKGS = python3 time bc
bench: deps
	@$(MAKE) --no-print-directory DEB_PKGS="$(BENCH_PKGS)" deps
	@$(MAKE) --no-print-directory all
	@sh tests/bench/run.sh $(KVPLAN)

# Installs the binary, the Lua module (lua5.4: require "kvplan"), the C
# library and headers, the ready scripts where the binary finds them
# (PREFIX/share/kvplan/scripts, found beside bin/), the manual page and the
# documentation with the examples (PREFIX/share/doc/kvplan).
DOC = $(DESTDIR)$(PREFIX)/share/doc/kvplan
# the public headers: kvplan.h and those it includes (core.h, vllm_kv.h,
# diag.h and checked.h are the core's own)
PUBLIC_H = engine/core/kvplan.h $(addprefix engine/core/,$(shell sed -n 's/^\#include "\(.*\)"$$/\1/p' engine/core/kvplan.h))
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/lib/lua/5.4 $(DESTDIR)$(PREFIX)/include/kvplan \
	  $(DESTDIR)$(PREFIX)/share/kvplan/scripts $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DOC)/examples $(DOC)/docs $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
	  $(DESTDIR)$(PREFIX)/share/zsh/site-functions
	install -m 755 $(KVPLAN) $(DESTDIR)$(PREFIX)/bin/kvplan
	install -m 644 $(B)/libkvplan.a $(DESTDIR)$(PREFIX)/lib/libkvplan.a
	install -m 644 $(PUBLIC_H) $(DESTDIR)$(PREFIX)/include/kvplan/
	install -m 755 $(B)/kvplan.so $(DESTDIR)$(PREFIX)/lib/lua/5.4/kvplan.so
	install -m 644 scripts/*.lua $(DESTDIR)$(PREFIX)/share/kvplan/scripts/
	install -m 644 docs/kvplan.1 $(DESTDIR)$(PREFIX)/share/man/man1/kvplan.1
	install -m 644 README.md SCRIPTING.md LICENSE $(DOC)/
	install -m 644 examples/*.lua examples/*.csv $(DOC)/examples/
	install -m 644 $(wildcard docs/*.png docs/*.md) $(DOC)/docs/
	KVPLAN_SCRIPTS=$(CURDIR)/scripts $(KVPLAN) completion bash > $(B)/kvplan.bash
	KVPLAN_SCRIPTS=$(CURDIR)/scripts $(KVPLAN) completion zsh > $(B)/_kvplan
	install -m 644 $(B)/kvplan.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/kvplan
	install -m 644 $(B)/_kvplan $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_kvplan

# make install into a scratch DESTDIR, then run the installed kvplan
install-test:
	@rm -rf $(B)/inst
	@$(MAKE) --no-print-directory -s install DESTDIR=$(CURDIR)/$(B)/inst PREFIX=/usr/local B=$(B) >/dev/null
	@sh tests/run_install.sh $(B)/inst/usr/local

clean:
	rm -rf $(B)
