# mk/report.mk - `vramtrace report` extras: libstdc++ for __cxa_demangle, unit tests that link the
# report objects, and the trace fuzzer (`make fuzz-trace`, clang libFuzzer).
TOOL_EXTRA_LIBS += -lstdc++
REPORT_SRCS := $(filter-out tools/report/report.c,$(wildcard tools/report/*.c))
REPORT_OBJS := $(REPORT_SRCS:%.c=$(BUILD)/obj/%.o)
REPORT_UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(wildcard tests/unit/test_report*.c tests/unit/test_sass.c))

$(REPORT_UNIT_BINS): $(BUILD)/tests/unit/%: tests/unit/%.c tests/unit/vt_test.h $(REPORT_OBJS) $(BUILD)/libvtcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit -o $@ $< $(REPORT_OBJS) $(BUILD)/libvtcore.a $(LDFLAGS) $(TOOL_LIBS) -lstdc++

.PHONY: fuzz-trace
FUZZ_CC ?= clang
fuzz-trace: $(BUILD)/fuzz/fuzz_trace
# util.c's output files reach their directory with src/platform/safepath.c
# analysis_sass.c reads fatbins with src/fatbin
FUZZ_FATBIN_SRCS := $(wildcard src/fatbin/*.c)
$(BUILD)/fuzz/fuzz_trace: fuzz/fuzz_trace.c $(REPORT_SRCS) $(wildcard tools/report/*.h) src/platform/safepath.c $(FUZZ_FATBIN_SRCS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 -Iinclude -Itools -Isrc/platform -Isrc/fatbin -fsanitize=fuzzer,address,undefined -o $@ fuzz/fuzz_trace.c $(REPORT_SRCS) src/platform/safepath.c $(FUZZ_FATBIN_SRCS) -ljson-c -ldw -lelf -lzstd -llz4 -lstdc++ -lm
