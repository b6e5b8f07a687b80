# SPDX-License-Identifier: Apache-2.0
# perfetto-c: one non-recursive Makefile for every library, binary, test and
# benchmark. Objects go under $(O) (default out/); `make asan` builds a second
# tree under out/asan with AddressSanitizer + UBSan and runs the tests there.
#
# Layout rules the build relies on (see docs/building.md):
#   src/<module>/**/*.c   -> $(O)/lib/lib<module>.a   (module = one library)
#   protos/**/*.proto     -> $(O)/gen/**/*.pb-c.[ch]  -> $(O)/lib/libprotos.a
#   $(O)/gen/pb_fields.h  field-number constants generated from protos/
#   tests/unit/<m>_test.c -> $(O)/tests/<m>_test     (one binary per module)
#   bench/<name>.c        -> $(O)/bench/<name>
#   tools/<name>.c        -> $(O)/<name>              (user-facing helpers)

O ?= out
.DEFAULT_GOAL := all
CC ?= cc
SANITIZE ?=
PREFIX ?= /usr/local
V ?= 0

ifeq ($(V),0)
Q := @
else
Q :=
endif

# ---------------------------------------------------------------- flags ----
WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wno-format-nonliteral -Werror
OPT ?= -O2
CPPFLAGS_ALL := -D_GNU_SOURCE -Iinclude -Isrc -I$(O)/gen
# -fPIC: the same objects go into libperfetto-c.so.
CFLAGS_ALL := -std=c11 -g $(OPT) $(WARN) -fvisibility=hidden -fno-strict-aliasing \
	-fPIC -pthread -MMD -MP
LDFLAGS_ALL := -pthread -Wl,--as-needed
# -ldw -lelf: traced_perf's unwinding and symbols (elfutils).
LDLIBS_ALL := -lprotobuf-c -lsqlite3 -ledit -ldw -lelf -lpcre2-8 -lzstd -lz -lm

ifneq ($(SANITIZE),)
CFLAGS_ALL += -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
LDFLAGS_ALL += -fsanitize=address,undefined
endif

# `make fuzz` builds the libraries with coverage for libFuzzer (clang only).
FUZZ ?=
ifneq ($(FUZZ),)
CFLAGS_ALL += -fsanitize=fuzzer-no-link
endif

# Generated protobuf-c code is not ours to keep warning-clean beyond -Wall.
GEN_CFLAGS := -std=c11 -g $(OPT) -Wall -Werror -fvisibility=hidden -fPIC -MMD -MP

