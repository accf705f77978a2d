# cachekeeper — one plain GNU Makefile.
#   make            build build/cachekeeperd and build/cachectl
#   make run        run the daemon in the foreground on the shipped config
#   make test       no dead function (check-dead), unit tests (plain and ASan+UBSan), golden
#                   config tests, the bats tests: tests/feature, tests/attack, tests/repo
#   make bench      speed and memory figures beside the reference tools; with
#                   BASE=<git rev> (built in a temporary git worktree, removed after)
#                   or BASE_BUILD=<built tree>, that build's figures and this one's
#                   side by side on the same data, BENCH_ROUNDS interleaved rounds
#                   (default 3): medians, change %, spreads, "within noise"/"OUTSIDE"
#   make fuzz       libFuzzer on the parsers, FUZZ_SECONDS each
#   make soak       a compressed busy day against the daemon, SOAK_SECONDS long
#                   (default 3600), SOAK_SEED to replay one (default random)
#   make test-boot  boot a minimal Debian under systemd-nspawn, install the .deb there, test it;
#                   then build containers with the client package inside, the daemon on the host
#   make install    DESTDIR=, PREFIX=/usr/local, SYSCONFDIR=/etc
#   make deb        the Debian package, in build/deb/ (checked by lintian)
# make, make run and make install install only the build dependencies
# (.ci/deps build); the test targets and make deb install the test set too.
VERSION    := 0.2.0
PREFIX     ?= /usr/local
SYSCONFDIR ?= /etc
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
UNITDIR    ?= $(PREFIX)/lib/systemd/system
COMPLETIONDIR ?= $(DATADIR)/bash-completion/completions
DESTDIR    ?=

B := build
# Libraries found with pkg-config; libinotifytools ships no .pc file.
PKGS := libsystemd libconfig json-c hiredis
# Recursive (=) on purpose: evaluated when a recipe runs, after deps are installed.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   = $(shell pkg-config --libs $(PKGS)) -linotifytools -lm
# cachectl alone lays out tables with libsmartcols (util-linux). It links
# only what it uses (json-c, smartcols, libm), not the daemon's libraries:
# the client package (cachekeeper-client, for build containers) then
# depends on libc6, libjson-c5 and libsmartcols1 only.
CTL_PKGS  := smartcols
CTL_CFLAGS = $(shell pkg-config --cflags $(CTL_PKGS))
CTL_LIBS   = $(shell pkg-config --libs json-c $(CTL_PKGS)) -lm

CFLAGS   ?= -O2 -g
WERROR   ?= -Werror
WARNINGS := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes \
            -Wno-unused-parameter -Wpointer-arith -Wundef -Wvla -Werror=implicit-function-declaration $(WERROR)
CPPFLAGS += -Idaemon -D_GNU_SOURCE -DCACHEKEEPER_VERSION='"$(VERSION)"' \
            -DCONFIG_BUILTIN_PATH='"etc/cachekeeper.conf"'
