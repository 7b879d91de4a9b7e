# mk/fatbin.mk - fatbin parser: test tool, fixtures, fuzz target.
#   $(BUILD)/tests/fatbin_dump   prints the layouts vt_fatbin_parse finds (tests/cases/fatbin_*.sh)
#   make fatbin-fixtures         regenerate tests/data/fatbin/*.fatbin etc. with nvcc (committed)
#   make fuzz-fatbin             libFuzzer run for FUZZ_SECONDS (default 60), seeds tests/data/fatbin/
FATBIN_SRCS := $(wildcard src/fatbin/fatbin*.c)
TEST_DEPS += $(BUILD)/tests/fatbin_dump

# The fixtures' expected layouts, from the host compiler (tests/data/fatbin/kernels_layout.cpp
# compiles kernels.cu as host code), never from the parser they check. test_fatbin reads them.
FB_EXPECTED_DIR := $(BUILD)/tests/fatbin_expected
FB_EXPECTED := $(FB_EXPECTED_DIR)/expected_sm90.txt $(FB_EXPECTED_DIR)/expected_sm80.txt
$(FB_EXPECTED_DIR)/kernels_layout: tests/data/fatbin/kernels_layout.cpp tests/data/fatbin/kernels.cu
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -Wall -Wextra -Werror -Wno-psabi -Wno-unused-parameter -o $@ $<
$(FB_EXPECTED_DIR)/expected_sm%.txt: $(FB_EXPECTED_DIR)/kernels_layout
	$< $* >$@
$(BUILD)/tests/unit/test_fatbin: CFLAGS += -DVT_FATBIN_EXPECTED_DIR='"$(FB_EXPECTED_DIR)"'
$(BUILD)/tests/unit/test_fatbin: $(FB_EXPECTED)
$(BUILD)/tests/unit/test_fatbin $(BUILD)/tests/unit/test_fatbin_ptx $(BUILD)/tests/unit/test_fatbin_elf: tests/unit/fatbin_test_util.h
TEST_DEPS += $(FB_EXPECTED)

$(BUILD)/tests/fatbin_dump: tests/unit/fatbin_dump.c $(BUILD)/libvtcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libvtcore.a $(LDFLAGS) -lzstd -llz4

FB_DIR := tests/data/fatbin
FB_CU  := $(FB_DIR)/kernels.cu
.PHONY: fatbin-fixtures fuzz-fatbin
fatbin-fixtures: $(BUILD)/tests/fatbin_dump
	$(NVCC) --fatbin -arch=sm_90 -o $(FB_DIR)/default.fatbin $(FB_CU)
	$(NVCC) --fatbin -arch=sm_90 --compress-mode=none -o $(FB_DIR)/none.fatbin $(FB_CU)
	$(NVCC) --fatbin -arch=sm_90 --compress-mode=size -o $(FB_DIR)/size.fatbin $(FB_CU)
	$(NVCC) --fatbin -arch=sm_90 --compress-mode=speed -o $(FB_DIR)/speed_lz4.fatbin $(FB_CU)
	$(NVCC) --fatbin -arch=compute_90 -o $(FB_DIR)/ptx_only.fatbin $(FB_CU)
	$(NVCC) --fatbin --compress-mode=size -gencode arch=compute_80,code=sm_80 \
	    -gencode arch=compute_90,code=[sm_90,compute_90] -o $(FB_DIR)/multi.fatbin $(FB_CU)
	$(NVCC) -cubin -arch=sm_90 -o $(FB_DIR)/sm90.cubin $(FB_CU)
	$(NVCC) -cubin -rdc=true -arch=sm_90 -o $(FB_DIR)/rdc_sm90.cubin $(FB_DIR)/rdc.cu
	$(NVCC) -ptx -arch=sm_90 -o $(FB_DIR)/sm90.ptx $(FB_CU)
	$(NVCC) -ptx -arch=sm_80 -o $(FB_DIR)/sm80.ptx $(FB_CU)

FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
$(BUILD)/fuzz/fuzz_fatbin: fuzz/fuzz_fatbin.c $(FATBIN_SRCS) src/fatbin/fatbin.h src/fatbin/fatbin_int.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=undefined $(SRC_INC) -o $@ fuzz/fuzz_fatbin.c $(FATBIN_SRCS) -lzstd -llz4
fuzz-fatbin: $(BUILD)/fuzz/fuzz_fatbin
	@mkdir -p $(BUILD)/fuzz/corpus-fatbin
	$(BUILD)/fuzz/fuzz_fatbin -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=2048 \
	    -artifact_prefix=$(BUILD)/fuzz/ $(BUILD)/fuzz/corpus-fatbin $(FB_DIR)