# Objects depend on the flags: a change of compiler or flags rebuilds them.
FLAGS_STAMP := $(O)/.flags
FLAGS_NOW := $(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(GEN_CFLAGS)
$(shell mkdir -p $(O) && { echo '$(FLAGS_NOW)' | cmp -s - $(FLAGS_STAMP) || \
	echo '$(FLAGS_NOW)' > $(FLAGS_STAMP); })

# ------------------------------------------------------------- packages ----
# tools/deps.sh installs the Debian packages of the groups this run's goals
# need, before the first compile: `make` the build group; `make demo` also
# what tools/demo.sh runs; `make install` help2man; `make test` (and what
# CI runs beside it) the tests' and benchmarks' peers. One stamp per set.
DEPS_FOR_TEST := $(filter test asan bench fuzz check-clang deps-test,$(MAKECMDGOALS))
DEPS_GROUPS := build $(if $(filter demo deps,$(MAKECMDGOALS)),demo) \
	$(if $(filter install man deps,$(MAKECMDGOALS))$(DEPS_FOR_TEST),install) \
	$(if $(DEPS_FOR_TEST),test bench)
DEPS_GROUPS := $(strip $(DEPS_GROUPS))
empty :=
space := $(empty) $(empty)
DEPS_STAMP := $(O)/.deps-$(subst $(space),+,$(DEPS_GROUPS))

$(DEPS_STAMP): tools/deps.sh
	$(Q)sh tools/deps.sh check-or-install $(DEPS_GROUPS)
	$(Q)mkdir -p $(@D) && touch $@

# `make deps`: what make, make demo and make install need; `make
# deps-test`: also what make test and make bench need.
.PHONY: deps deps-test
deps deps-test: $(DEPS_STAMP)

# --------------------------------------------------------------- protos ----
PROTOS := $(shell find protos -name '*.proto' 2>/dev/null | LC_ALL=C sort)
PROTO_C := $(patsubst protos/%.proto,$(O)/gen/%.pb-c.c,$(PROTOS))
PROTO_H := $(patsubst protos/%.proto,$(O)/gen/%.pb-c.h,$(PROTOS))
PROTO_OBJ := $(patsubst $(O)/gen/%.c,$(O)/obj/gen/%.o,$(PROTO_C))

# protoc-c runs once over every file so imports resolve in one pass.
$(O)/gen/.protos-stamp: $(PROTOS) | $(DEPS_STAMP)
	@echo "  PROTOC-C protos/"
	$(Q)mkdir -p $(O)/gen
	$(Q)protoc-c --c_out=$(O)/gen -Iprotos $(PROTOS)
	$(Q)touch $@

$(PROTO_C) $(PROTO_H): $(O)/gen/.protos-stamp ;

# Every message and enum descriptor protoc-c emitted, as one table.
$(O)/gen/pb_registry.c: $(O)/gen/.protos-stamp tools/gen_registry.sh
	@echo "  GEN      $@"
	$(Q)sh tools/gen_registry.sh $(O)/gen $(PROTO_H) > $@.tmp && mv $@.tmp $@

$(O)/obj/gen/%.o: $(O)/gen/%.c $(FLAGS_STAMP) | $(O)/gen/.protos-stamp
	@mkdir -p $(@D)
	@echo "  CC       $<"
	$(Q)$(CC) $(CPPFLAGS_ALL) $(GEN_CFLAGS) $(filter -fsanitize%,$(CFLAGS_ALL)) -c $< -o $@

PROTO_OBJ += $(O)/obj/gen/pb_registry.o

$(O)/lib/libprotos.a: $(PROTO_OBJ)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

# Field-number constants for the hand-written zero-copy code.
$(O)/gen_field_ids: $(O)/obj/tools/gen_field_ids.o $(O)/lib/libprotos.a
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(O)/gen/pb_fields.h: $(O)/gen_field_ids
	@echo "  GEN      $@"
	$(Q)$(O)/gen_field_ids > $@.tmp && mv $@.tmp $@

$(O)/gen/pb_ftrace_table.h: $(O)/gen_field_ids
	@echo "  GEN      $@"
	$(Q)$(O)/gen_field_ids --ftrace > $@.tmp && mv $@.tmp $@

$(O)/gen/pb_config_table.h: $(O)/gen_field_ids
	@echo "  GEN      $@"
	$(Q)$(O)/gen_field_ids --config > $@.tmp && mv $@.tmp $@

GEN_HEADERS := $(PROTO_H) $(O)/gen/pb_fields.h $(O)/gen/pb_ftrace_table.h $(O)/gen/pb_config_table.h

# ------------------------------------------------------------- modules -----
# Dependency order, highest first, so static link order is right.
# A module with no sources yet is left out.
# A module's sources are every .c under src/<module>/, subfolders included
# (the trace processor has one per layer), but its main*.c files.
module_sources = $(filter-out src/$(1)/main%.c src/$(1)/%/main%.c src/heapprofd/client/%,\
	$(shell find src/$(1) -name '*.c' 2>/dev/null | LC_ALL=C sort))
MODULES := $(foreach m,trace_processor tracebox perfetto_cmd sdk traced relay heapprofd perf probes tracing ipc pbtxt protozero base,\
	$(if $(call module_sources,$(m)),$(m)))
MODULE_LIBS := $(foreach m,$(MODULES),$(O)/lib/lib$(m).a)

define module_rules
$(1)_SRC := $$(call module_sources,$(1))
$(1)_OBJ := $$(patsubst %.c,$(O)/obj/%.o,$$($(1)_SRC))
$(O)/lib/lib$(1).a: $$($(1)_OBJ)
	@mkdir -p $$(@D)
	$$(Q)rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach m,$(MODULES),$(eval $(call module_rules,$(m))))

# The trace processor's PerfettoSQL modules (INCLUDE PERFETTO MODULE), one
# C table generated from src/trace_processor/sql/modules/**/*.sql.
TP_SQL_MODULES := $(shell find src/trace_processor/sql/modules -name '*.sql' 2>/dev/null | LC_ALL=C sort)
$(O)/gen/tp_sql_modules.c: $(TP_SQL_MODULES) tools/gen_sql_modules.sh
	@mkdir -p $(@D)
	@echo "  GEN      $@"
	$(Q)sh tools/gen_sql_modules.sh src/trace_processor/sql/modules $(TP_SQL_MODULES) > $@.tmp && mv $@.tmp $@
$(O)/lib/libtrace_processor.a: $(O)/obj/gen/tp_sql_modules.o