ALL_CFLAGS = -std=gnu11 $(WARNINGS) $(CFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -MMD -MP
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
             -fno-omit-frame-pointer
# Linking: UBSan's handlers go into the binary. The shared libubsan would
# bring its own 6 MB of zeroed globals, which LeakSanitizer scans at every
# exit of every sanitized process: about a third of the cost of each
# cachectl the bats tests run, and nothing is checked that way that
# is not checked this way.
SAN_LDFLAGS := $(SAN_FLAGS) -static-libubsan

# The daemon's layers, lowest first (daemon/README.md): a folder's code
# includes only its own folder's and lower ones' headers; the top (daemon/
# itself: main, manager, requests) any. tests/check-layers proves it on
# every build. base/ is what cachectl builds from too.
LAYERS      := base os ccache alert control config tree insight evict cache space remote
# Every daemon module except main.c: linked into the daemon and each unit test.
DAEMON_SRCS := $(foreach l,$(LAYERS),$(wildcard daemon/$(l)/*.c)) $(filter-out daemon/main.c,$(wildcard daemon/*.c))
DAEMON_HDRS := $(foreach l,$(LAYERS),$(wildcard daemon/$(l)/*.h)) $(wildcard daemon/*.h)
# cachectl's layers, lowest first (ctl/README.md), on daemon/base/: the same
# rule, checked by the same script; the top (ctl/ itself: main, the commands)
# includes any. Its headers are named by their path below ctl/ ("core/client.h").
CTL_LAYERS  := core views build
CTL_SRCS    := $(foreach l,$(CTL_LAYERS),$(wildcard ctl/$(l)/*.c)) $(wildcard ctl/*.c) \
               daemon/base/protocol.c daemon/base/human.c daemon/base/text.c
CTL_HDRS    := $(foreach l,$(CTL_LAYERS),$(wildcard ctl/$(l)/*.h)) $(wildcard ctl/*.h)
# Unit tests by the layer of the module they test (tests/README.md):
# tests/unit/daemon/LAYER/test-X.c and tests/unit/ctl/LAYER/test-X.c, each
# built as $(B)/tests/test-X (and $(B)/asan/tests/test-X): one flat name
# space, whatever folder the source is in.
UNIT_SRCS   := $(foreach l,$(LAYERS),$(wildcard tests/unit/daemon/$(l)/test-*.c)) \
               $(foreach l,$(CTL_LAYERS),$(wildcard tests/unit/ctl/$(l)/test-*.c))
UNIT_TESTS  := $(addprefix $(B)/tests/,$(basename $(notdir $(UNIT_SRCS))))
SAN_TESTS   := $(addprefix $(B)/asan/tests/,$(basename $(notdir $(UNIT_SRCS))))
# Small programs the tests and the benchmark drive (generators, listeners).
HELPER_SRCS := $(wildcard tests/helpers/*.c)
HELPERS     := $(HELPER_SRCS:tests/helpers/%.c=$(B)/tests/helpers/%)

.SECONDARY:
.PHONY: all deps test-deps run test unit-tests bench soak install uninstall clean test-boot deb check-layers check-dead
all: $(B)/cachekeeperd $(B)/cachectl

# On a fresh machine: install what is missing (as root) or say how. The
# build set for building; the test set (after it: one apt-get at a time)
# for what only the tests and the package build need.
$(B)/.deps-ok: .ci/deps
	@sh .ci/deps build
	@mkdir -p $(@D) && touch $@
$(B)/.deps-test-ok: .ci/deps | $(B)/.deps-ok
	@sh .ci/deps test
	@mkdir -p $(@D) && touch $@
deps: $(B)/.deps-ok
test-deps: $(B)/.deps-test-ok
# cmocka is a test package: the unit tests' objects wait for the test set.
$(UNIT_SRCS:%.c=$(B)/%.o) $(UNIT_SRCS:%.c=$(B)/asan/%.o): | $(B)/.deps-test-ok

$(B)/%.o: %.c | $(B)/.deps-ok
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@
$(B)/asan/%.o: %.c | $(B)/.deps-ok
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -c $< -o $@
$(B)/daemon/config/builtin.o $(B)/asan/daemon/config/builtin.o: etc/cachekeeper.conf

# No layer includes a higher one: checked before anything is linked.
$(B)/.layers-ok: tests/check-layers $(DAEMON_SRCS) $(DAEMON_HDRS) daemon/main.c $(CTL_SRCS) $(CTL_HDRS)
	@tests/check-layers $(LAYERS)
	@tests/check-layers --tree ctl --on daemon/base $(CTL_LAYERS)
	@mkdir -p $(@D) && touch $@
check-layers: $(B)/.layers-ok

# Nor does any object use what a higher layer defines (tests/check-calls
# reads the objects' symbols with nm): checked as each program is linked.
$(B)/cachekeeperd: $(B)/daemon/main.o $(DAEMON_SRCS:%.c=$(B)/%.o) | $(B)/.layers-ok
	@tests/check-calls $(B) $(LAYERS)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ $(PKG_LIBS) -o $@
$(B)/cachectl: $(CTL_SRCS:%.c=$(B)/%.o) | $(B)/.layers-ok
	@tests/check-calls --tree ctl --on daemon/base $(B) $(CTL_LAYERS)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ $(CTL_LIBS) -o $@
$(B)/asan/cachekeeperd: $(B)/asan/daemon/main.o $(DAEMON_SRCS:%.c=$(B)/asan/%.o) | $(B)/.layers-ok
	$(CC) $(SAN_LDFLAGS) $(LDFLAGS) $^ $(PKG_LIBS) -o $@
$(B)/asan/cachectl: $(CTL_SRCS:%.c=$(B)/asan/%.o) | $(B)/.layers-ok
	$(CC) $(SAN_LDFLAGS) $(LDFLAGS) $^ $(CTL_LIBS) -o $@

# No dead function (tests/check-dead): the programs built again without
# inlining, each function in a section of its own, linked with
# --gc-sections; the linker's list of what it dropped is what nothing calls.
$(B)/dead/%.o: %.c | $(B)/.deps-ok
	@mkdir -p $(@D)
	@$(CC) $(ALL_CFLAGS) -O0 -ffunction-sections -c $< -o $@
$(B)/dead/cachekeeperd.gc: $(B)/dead/daemon/main.o $(DAEMON_SRCS:%.c=$(B)/dead/%.o)
	@$(CC) -Wl,--gc-sections -Wl,--print-gc-sections $^ $(PKG_LIBS) -o $(@:.gc=) 2> $@.tmp || { cat $@.tmp >&2; exit 1; }
	@echo $^ > $(@:.gc=.objs) && mv $@.tmp $@
$(B)/dead/cachectl.gc: $(CTL_SRCS:%.c=$(B)/dead/%.o)
	@$(CC) -Wl,--gc-sections -Wl,--print-gc-sections $^ $(CTL_LIBS) -o $(@:.gc=) 2> $@.tmp || { cat $@.tmp >&2; exit 1; }
	@echo $^ > $(@:.gc=.objs) && mv $@.tmp $@
$(B)/.dead-ok: tests/check-dead tests/test-only-functions $(B)/dead/cachekeeperd.gc $(B)/dead/cachectl.gc
	@tests/check-dead $(B)/dead
	@touch $@
check-dead: $(B)/.dead-ok

# Each unit test from its own object (found by name below tests/unit/) and
# the daemon's modules.
$(foreach s,$(UNIT_SRCS),$(eval $(B)/tests/$(basename $(notdir $(s))): $(B)/$(s:.c=.o)))
$(foreach s,$(UNIT_SRCS),$(eval $(B)/asan/tests/$(basename $(notdir $(s))): $(B)/asan/$(s:.c=.o)))
$(UNIT_TESTS): $(DAEMON_SRCS:%.c=$(B)/%.o)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ $(PKG_LIBS) -lcmocka -o $@
$(SAN_TESTS): $(DAEMON_SRCS:%.c=$(B)/asan/%.o)
	@mkdir -p $(@D)
	$(CC) $(SAN_LDFLAGS) $(LDFLAGS) $^ $(PKG_LIBS) -lcmocka -o $@
# The daemon's unit tests share tests/unit/daemon/fixture.h.
$(B)/tests/unit/daemon/%.o $(B)/asan/tests/unit/daemon/%.o: CPPFLAGS += -Itests/unit/daemon
# cachectl's objects, and the unit tests of its modules, find its headers by
# their path below ctl/.
$(B)/ctl/%.o $(B)/asan/ctl/%.o $(B)/dead/ctl/%.o $(B)/tests/unit/ctl/%.o $(B)/asan/tests/unit/ctl/%.o: CPPFLAGS += -Ictl
# Each links the client modules it is about.
REPORT_SRCS := ctl/views/report-check.c ctl/views/report-metrics.c ctl/views/report-history.c
$(B)/tests/test-report: $(REPORT_SRCS:%.c=$(B)/%.o)
$(B)/asan/tests/test-report: $(REPORT_SRCS:%.c=$(B)/asan/%.o)
$(B)/tests/test-statslog: $(B)/ctl/build/statslog.o
$(B)/asan/tests/test-statslog: $(B)/asan/ctl/build/statslog.o
EXPLAIN_RECORD_SRCS := ctl/build/explain-record.c ctl/build/explain-digest.c ctl/build/explain-manifest.c ctl/core/readfile.c
$(B)/tests/test-explain-record: $(EXPLAIN_RECORD_SRCS:%.c=$(B)/%.o)
$(B)/asan/tests/test-explain-record: $(EXPLAIN_RECORD_SRCS:%.c=$(B)/asan/%.o)
$(B)/tests/test-readfile: $(B)/ctl/core/readfile.o
$(B)/asan/tests/test-readfile: $(B)/asan/ctl/core/readfile.o
RESULTS_SRCS := ctl/views/results.c ctl/views/report-history.c
$(B)/tests/test-results: $(RESULTS_SRCS:%.c=$(B)/%.o)
$(B)/asan/tests/test-results: $(RESULTS_SRCS:%.c=$(B)/asan/%.o)
# test-status-table: with libsmartcols.
$(B)/tests/test-status-table: $(B)/ctl/views/status-table.o
$(B)/asan/tests/test-status-table: $(B)/asan/ctl/views/status-table.o
$(B)/tests/test-status-table $(B)/asan/tests/test-status-table: PKG_LIBS += $(shell pkg-config --libs $(CTL_PKGS))
$(B)/ctl/views/status-table.o $(B)/asan/ctl/views/status-table.o $(B)/dead/ctl/views/status-table.o: PKG_CFLAGS += $(CTL_CFLAGS)

$(B)/tests/helpers/%: $(B)/tests/helpers/%.o
	$(CC) $(CFLAGS) $(LDFLAGS) $^ $(PKG_LIBS) -o $@

RUN_SOCKET := $(CURDIR)/$(B)/cachekeeper.sock
run: $(B)/cachekeeperd $(B)/cachectl
	@echo "cachekeeperd on etc/cachekeeper.conf, socket $(RUN_SOCKET); Ctrl-C stops it."
	@echo "In another shell: $(B)/cachectl -s $(RUN_SOCKET) status"
	$(B)/cachekeeperd -c etc/cachekeeper.conf -s $(RUN_SOCKET)

# The unit tests run twice (plain, then ASan+UBSan); the bats tests
# (tests/README.md) drive the sanitizer build of the binaries. tests/run prints the one closing line.
test: all $(B)/.dead-ok $(UNIT_TESTS) $(SAN_TESTS) $(HELPERS) $(B)/asan/cachekeeperd $(B)/asan/cachectl | $(B)/.deps-test-ok
	@CK_BUILD=$(abspath $(B)) tests/run $(UNIT_TESTS) $(SAN_TESTS) tests/feature/*.bats tests/attack/*.bats tests/repo/*.bats

# Without BASE or BASE_BUILD: tests/bench/run once. With either:
# tests/bench/compare (the BENCH_* knobs of tests/bench/run hold for every run).
BASE         ?=
BASE_BUILD   ?=
BENCH_ROUNDS ?= 3
bench: all $(HELPERS) | $(B)/.deps-test-ok
ifeq ($(BASE)$(BASE_BUILD),)
	CK_BUILD=$(abspath $(B)) tests/bench/run
else
	CK_BUILD=$(abspath $(B)) BASE='$(BASE)' BASE_BUILD='$(BASE_BUILD)' BENCH_ROUNDS='$(BENCH_ROUNDS)' tests/bench/compare
endif

# The soak (tests/soak/run): writers, a hostile user, reloads, trims, a
# volume filling, kill -9 mid-trim, an oracle throughout; a table at the end.
# Its short form (90 s) is tests/feature/soak.bats, in make test.
SOAK_SECONDS ?= 3600
SOAK_SEED    ?=
soak: all $(HELPERS) | $(B)/.deps-test-ok
	CK_BUILD=$(abspath $(B)) tests/soak/run --duration $(SOAK_SECONDS) $(if $(SOAK_SEED),--seed $(SOAK_SEED))

# Units are substituted at install time, not at build time, so that
# `make && make install PREFIX=/usr` cannot install stale paths. Every
# systemd/*.in is a unit to install.
SUBST_PATHS = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@BINDIR@|$(BINDIR)|g' \
                  -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'
UNITS := $(patsubst systemd/%.in,%,$(wildcard systemd/*.in))
# Alert rules and dashboards, shipped as examples in $(DATADIR)/cachekeeper;
# cachectl's bash completion. Each installed when the tree has it.
SHARED_FILES := $(wildcard etc/prometheus/*.yml etc/grafana/*.json)
COMPLETION   := $(wildcard ctl/cachectl.bash-completion)

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSCONFDIR) $(DESTDIR)$(UNITDIR)
	install -m 0755 $(B)/cachekeeperd $(DESTDIR)$(SBINDIR)/cachekeeperd
	install -m 0755 $(B)/cachectl $(DESTDIR)$(BINDIR)/cachectl
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/cachekeeper.conf ]; then \
		echo "keeping existing $(DESTDIR)$(SYSCONFDIR)/cachekeeper.conf"; \
	else \
		install -m 0644 etc/cachekeeper.conf $(DESTDIR)$(SYSCONFDIR)/cachekeeper.conf; \
	fi
	@set -e; for u in $(UNITS); do \
		$(SUBST_PATHS) systemd/$$u.in > $(DESTDIR)$(UNITDIR)/$$u.tmp; \
		if LC_ALL=C grep -n '@[A-Z_]\{1,\}@' $(DESTDIR)$(UNITDIR)/$$u.tmp; then \
			echo "systemd/$$u.in: unsubstituted placeholder" >&2; exit 1; fi; \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$u.tmp; \
		mv -f $(DESTDIR)$(UNITDIR)/$$u.tmp $(DESTDIR)$(UNITDIR)/$$u; \
		echo "installed $(DESTDIR)$(UNITDIR)/$$u"; \
	done
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8
	install -m 0644 ctl/cachectl.1 $(DESTDIR)$(MANDIR)/man1/cachectl.1
	install -m 0644 etc/cachekeeper.conf.5 $(DESTDIR)$(MANDIR)/man5/cachekeeper.conf.5
	install -m 0644 daemon/cachekeeperd.8 $(DESTDIR)$(MANDIR)/man8/cachekeeperd.8
	$(if $(SHARED_FILES),install -d $(DESTDIR)$(DATADIR)/cachekeeper)
	$(if $(SHARED_FILES),install -m 0644 $(SHARED_FILES) $(DESTDIR)$(DATADIR)/cachekeeper/)
	$(if $(COMPLETION),install -d $(DESTDIR)$(COMPLETIONDIR))
	$(if $(COMPLETION),install -m 0644 $(COMPLETION) $(DESTDIR)$(COMPLETIONDIR)/cachectl)
	@echo "Now: systemctl daemon-reload && systemctl enable --now cachekeeperd.socket cachekeeperd.service"
	@echo "For node_exporter's textfile collector: systemctl enable --now cachekeeper-metrics.timer"

# The config is left in place: it may hold the admin's changes.
# Before the daemon goes, it says what stays in each cache's ccache.conf.
uninstall:
	@if [ -x $(DESTDIR)$(SBINDIR)/cachekeeperd ] && [ -e $(DESTDIR)$(SYSCONFDIR)/cachekeeper.conf ]; then \
		echo "What stays in each cache's ccache.conf:"; \
		$(DESTDIR)$(SBINDIR)/cachekeeperd --describe-conf -c $(DESTDIR)$(SYSCONFDIR)/cachekeeper.conf || true; \
	fi
	rm -f $(DESTDIR)$(SBINDIR)/cachekeeperd $(DESTDIR)$(BINDIR)/cachectl
	rm -f $(UNITS:%=$(DESTDIR)$(UNITDIR)/%)
	rm -f $(DESTDIR)$(MANDIR)/man1/cachectl.1 $(DESTDIR)$(MANDIR)/man5/cachekeeper.conf.5 \
		$(DESTDIR)$(MANDIR)/man8/cachekeeperd.8
	rm -f $(addprefix $(DESTDIR)$(DATADIR)/cachekeeper/,$(notdir $(SHARED_FILES))) \
		$(DESTDIR)$(COMPLETIONDIR)/cachectl
	rmdir $(DESTDIR)$(DATADIR)/cachekeeper 2>/dev/null || true

# The Debian package (debian/), built by dpkg-buildpackage from a copy of
# the tree in $(B)/deb/src, so that neither its `make clean` nor its output
# (written one directory up) touches the tree: the .deb, .buildinfo and
# .changes end in $(B)/deb/. lintian must find no error or warning (it
# finds none, and nothing is overridden; its one info tag,
# package-supports-alternative-init-but-no-init.d-script, stays: the daemon
# needs systemd's socket, notify and sandbox). Rebuilt when a file it is
# made of changes.
DEB_ARCH = $(shell dpkg --print-architecture)
DEB      = $(B)/deb/cachekeeper_$(VERSION)_$(DEB_ARCH).deb
# The client package, cachectl alone, made by the same build.
DEB_CLIENT = $(B)/deb/cachekeeper-client_$(VERSION)_$(DEB_ARCH).deb
DEB_SRCS := Makefile README.md LICENSE $(wildcard .ci/* daemon/* daemon/*/* ctl/* ctl/*/* etc/* etc/*/* systemd/* debian/* debian/*/*)
deb: $(DEB)
$(DEB): $(DEB_SRCS) | $(B)/.deps-test-ok
	@v=$$(dpkg-parsechangelog -S Version) && [ "$$v" = $(VERSION) ] || \
		{ echo "debian/changelog is at $$v, the Makefile at $(VERSION): add a changelog entry (dch -v $(VERSION))" >&2; exit 1; }
	rm -rf $(B)/deb && mkdir -p $(B)/deb/src/cachekeeper-$(VERSION)
	tar -c --exclude=./build --exclude=./$(B) --exclude=./.git --exclude='*.o' --exclude='*.d' \
		--exclude=./debian/build --exclude=./debian/tmp --exclude=./debian/cachekeeper --exclude=./debian/cachekeeper-dbgsym \
		--exclude=./debian/cachekeeper-client --exclude=./debian/cachekeeper-client-dbgsym \
		--exclude=./debian/.debhelper --exclude=./debian/files --exclude=./debian/debhelper-build-stamp \
		--exclude='./debian/*.substvars' --exclude='./debian/*.debhelper*' . | \
		tar -x -C $(B)/deb/src/cachekeeper-$(VERSION)
	cd $(B)/deb/src/cachekeeper-$(VERSION) && \
		env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES dpkg-buildpackage -us -uc -b -J$$(nproc)
	mv $(B)/deb/src/*.deb $(B)/deb/src/*.buildinfo $(B)/deb/src/*.changes $(B)/deb/
	rm -rf $(B)/deb/src
	lintian --fail-on error,warning $(B)/deb/cachekeeper_$(VERSION)_$(DEB_ARCH).changes || \
		{ rm -f $@; exit 1; }
	@echo "Built $@ and $(DEB_CLIENT)"

# Boots a minimal Debian with real systemd in systemd-nspawn, installs the
# package into it with apt-get, and checks the units, notify, reload,
# journal, watchdog, an upgrade and a purge there (tests/boot/run); then
# build containers over the same root with the client package inside and
# the daemon of the build on this host (tests/boot/containers). The root is
# cached in CK_BOOT_ROOTFS (default /var/cache/cachekeeper-test-rootfs),
# built when absent, and given the packages it lacks.
test-boot: $(DEB) $(B)/cachekeeperd $(B)/cachectl | $(B)/.deps-test-ok
	@rc=0; \
	CK_DEB=$(abspath $(DEB)) CK_DEB_CLIENT=$(abspath $(DEB_CLIENT)) tests/boot/run || rc=1; \
	CK_DEB_CLIENT=$(abspath $(DEB_CLIENT)) CK_DAEMON=$(abspath $(B)/cachekeeperd) CK_CTL=$(abspath $(B)/cachectl) \
		tests/boot/containers || rc=1; \
	exit $$rc

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# Fuzzing (clang's libFuzzer; not part of make test): FUZZ_SECONDS per target.
FUZZ_SECONDS ?= 60
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(wildcard tests/fuzz/*.c))
$(B)/fuzz/%: tests/fuzz/%.c $(DAEMON_SRCS) | $(B)/.deps-ok
	@mkdir -p $(@D)
	clang -std=gnu11 $(FUZZ_FLAGS) $(CPPFLAGS) $(PKG_CFLAGS) $^ $(PKG_LIBS) -o $@
fuzz: $(FUZZ_TARGETS)
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p $(B)/fuzz/corpus-$${t##*/}; \
		cp tests/config/*.conf etc/cachekeeper.conf $(B)/fuzz/corpus-fuzz-config/ 2>/dev/null; \
		cp tests/fuzz/seeds/$${t##*/}/* $(B)/fuzz/corpus-$${t##*/}/ 2>/dev/null; \
		echo "== $$t for $(FUZZ_SECONDS) s"; \
		LSAN_OPTIONS=suppressions=$(CURDIR)/tests/fuzz/lsan.supp \
			$$t -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -artifact_prefix=$(B)/fuzz/ \
			$(B)/fuzz/corpus-$${t##*/} || exit 1; \
	done
.PHONY: fuzz
