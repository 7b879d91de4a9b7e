# vramtrace - top-level build. `make` builds the library and CLI (no CUDA toolkit needed);
# with nvcc present, `make examples` / `make test` also build the simulated device and the CUDA
# test programs. Module fragments live in mk/*.mk.
#
#   make                 build/libvramtrace.so, build/vramtrace
#   make demo            examples under the tracer (simulated device, or the real GPU if present)
#   make test            full test suite (prints 'N passed, N failed')
#   make SAN=1 test      the same under ASan+UBSan (build dir build-san)
#   make mutants         plant N=20 mistakes (MODULE=, SEED=) and count those the tests catch
#   make coverage        the lines of src/ and tools/report/ no test runs (build-cov)
#   make bench, make fuzz, make lint, make clean

CC       ?= cc
SAN      ?=
ifeq ($(SAN),)
BUILD    ?= build
else
BUILD    ?= build-san
endif
CUDA_HOME ?= $(shell d=$$(dirname $$(dirname $$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc))); echo $$d)
NVCC     ?= $(shell command -v nvcc 2>/dev/null || { [ -x $(CUDA_HOME)/bin/nvcc ] && echo $(CUDA_HOME)/bin/nvcc; })
HAVE_CUDA_HEADERS := $(shell [ -f $(CUDA_HOME)/include/cuda.h ] && echo 1)

WARN     := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter
OPT      ?= -O2 -g
SAN_ON   := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
SANFLAGS := $(if $(SAN),$(SAN_ON))
CFLAGS   ?=
# src/ is in layer folders (each has a README saying what it owns and may call); their headers
# are included by name. include/vramtrace/ is the contract shared by library, CLI and users.
SRC_DIRS := hooks core fatbin trace platform
SRC_INC  := -Iinclude $(SRC_DIRS:%=-Isrc/%)
CFLAGS   += -std=c11 -D_GNU_SOURCE $(WARN) $(OPT) $(SANFLAGS) -fPIC $(SRC_INC) -Itools
LDFLAGS  += $(SANFLAGS)

LIB_LIBS  := -ldl -lpthread -lzstd -llz4
# Link-time optimisation of libvramtrace.so with gcc: the hook path crosses hooks -> events ->
# registry -> journal modules, and inlining across them saves ~50 instructions per
# cudaMalloc+cudaFree (docs/performance.md). Fat objects keep libvtcore.a an ordinary archive for
# the CLI and the unit tests. Off for sanitizer builds and other compilers; LTO= turns it off.
LTO      ?= $(if $(SAN),,$(shell $(CC) -v 2>&1 | grep -q '^gcc version' && echo 1))
LTO_CFLAGS := $(if $(LTO),-flto=auto -ffat-lto-objects)
LTO_LDFLAGS := $(if $(LTO),-flto=auto $(OPT) -fPIC)
TOOL_LIBS := -ljson-c -ldw -lelf -ldl -lpthread -lzstd -llz4 -lm

LIB_SRCS  := $(wildcard src/*/*.c)
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
TOOL_SRCS := $(wildcard tools/*.c tools/report/*.c tools/bandwidth/*.c)
TOOL_OBJS := $(TOOL_SRCS:%.c=$(BUILD)/obj/%.o)

.PHONY: all deps lib cli examples test test-deps demo bench fuzz lint clean check-hooks check-layers sim
all: deps lib cli

# NO_DEPS=1: the packages are known to be there (a Debian build's Build-Depends, the wheel's own check)
deps:
	@$(if $(NO_DEPS),:,sh tools/setup-deps.sh)

lib: $(BUILD)/libvramtrace.so $(BUILD)/libvtcore.a
cli: $(BUILD)/vramtrace

# Order-only: under `make -j` on a fresh machine the headers must be installed before any compile.
$(BUILD)/obj/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(LIB_OBJS): CFLAGS += $(LTO_CFLAGS)
$(BUILD)/libvramtrace.so: $(LIB_OBJS) src/libvramtrace.map
	$(CC) -shared -o $@ $(LIB_OBJS) $(LDFLAGS) $(LTO_LDFLAGS) -Wl,--version-script=src/libvramtrace.map -Wl,-z,nodelete -Wl,-Bsymbolic-functions $(LIB_LIBS)

# The same objects as a static archive, for unit tests and the CLI (only what they reference is linked).
# Not interpose.o: its exported dlsym would replace libc's in the CLI (and crash the ASan build).
$(BUILD)/libvtcore.a: $(filter-out $(BUILD)/obj/src/hooks/interpose.o,$(LIB_OBJS))
	rm -f $@ && ar rcs $@ $^

$(BUILD)/vramtrace: $(TOOL_OBJS) $(BUILD)/libvtcore.a
	$(CC) -o $@ $(TOOL_OBJS) $(BUILD)/libvtcore.a $(LDFLAGS) $(TOOL_LIBS) $(TOOL_EXTRA_LIBS)

# --- unit tests: tests/unit/test_<module>.c, one binary each -------------------------------
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
$(BUILD)/tests/unit/%: tests/unit/%.c tests/unit/vt_test.h $(BUILD)/libvtcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit -o $@ $< $(BUILD)/libvtcore.a $(LDFLAGS) $(TOOL_LIBS)

-include mk/*.mk
-include $(LIB_OBJS:.o=.d) $(TOOL_OBJS:.o=.d)

test: all $(UNIT_BINS) $(TEST_DEPS)
	@BUILD=$(BUILD) NVCC="$(NVCC)" CUDA_HOME="$(CUDA_HOME)" SAN="$(SAN)" sh tests/run.sh
# everything `make test` runs, built but not run (make mutants rebuilds it for each mutant)
test-deps: all $(UNIT_BINS) $(TEST_DEPS)
# Here, not in mk/reliability.mk: a prerequisite list is expanded where it is read, and the mk
# files that come after reliability.mk (sim, trace_tests) add to TEST_DEPS. (CI runs make test in
# another clone, so tsan-test and test-frameworks must build the simulator and programs themselves.)
tsan-test: $(TEST_DEPS)
test-frameworks: all $(TEST_DEPS)
mutants: test-deps
test-packages: all $(TEST_DEPS)

clean:
	rm -rf build build-san build-cov

check-hooks: lib
	@sh tools/check-hooks.sh $(BUILD) $(CUDA_HOME)

# Calls go one way (hooks -> core -> fatbin/trace -> platform; tools above src) and no two modules
# of src/ or tools/ depend on each other: from the include tree (cc -H) and the objects' symbols
# (nm). tests/cases/check_layers.sh plants breaches and sees them caught.
LAYER_CFLAGS := -std=c11 -D_GNU_SOURCE $(SRC_INC) -Itools -I$(BUILD)/gen
check-layers: lib cli
	@python3 tools/check-layers.py $(BUILD) $(LAYER_CFLAGS)

demo: all examples $(if $(HAVE_CUDA_HEADERS),sim)
	@BUILD=$(BUILD) sh tools/demo.sh