# The metric files RUN_METRIC('android/cpu_info.sql') runs, one C table
# generated from src/trace_processor/sql/metrics/**/*.sql.
TP_SQL_METRICS := $(shell find src/trace_processor/sql/metrics -name '*.sql' 2>/dev/null | LC_ALL=C sort)
$(O)/gen/tp_sql_metrics.c: $(TP_SQL_METRICS) tools/gen_sql_metrics.sh
	@mkdir -p $(@D)
	@echo "  GEN      $@"
	$(Q)sh tools/gen_sql_metrics.sh src/trace_processor/sql/metrics $(TP_SQL_METRICS) > $@.tmp && mv $@.tmp $@
$(O)/lib/libtrace_processor.a: $(O)/obj/gen/tp_sql_metrics.o

ALL_LIBS := $(MODULE_LIBS) $(O)/lib/libprotos.a

# Objects of our own code: they may include generated headers.
$(O)/obj/%.o: %.c $(FLAGS_STAMP) | $(DEPS_STAMP) $(GEN_HEADERS)
	@mkdir -p $(@D)
	@echo "  CC       $<"
	$(Q)$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -c $< -o $@

# gen_field_ids itself cannot wait for pb_fields.h.
$(O)/obj/tools/gen_field_ids.o: tools/gen_field_ids.c $(FLAGS_STAMP) | $(DEPS_STAMP) $(PROTO_H)
	@mkdir -p $(@D)
	@echo "  CC       $<"
	$(Q)$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -c $< -o $@

# ------------------------------------------------------------- binaries ----
TOOLS := pfc_pbtxt pfc_trace_summary
TOOL_BINS := $(foreach t,$(TOOLS),$(O)/$(t))

$(TOOL_BINS): $(O)/%: $(O)/obj/tools/%.o $(ALL_LIBS)
	@mkdir -p $(@D)
	@echo "  LD       $@"
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(ALL_LIBS) $(LDLIBS_ALL)

# Programs: src/<module>/[**/]main*.c -> $(O)/<name> (main files stay out of
# the module's library). Each entry is <module>/<main file>:<program name>.
PROGRAMS := traced/main.c:traced perfetto_cmd/main.c:perfetto \
	perfetto_cmd/main_trigger.c:trigger_perfetto probes/main.c:traced_probes perf/main.c:traced_perf \
	relay/main.c:traced_relay tracebox/main.c:tracebox heapprofd/main.c:heapprofd \
	trace_processor/shell/main.c:trace_processor_shell \
	trace_processor/batch/main.c:pfc_batch_query \
	trace_processor/flamegraph/main.c:pfc_flamegraph
PROGRAM_BINS :=
define program_rules
PROGRAM_BINS += $(O)/$(2)
$(O)/$(2): $(O)/obj/src/$(1:.c=.o) $(ALL_LIBS)
	@mkdir -p $$(@D)
	@echo "  LD       $$@"
	$$(Q)$$(CC) $$(LDFLAGS_ALL) -o $$@ $$< $$(ALL_LIBS) $$(LDLIBS_ALL)
endef
$(foreach p,$(PROGRAMS),$(if $(wildcard src/$(word 1,$(subst :, ,$(p)))),\
	$(eval $(call program_rules,$(word 1,$(subst :, ,$(p))),$(word 2,$(subst :, ,$(p)))))))

BINS := $(TOOL_BINS) $(PROGRAM_BINS)

# ------------------------------------------------------------------ SDK ----
# libperfetto-c: src/sdk and what it needs, exporting only pfc_* (a version
# script for the .so; for the .a one relocatable object whose hidden
# symbols are made local). Users link -lperfetto-c (pkg-config perfetto-c).
SDK_SONAME := libperfetto-c.so.0
SDK_SO := $(O)/lib/libperfetto-c.so
SDK_A := $(O)/lib/libperfetto-c.a
SDK_DEP_LIBS := $(O)/lib/libtraced.a $(O)/lib/libtracing.a $(O)/lib/libipc.a \
	$(O)/lib/libpbtxt.a $(O)/lib/libprotozero.a $(O)/lib/libbase.a $(O)/lib/libprotos.a
SDK_LDLIBS := -lprotobuf-c -lz -lm

