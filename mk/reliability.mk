# mk/reliability.mk - reliability checks (docs/reliability.md): crash/fork/stress/behaviour tests
# (tests/cases/rel_*.sh, programs tests/progs/rel_*), the TSan build, lint and all fuzz targets.
#   make tsan-test     libvramtrace.so built with -fsanitize=thread in $(TSAN_BUILD), the stress
#                      and fork programs run under it on the simulated device (tests/cases/rel_*.sh
#                      with VT_TSAN_LIB set)
#   make lint          cppcheck + clang-tidy over src/ and tools/, fails on any finding
#   make fuzz          every fuzz/fuzz_*.c target for FUZZ_SECONDS (default 60) each (CI: 20);
#                      longer hunts: make fuzz FUZZ_SECONDS=600

# rel_dlopen must not be linked with CUDA: it loads the runtime itself.
$(BUILD)/tests/progs/rel_dlopen: tests/progs/rel_dlopen.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -o $@ $< -ldl

# --- ThreadSanitizer -------------------------------------------------------------------------
TSAN_BUILD ?= build-tsan
TSAN_OBJS  := $(LIB_SRCS:%.c=$(TSAN_BUILD)/obj/%.o)
# -Wno-tsan: gcc warns that TSan does not model atomic_thread_fence (the seqlock uses fences);
# a race TSan then reports through a fence must be checked by hand before it is suppressed.
TSAN_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -Wno-tsan $(OPT) -fPIC $(SRC_INC) -Itools
# TSan's own start-up calls dlsym(RTLD_NEXT, ...) - our exported dlsym - before the TSan runtime
# is initialised, and instrumented code crashes there (__tsan_func_entry on a null trace). The
# dlsym path (interpose.c, resolve.c) is therefore built without instrumentation; its shared state
# is atomics and mutexes, whose happens-before edges TSan still sees through its interceptors.
TSAN_PLAIN := src/hooks/interpose.c src/platform/resolve.c
.PHONY: tsan-lib tsan-test
$(TSAN_BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(TSAN_CFLAGS) $(if $(filter $<,$(TSAN_PLAIN)),,-fsanitize=thread) -MMD -MP -c $< -o $@
$(TSAN_BUILD)/libvramtrace.so: $(TSAN_OBJS) src/libvramtrace.map
	$(CC) -shared -fsanitize=thread -o $@ $(TSAN_OBJS) -Wl,--version-script=src/libvramtrace.map -Wl,-z,nodelete $(LIB_LIBS)
-include $(TSAN_OBJS:.o=.d)
tsan-lib: $(TSAN_BUILD)/libvramtrace.so
# The CLI, sim and programs are the normal ones from $(BUILD); only the preloaded library differs.
# TSan's default die_after_fork=1 stays: a fork child that starts a thread after a
# multi-threaded fork is outside POSIX's async-signal-safe rules, which is worth failing on.
tsan-test: all $(TSAN_BUILD)/libvramtrace.so $(TEST_DEPS)
	@BUILD=$(BUILD) VT_TSAN_LIB="$(abspath $(TSAN_BUILD)/libvramtrace.so)" \
	    TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1 suppressions='$(abspath tests/tsan.supp)'" \
	    sh tests/run.sh rel_tsan

# --- lint ------------------------------------------------------------------------------------
LINT_SRCS := $(wildcard src/*/*.c tools/*.c tools/report/*.c tools/bandwidth/*.c)
CPPCHECK_FLAGS := --quiet --error-exitcode=1 --inline-suppr --std=c11 --enable=warning,portability,performance \
    --suppress=missingIncludeSystem -D_GNU_SOURCE $(SRC_INC) -Itools -I$(BUILD)/gen \
    --suppress=uninitvar:tools/bandwidth/pcie.c
# The two suppressions are false positives (cppcheck 2.10): check.c's read loop runs only while
# buf is non-NULL; pcie.c's qsort sees an array whose first n (possibly 0) entries are set.
# clang-analyzer-* and bugprone-*, less the checks that only argue style here (swappable
# parameters, reserved _names, narrowing, macro parentheses, float loop counters in the SVG axis
# code) and insecureAPI (memcpy/snprintf "use _s" advice).
TIDY_CHECKS := -*,clang-analyzer-*,-clang-analyzer-security.insecureAPI.*,-clang-analyzer-security.FloatLoopCounter,-clang-analyzer-optin.performance.Padding,bugprone-*,-bugprone-easily-swappable-parameters,-bugprone-reserved-identifier,-bugprone-narrowing-conversions,-bugprone-assignment-in-if-condition,-bugprone-macro-parentheses,-bugprone-branch-clone,-bugprone-implicit-widening-of-multiplication-result,-bugprone-signal-handler,-bugprone-suspicious-string-compare,-bugprone-sizeof-expression
TIDY_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
.PHONY: lint cppcheck tidy
lint: cppcheck tidy check-layers
cppcheck: $(BW_PTX_H)
	cppcheck $(CPPCHECK_FLAGS) $(LINT_SRCS)
# one clang-tidy per file, TIDY_JOBS at a time; the findings of every file, then the verdict
tidy: $(BW_PTX_H)
	@printf '%s\n' $(LINT_SRCS) | xargs -P $(TIDY_JOBS) -I{} sh -c \
	    'clang-tidy --quiet -checks="$(TIDY_CHECKS)" --warnings-as-errors="*" {} -- -std=c11 -D_GNU_SOURCE $(SRC_INC) -Itools -I$(BUILD)/gen >$(BUILD)/tidy-$$(echo {} | tr / _).log 2>&1 || { grep -v "warnings\? generated" $(BUILD)/tidy-$$(echo {} | tr / _).log; exit 1; }' \
	    && echo "clang-tidy: clean"

# --- fuzz: every fuzz/fuzz_NAME.c, built by the rule its module's mk/*.mk provides
# ($(BUILD)/fuzz/fuzz_NAME, clang -fsanitize=fuzzer,address,undefined; see mk/fatbin.mk), seeded
# from FUZZ_SEEDS_NAME when set. A new target needs only its fuzz/*.c, its build rule and seeds.
FUZZ_TARGETS := $(patsubst fuzz/fuzz_%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_SEEDS_fatbin ?= $(FB_DIR)
FUZZ_SEEDS_trace ?= tests/data/traces
FUZZ_SEEDS_ring ?= fuzz/seeds/ring
FUZZ_SEEDS_cli ?= fuzz/seeds/cli
# the parallel reader is fuzzed in 4 KiB chunks; inputs up to 256 KiB span dozens of them
FUZZ_FLAGS_trace ?= -max_len=262144
FUZZ_FLAGS_cli ?= -close_fd_mask=2 -timeout=20
# `vramtrace report`'s command line: report.c and everything it calls (cli.c: the shared option parsing)
# (and the fatbin reader the report's SASS settling uses)
$(BUILD)/fuzz/fuzz_cli: fuzz/fuzz_cli.c $(wildcard tools/report/*.c tools/report/*.h) tools/cli.c tools/cli.h $(FUZZ_RING_SRCS) src/trace/journal.c $(wildcard src/fatbin/*.c)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 $(SRC_INC) -Itools -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=undefined -o $@ fuzz/fuzz_cli.c tools/cli.c $(sort $(wildcard tools/report/*.c) $(FUZZ_RING_SRCS) src/trace/journal.c $(wildcard src/fatbin/*.c)) \
	    -ljson-c -ldw -lelf -lzstd -llz4 -lstdc++ -lm -lpthread
# crash recovery: journal.c is included by the target (its ring layout is private)
FUZZ_RING_SRCS := src/trace/records.c src/trace/api_names.c src/trace/trace_writer.c src/core/registry.c src/core/rangemap.c src/core/inflight.c src/platform/addrspace.c src/platform/tracer.c src/platform/safepath.c tools/report/escape.c
$(BUILD)/fuzz/fuzz_ring: fuzz/fuzz_ring.c src/trace/journal.c src/trace/journal.h src/trace/records.h $(FUZZ_RING_SRCS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 $(SRC_INC) -Itools -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=undefined -o $@ fuzz/fuzz_ring.c $(FUZZ_RING_SRCS) -ljson-c -lpthread
.PHONY: fuzz
fuzz: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz_%)
	@set -e; $(foreach t,$(FUZZ_TARGETS), \
	    mkdir -p $(BUILD)/fuzz/corpus-$(t); echo "fuzz: $(t) for $(FUZZ_SECONDS) s"; \
	    $(BUILD)/fuzz/fuzz_$(t) -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=2048 $(FUZZ_FLAGS_$(t)) \
	        -artifact_prefix=$(BUILD)/fuzz/$(t)- $(BUILD)/fuzz/corpus-$(t) $(FUZZ_SEEDS_$(t)) 2>$(BUILD)/fuzz/$(t).log \
	        || { tail -40 $(BUILD)/fuzz/$(t).log; exit 1; }; tail -1 $(BUILD)/fuzz/$(t).log;)

# --- sanitized test runs (make SAN=1 test) ---------------------------------------------------
# The ASan-built libvramtrace.so (and sim) are loaded into uninstrumented programs, so the ASan
# runtime must be the first object loaded: `vramtrace run` puts VRAMTRACE_PRELOAD_FIRST ahead of
# the library in LD_PRELOAD (case scripts running the sim without the tracer prepend it too).
# Leak detection is off (ASAN_OPTIONS, unless set): the test programs leak on purpose (leak
# reports are what the tracer tests), and LSan would change their exit status.
ifneq ($(SAN),)
export VRAMTRACE_PRELOAD_FIRST := $(shell $(CC) -print-file-name=libasan.so)
export ASAN_OPTIONS ?= detect_leaks=0
endif

# A second CUDA interposer (tests/shim/vtshim.c) preloaded beside the tracer (rel_preloads.sh).
$(BUILD)/tests/libvtshim.so: tests/shim/vtshim.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -shared -fPIC -o $@ $< -ldl
TEST_DEPS += $(BUILD)/tests/libvtshim.so

# Fault injection for the CLI: the Nth malloc/calloc/realloc fails (report_faults.sh).
$(BUILD)/tests/libfailalloc.so: tests/shim/failalloc.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -shared -fPIC -o $@ $<
TEST_DEPS += $(BUILD)/tests/libfailalloc.so
