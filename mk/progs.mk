# mk/progs.mk - CUDA programs for tests (tests/progs) and examples (examples/), built only when nvcc exists.
# tests/progs/*.cu : nvcc -cudart shared (the simulated libcudart.so.13 replaces the real one at run time)
# tests/progs/*.c  : plain C against the toolkit's libcudart/libcuda (ABI-checked against real headers)
# *_static.cu      : nvcc default static cudart (driver layer only)
NVCCFLAGS ?= -arch=sm_90 -g -lineinfo -Xcompiler -rdynamic
PROG_CU   := $(wildcard tests/progs/*.cu)
PROG_C    := $(wildcard tests/progs/*.c)
# nvrtc_gen compiles CUDA C++ at run time with the toolkit's NVRTC (it runs on the CPU)
NVRTC_LIB := $(wildcard $(CUDA_HOME)/lib64/libnvrtc.so)
ifeq ($(NVRTC_LIB),)
PROG_C    := $(filter-out tests/progs/nvrtc_gen.c,$(PROG_C))
endif
EXAMPLE_CU := $(wildcard examples/*.cu)
ifneq ($(NVCC),)
PROG_BINS := $(PROG_CU:tests/progs/%.cu=$(BUILD)/tests/progs/%) $(PROG_C:tests/progs/%.c=$(BUILD)/tests/progs/%)
EXAMPLE_BINS := $(EXAMPLE_CU:examples/%.cu=$(BUILD)/examples/%)
TEST_DEPS += $(PROG_BINS) $(EXAMPLE_BINS) $(BUILD)/tests/progs/typed_sites_o2 \
             $(BUILD)/tests/progs/sass_words_sass $(BUILD)/tests/progs/sass_words_rdc
endif
examples: all $(EXAMPLE_BINS)

$(BUILD)/tests/progs/%: tests/progs/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -Iinclude $(if $(findstring _static,$*),,-cudart shared) $(if $(findstring _zstdnone,$*),--compress-mode=none) $(if $(findstring _zsize,$*),--compress-mode=size) -o $@ $<
# the same program optimised: CUDA's typed overload and the helper inlined (report_sites.sh)
$(BUILD)/tests/progs/typed_sites_o2: tests/progs/typed_sites.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -O2 -cudart shared -o $@ $<
# the same program without PTX: SASS only, and device-linked (check_sass_words.sh)
$(BUILD)/tests/progs/sass_words_sass: tests/progs/sass_words.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(filter-out -arch=%,$(NVCCFLAGS)) -gencode arch=compute_90,code=sm_90 -cudart shared -o $@ $<
$(BUILD)/tests/progs/sass_words_rdc: tests/progs/sass_words.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -rdc=true -cudart shared -o $@ $<
$(BUILD)/tests/progs/%: tests/progs/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -rdynamic -I$(CUDA_HOME)/include -o $@ $< -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib64/stubs -lcudart -lcuda -ldl -lpthread
$(BUILD)/tests/progs/nvrtc_gen: tests/progs/nvrtc_gen.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -I$(CUDA_HOME)/include -o $@ $< -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lnvrtc
$(BUILD)/examples/%: examples/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -cudart shared -o $@ $<