$(SDK_SO): $(O)/lib/libsdk.a $(SDK_DEP_LIBS) src/sdk/libperfetto-c.map
	@echo "  LD       $@"
	$(Q)$(CC) -shared $(LDFLAGS_ALL) -Wl,-soname,$(SDK_SONAME) -Wl,-z,defs \
		-Wl,--version-script=src/sdk/libperfetto-c.map -o $@ \
		-Wl,--whole-archive $(O)/lib/libsdk.a -Wl,--no-whole-archive $(SDK_DEP_LIBS) $(SDK_LDLIBS)
	$(Q)ln -sf libperfetto-c.so $(O)/lib/$(SDK_SONAME)

$(SDK_A): $(O)/lib/libsdk.a $(SDK_DEP_LIBS)
	@echo "  AR       $@"
	$(Q)$(CC) -r -nostdlib -o $(O)/obj/libperfetto-c.o \
		-Wl,--whole-archive $(O)/lib/libsdk.a -Wl,--no-whole-archive $(SDK_DEP_LIBS)
	$(Q)objcopy --localize-hidden $(O)/obj/libperfetto-c.o
	$(Q)rm -f $@ && ar rcs $@ $(O)/obj/libperfetto-c.o

# perfetto-c.pc naming PREFIX $(1), LIBDIR $(2), INCLUDEDIR $(3), written to
# $(4). `make install` writes it with the install's paths (DESTDIR is not
# among them); the build writes $(O)/perfetto-c-uninstalled.pc naming the
# tree (PKG_CONFIG_PATH=$(O) builds against the build; pkg-config prefers
# NAME-uninstalled.pc).
pc_write = printf '%s\n' 'prefix=$(1)' 'libdir=$(patsubst $(1)/%,$${prefix}/%,$(2))' \
	'includedir=$(patsubst $(1)/%,$${prefix}/%,$(3))' '' \
	'Name: perfetto-c' 'Description: application events on the Perfetto timeline (perfetto-c SDK)' \
	"Version: $$(sed -n 's/^\#define PFC_VERSION "\(.*\)"/\1/p' src/base/version.h)" \
	'Libs: -L$${libdir} -lperfetto-c' 'Libs.private: $(SDK_LDLIBS) -pthread' \
	'Cflags: -I$${includedir}' > $(4)
SDK_PC_UNINST := $(O)/perfetto-c-uninstalled.pc
$(SDK_PC_UNINST): Makefile src/base/version.h
	@mkdir -p $(@D)
	$(Q)$(call pc_write,$(CURDIR),$(abspath $(O)/lib),$(CURDIR)/include,$@)

SDK_OUT := $(SDK_SO) $(SDK_A) $(SDK_PC_UNINST)

# Test programs for integration tests and benchmarks (built by `all`, not
# installed): tests/<name>.c -> $(O)/<name>, linked with every library.
TEST_BINS := $(patsubst tests/%.c,$(O)/%,$(wildcard tests/*.c))
$(filter-out $(O)/perf_hot,$(TEST_BINS)): $(O)/%: $(O)/obj/tests/%.o $(ALL_LIBS)
	@mkdir -p $(@D)
	@echo "  LD       $@"
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(ALL_LIBS) $(LDLIBS_ALL)

# perf_hot is built twice, with frame pointers and without (no libraries,
# no sanitizers): traced_perf's tests unwind the second by DWARF CFI alone.
PERF_HOT := $(O)/perf_hot $(O)/perf_hot_nofp
$(O)/perf_hot: FP_FLAG := -fno-omit-frame-pointer
$(O)/perf_hot_nofp: FP_FLAG := -fomit-frame-pointer
$(PERF_HOT): tests/perf_hot.c $(FLAGS_STAMP) Makefile | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC+LD    $@"
	$(Q)$(CC) -std=c11 -g -O1 $(FP_FLAG) -fasynchronous-unwind-tables -o $@ $<
TEST_BINS += $(O)/perf_hot_nofp

# heapprofd's client: the malloc wrappers, the custom-heap API and the
# ring, built without sanitizers (a preloaded library cannot carry ASan's
# runtime) and kept apart from the daemon's library:
# libheapprofd_glibc_preload.so for LD_PRELOAD, libheapprofd_client.a to
# link into a program.
HP_CLIENT_SRC := $(sort $(wildcard src/heapprofd/client/*.c)) src/heapprofd/ring/hp_ring.c \
	src/heapprofd/ring/hp_wire.c
HP_CLIENT_OBJ := $(patsubst src/%.c,$(O)/obj/hpclient/%.o,$(HP_CLIENT_SRC))
HP_CLIENT_CFLAGS := -std=c11 -g -O2 $(WARN) -fvisibility=hidden -fno-strict-aliasing -fPIC \
	-pthread -ftls-model=initial-exec -MMD -MP
HP_PRELOAD := $(O)/lib/libheapprofd_glibc_preload.so
HP_CLIENT_A := $(O)/lib/libheapprofd_client.a
$(O)/obj/hpclient/%.o: src/%.c $(FLAGS_STAMP) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC       $< (client)"
	$(Q)$(CC) -D_GNU_SOURCE -Iinclude -Isrc $(HP_CLIENT_CFLAGS) -c $< -o $@
$(HP_PRELOAD): $(HP_CLIENT_OBJ)
	@mkdir -p $(@D)
	@echo "  LD       $@"
	$(Q)$(CC) -shared -pthread -Wl,-z,defs -Wl,-soname,libheapprofd_glibc_preload.so -o $@ \
		$(HP_CLIENT_OBJ) -lm
$(HP_CLIENT_A): $(HP_CLIENT_OBJ)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^
HP_CLIENT_OUT := $(HP_PRELOAD) $(HP_CLIENT_A)

# heapprofd's test programs: tests/heapprofd/<name>.c -> $(O)/hp/<name>,
# plain programs (no sanitizers, frame pointers or not as they come) that
# the preload library profiles.
HP_TEST_BINS := $(patsubst tests/heapprofd/%.c,$(O)/hp/%,$(wildcard tests/heapprofd/*.c))
$(HP_TEST_BINS): $(O)/hp/%: tests/heapprofd/%.c include/perfetto-c/heap_profile.h $(HP_CLIENT_A) \
		$(FLAGS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC+LD    $@"
	$(Q)$(CC) -std=gnu11 -g -O1 -fno-builtin -Iinclude -pthread -rdynamic -o $@ $< -ldl
# ... and the libraries they dlopen: tests/heapprofd/lib/<name>.c -> $(O)/hp/lib<name>.so.
HP_TEST_LIBS := $(patsubst tests/heapprofd/lib/%.c,$(O)/hp/lib%.so,$(wildcard tests/heapprofd/lib/*.c))
$(HP_TEST_LIBS): $(O)/hp/lib%.so: tests/heapprofd/lib/%.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC+LD    $@"
	$(Q)$(CC) -std=gnu11 -g -O1 -fno-builtin -fPIC -shared -o $@ $<

# SDK test programs: tests/sdk/<name>.c -> $(O)/sdk/<name>, built as an
# application would be: the public header only, linked with the .so.
SDK_TEST_BINS := $(patsubst tests/sdk/%.c,$(O)/sdk/%,$(wildcard tests/sdk/*.c))
SDK_APP_CFLAGS := -std=c11 -g $(OPT) $(WARN) -pthread -Iinclude \
	$(filter -fsanitize%,$(CFLAGS_ALL)) $(filter -fno-sanitize%,$(CFLAGS_ALL))
$(SDK_TEST_BINS): $(O)/sdk/%: tests/sdk/%.c include/perfetto-c/pfc.h $(SDK_SO)
	@mkdir -p $(@D)
	@echo "  CC+LD    $@"
	$(Q)$(CC) $(SDK_APP_CFLAGS) -o $@ $< $(LDFLAGS_ALL) -L$(O)/lib -lperfetto-c \
		-Wl,-rpath,'$$ORIGIN/../lib'

# --------------------------------------------------------------- Python ----
# The perfetto_c package: python/perfetto_c/*.py plus the C extension _pfc
# (python/perfetto_c/_pfc.c, ctx_method.c), built into $(O)/python/perfetto_c so that
# PYTHONPATH=$(O)/python finds it. The extension is built for $(PYTHON)
# (Debian's python3 with python3-dev's headers) and links libperfetto-c.a:
# the SDK is inside the module (its symbols stay local), so it needs no
# rpath or installed library. Interpreter facts are asked when the rule
# runs, after deps.sh has installed python3.
PYTHON ?= /usr/bin/python3
# `make install` puts the package in $(PY_SITE) (below); PYTHON_SITE
# overrides.
PYTHON_SITE ?=
PY_PKG := $(O)/python/perfetto_c
PY_SRC := $(wildcard python/perfetto_c/*.py)
PY_CSRC := python/perfetto_c/_pfc.c python/perfetto_c/ctx_method.c
PY_STAMP := $(PY_PKG)/.built
PY_DEP := $(O)/obj/python/_pfc.d
PY_CFLAGS := -std=c11 -g $(OPT) $(WARN) -fvisibility=hidden -fno-strict-aliasing -fPIC -pthread \
	-Iinclude $(filter -fsanitize% -fno-sanitize% -fno-omit-frame-pointer,$(CFLAGS_ALL))

$(PY_STAMP): $(PY_CSRC) $(PY_SRC) $(SDK_A) $(FLAGS_STAMP) | $(DEPS_STAMP)
	@mkdir -p $(PY_PKG) $(dir $(PY_DEP))
	@echo "  CC+LD    $(PY_PKG)/_pfc"
	$(Q)set -- $$($(PYTHON) -c 'import sysconfig as s; print(s.get_paths()["include"], s.get_config_var("EXT_SUFFIX"))') && \
	rm -f $(PY_PKG)/_pfc.*.so && \
	$(CC) $(PY_CFLAGS) -I"$$1" -MMD -MP -MF $(PY_DEP) -MT $@ -shared -o $(PY_PKG)/_pfc$$2 \
		$(PY_CSRC) $(SDK_A) $(LDFLAGS_ALL) -Wl,--exclude-libs,ALL $(SDK_LDLIBS)
	$(Q)cp $(PY_SRC) $(PY_PKG)/
	$(Q)echo '$(PYTHON)' > $(O)/python/interpreter
	$(Q)touch $@

.PHONY: python
python: $(PY_STAMP)

# ---------------------------------------------------------------- tests ----
UNIT_SRC := $(wildcard tests/unit/*_test.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(O)/tests/%,$(UNIT_SRC))
HARNESS_OBJ := $(O)/obj/tests/unit/harness.o

$(UNIT_BINS): $(O)/tests/%_test: $(O)/obj/tests/unit/%_test.o $(HARNESS_OBJ) $(ALL_LIBS)
	@mkdir -p $(@D)
	@echo "  LD       $@"
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(HARNESS_OBJ) $(ALL_LIBS) $(LDLIBS_ALL)

# ---------------------------------------------------------------- bench ----
# bench/sdk_bench*.c are built apart (below).
BENCH_SRC := $(filter-out bench/sdk_bench%.c,$(wildcard bench/*.c))
BENCH_BINS := $(patsubst bench/%.c,$(O)/bench/%,$(BENCH_SRC))

$(BENCH_BINS): $(O)/bench/%: $(O)/obj/bench/%.o $(ALL_LIBS)
	@mkdir -p $(@D)
	@echo "  LD       $@"
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(ALL_LIBS) $(LDLIBS_ALL)

# The SDK benchmark is built as an application is (the public header, the
# .so), like tests/sdk/. Its LTTng-UST peer, $(O)/sdk_bench_lttng, is a
# program of its own (lttng-ust starts threads in every process it is
# linked into); without liblttng-ust-dev it is built as a stub that says so.
SDK_BENCH := $(O)/bench/sdk_bench
SDK_BENCH_LTTNG := $(O)/sdk_bench_lttng
$(SDK_BENCH): bench/sdk_bench.c bench/sdk_bench.h bench/bench_proc.h include/perfetto-c/pfc.h \
		$(SDK_SO)
	@mkdir -p $(@D)
	@echo "  CC+LD    $@"
	$(Q)$(CC) $(SDK_APP_CFLAGS) -o $@ $< $(LDFLAGS_ALL) -L$(O)/lib -lperfetto-c \
		-Wl,-rpath,'$$ORIGIN/../lib'

$(SDK_BENCH_LTTNG): bench/sdk_bench_lttng.c bench/sdk_bench_tp.h bench/sdk_bench.h $(DEPS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC+LD    $@"
	$(Q)if pkg-config --exists lttng-ust; then \
		flags="-DHAVE_LTTNG_UST -Ibench $$(pkg-config --cflags lttng-ust)"; \
		libs="$$(pkg-config --libs lttng-ust)"; \
	fi; \
	$(CC) -std=c11 -g $(OPT) $(WARN) -pthread $$flags -o $@ $< $(LDFLAGS_ALL) $$libs

BENCH_BINS += $(SDK_BENCH)

# ----------------------------------------------------------------- fuzz ----
FUZZ_SRC := $(wildcard fuzz/*_fuzz.c)
FUZZ_BINS := $(patsubst fuzz/%.c,$(O)/fuzz/%,$(FUZZ_SRC))

$(FUZZ_BINS): $(O)/fuzz/%: $(O)/obj/fuzz/%.o $(ALL_LIBS)
	@mkdir -p $(@D)
	@echo "  LD       $@"
	$(Q)$(CC) $(LDFLAGS_ALL) -fsanitize=fuzzer -o $@ $< $(ALL_LIBS) $(LDLIBS_ALL)

.PHONY: fuzz-bins fuzz
fuzz-bins: $(FUZZ_BINS)

# Builds every fuzzer with clang + ASan/UBSan and runs each for FUZZ_SECONDS
# over its seed corpus (fuzz/corpus/<name>/, only read); new inputs go to
# FUZZ_CORPUS/<name> (CI passes a temporary directory). An input that runs
# over 10 s is a finding (a hang), like a crash.
FUZZ_SECONDS ?= 20
FUZZ_CORPUS ?= out/fuzz/corpus
fuzz: $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory O=out/fuzz CC=clang SANITIZE=1 FUZZ=1 fuzz-bins
	$(Q)for f in out/fuzz/fuzz/*_fuzz; do \
		n=$$(basename $$f _fuzz); mkdir -p $(FUZZ_CORPUS)/$$n; \
		echo "  FUZZ     $$n ($(FUZZ_SECONDS) s)"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -timeout=10 -artifact_prefix=out/fuzz/$$n- \
			$(FUZZ_CORPUS)/$$n fuzz/corpus/$$n 2>out/fuzz/$$n.log || \
			{ tail -n 40 out/fuzz/$$n.log; exit 1; }; \
	done

# -------------------------------------------------------------- targets ----
.PHONY: all test asan demo bench install clean check-gcc check-clang

all: $(BINS) $(SDK_OUT) $(HP_CLIENT_OUT) $(HP_TEST_BINS) $(HP_TEST_LIBS) $(SDK_TEST_BINS) $(PY_STAMP) $(UNIT_BINS) $(BENCH_BINS) $(SDK_BENCH_LTTNG) \
	$(TEST_BINS)

test: all | $(DEPS_STAMP)
	$(Q)sh tests/run.sh $(O)

asan:
	$(Q)$(MAKE) --no-print-directory O=out/asan SANITIZE=1 OPT=-O1 test

# The parity harness's long round (tests/differential/): PARITY_N random
# configs recorded with our tracebox and upstream's, every core table of
# every trace compared between our trace processor and upstream's.
PARITY_N ?= 100
.PHONY: parity
parity: all
	$(Q)OUT=$(O) PARITY_N=$(PARITY_N) PARITY_SEED=$${PARITY_SEED:-random} sh tests/integration/tp_parity.sh

# Two real kernels: a QEMU guest (installed here) records with this machine.
.PHONY: e2e-multi-machine
e2e-multi-machine: all
	$(Q)sh tools/deps.sh e2e
	$(Q)OUT=$(O) sh tests/integration/multi_machine_qemu.sh

# A newcomer's `make demo` builds with a job per CPU (-j in the Makefile's
# MAKEFLAGS takes effect from GNU make 4.3; it overrides a -j given).
ifneq ($(filter demo,$(MAKECMDGOALS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif
demo: all | $(DEPS_STAMP)
	$(Q)sh tools/demo.sh $(O)

bench: all
	$(Q)for b in $(BENCH_BINS); do $$b || exit 1; done

# Man pages of the installed programs, from their --help (tools/gen_man.sh).
.PHONY: man
man: $(BINS) | $(DEPS_STAMP)
	$(Q)sh tools/gen_man.sh $(O)

# Where `make install` puts things. Files that name a path get the final
# one (PREFIX, SYSCONFDIR, ...), never DESTDIR: a staged install
# (DESTDIR=/tmp/stage) writes the same files as a direct one. systemd units
# (init/systemd) get the install's paths; the files of init/etc go to
# $(SYSCONFDIR)/perfetto-c unless already there (an admin's edits stay).
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR ?= $(PREFIX)/share
SYSCONFDIR ?= /etc
SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
MANDIR ?= $(DATADIR)/man
# The Python package: where Debian's python3 looks (for PREFIX=/usr
# /usr/lib/python3/dist-packages, otherwise $(PREFIX)/lib/python3.X/
# dist-packages); PYTHON_SITE overrides. Asked of $(PYTHON) when used.
PY_SITE = $(or $(PYTHON_SITE),$(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(shell \
	$(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')/dist-packages))
# Text files that name the install's folders.
subst_paths = sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	-e 's|@DATADIR@|$(DATADIR)|g'

.PHONY: uninstall
install: all man
	$(Q)install -d $(DESTDIR)$(SYSTEMD_UNIT_DIR) $(DESTDIR)$(SYSCONFDIR)/perfetto-c \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8
	$(Q)for u in init/systemd/*.service; do \
		$(subst_paths) $$u > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/$$(basename $$u) || exit 1; \
	done
	$(Q)for f in init/etc/*; do t=$(DESTDIR)$(SYSCONFDIR)/perfetto-c/$$(basename $$f); \
		[ -e $$t ] || { $(subst_paths) $$f > $$t.tmp && chmod 0644 $$t.tmp && mv $$t.tmp $$t; } || exit 1; done
	$(Q)install -m 0644 $(O)/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	$(Q)install -m 0644 $(O)/man/*.8 $(DESTDIR)$(MANDIR)/man8/
	$(Q)install -d $(DESTDIR)$(BINDIR)
	$(Q)install -m 0755 $(BINS) $(DESTDIR)$(BINDIR)/
	$(Q)install -m 0755 tools/heap_profile $(DESTDIR)$(BINDIR)/
	$(Q)install -d $(DESTDIR)$(DATADIR)/perfetto-c/configs
	$(Q)install -m 0644 configs/*.pbtxt $(DESTDIR)$(DATADIR)/perfetto-c/configs/
	$(Q)install -d $(DESTDIR)$(INCLUDEDIR)/perfetto-c $(DESTDIR)$(LIBDIR)/pkgconfig
	$(Q)install -m 0644 include/perfetto-c/*.h $(DESTDIR)$(INCLUDEDIR)/perfetto-c/
	$(Q)install -m 0755 $(SDK_SO) $(DESTDIR)$(LIBDIR)/$(SDK_SONAME)
	$(Q)ln -sf $(SDK_SONAME) $(DESTDIR)$(LIBDIR)/libperfetto-c.so
	$(Q)install -m 0644 $(SDK_A) $(DESTDIR)$(LIBDIR)/
	$(Q)install -m 0755 $(HP_PRELOAD) $(DESTDIR)$(LIBDIR)/
	$(Q)install -m 0644 $(HP_CLIENT_A) $(DESTDIR)$(LIBDIR)/
	$(Q)$(call pc_write,$(PREFIX),$(LIBDIR),$(INCLUDEDIR),$(DESTDIR)$(LIBDIR)/pkgconfig/perfetto-c.pc)
	$(Q)site='$(PY_SITE)'; \
	install -d "$(DESTDIR)$$site/perfetto_c" && \
	install -m 0644 $(PY_PKG)/*.py "$(DESTDIR)$$site/perfetto_c/" && \
	install -m 0755 $(PY_PKG)/_pfc.*.so "$(DESTDIR)$$site/perfetto_c/" && \
	echo "  INSTALL  $(DESTDIR)$$site/perfetto_c"
	$(Q)[ -n "$(DESTDIR)" ] || sh tools/install_refresh.sh '$(LIBDIR)' '$(SYSTEMD_UNIT_DIR)'

# What `make install` wrote, with the same variables; $(SYSCONFDIR)/perfetto-c
# stays (an admin's settings).
uninstall:
	$(Q)rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(BINS)) heap_profile) \
		$(foreach b,$(notdir $(BINS)) heap_profile,$(DESTDIR)$(MANDIR)/man1/$(b).1 $(DESTDIR)$(MANDIR)/man8/$(b).8) \
		$(addprefix $(DESTDIR)$(SYSTEMD_UNIT_DIR)/,$(notdir $(wildcard init/systemd/*.service))) \
		$(addprefix $(DESTDIR)$(LIBDIR)/,$(SDK_SONAME) libperfetto-c.so libperfetto-c.a pkgconfig/perfetto-c.pc \
			$(notdir $(HP_PRELOAD) $(HP_CLIENT_A)))
	$(Q)rm -rf $(DESTDIR)$(INCLUDEDIR)/perfetto-c $(DESTDIR)$(DATADIR)/perfetto-c '$(DESTDIR)$(PY_SITE)/perfetto_c'
	$(Q)[ -n "$(DESTDIR)" ] || sh tools/install_refresh.sh '$(LIBDIR)' '$(SYSTEMD_UNIT_DIR)'

# The layering of src/ (tools/layers.rules): no include across a forbidden
# boundary, no include cycle, and (for the objects built so far) no call
# cycle between the files of an `acyclic` path.
.PHONY: check
check:
	$(Q)python3 tools/check_layers.py --objects $(O)/obj

# Both compilers must build warning-free; CI runs these.
check-gcc:
	$(Q)$(MAKE) --no-print-directory O=out/gcc CC=gcc all
check-clang: $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory O=out/clang CC=clang all

clean:
	rm -rf $(O) out

-include $(shell find $(O)/obj -name '*.d' 2>/dev/null)
