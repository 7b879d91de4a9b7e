# mk/trace_tests.mk - extra builds for the tracer's end-to-end tests (tests/cases/trace_*.sh, check_*.sh).
# Variants of tests/progs/trace_rt.cu (the plain build comes from mk/progs.mk):
#   trace_rt_legacy (__NV_LEGACY_LAUNCH: stubs call cudaLaunchKernel; nvcc 13.0 needs it as -Xcompiler -D..., a
#   plain -D breaks the stub), trace_rt_zstdnone/_zsize/_speed
#   (--compress-mode=none/size/speed); its device code as PTX and fatbin images; the driver-API
#   program trace_drv (-lcuda) and trace_drv_dl (dlopen + cuGetProcAddress only), both embedding them.
ifneq ($(NVCC),)
TRACE_DIR := $(BUILD)/tests/progs
TRACE_RT_VARIANTS := $(TRACE_DIR)/trace_rt_legacy $(TRACE_DIR)/trace_rt_zstdnone $(TRACE_DIR)/trace_rt_zsize \
                     $(TRACE_DIR)/trace_rt_speed
TRACE_IMAGES := $(TRACE_DIR)/trace_kern.ptx $(TRACE_DIR)/trace_kern.fatbin
TEST_DEPS += $(TRACE_RT_VARIANTS) $(TRACE_IMAGES) $(TRACE_DIR)/trace_drv $(TRACE_DIR)/trace_drv_dl

trace_variant_flags = $(if $(findstring _legacy,$1),-Xcompiler -D__NV_LEGACY_LAUNCH) \
    $(if $(findstring _zstdnone,$1),--compress-mode=none) $(if $(findstring _zsize,$1),--compress-mode=size) \
    $(if $(findstring _speed,$1),--compress-mode=speed)
$(TRACE_RT_VARIANTS): $(TRACE_DIR)/trace_rt_%: tests/progs/trace_rt.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -cudart shared $(call trace_variant_flags,_$*) -o $@ $<
$(TRACE_DIR)/trace_kern.ptx: tests/progs/trace_rt.cu
	@mkdir -p $(dir $@)
	$(NVCC) -arch=sm_90 -ptx -o $@ $<
$(TRACE_DIR)/trace_kern.fatbin: tests/progs/trace_rt.cu
	@mkdir -p $(dir $@)
	$(NVCC) -arch=sm_90 -fatbin -o $@ $<
$(TRACE_DIR)/trace_drv: tests/progs/trace_drv.c $(TRACE_IMAGES)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -rdynamic -I$(CUDA_HOME)/include \
	    -DTRACE_FATBIN='"$(abspath $(TRACE_DIR)/trace_kern.fatbin)"' -DTRACE_PTX='"$(abspath $(TRACE_DIR)/trace_kern.ptx)"' \
	    -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda -ldl
$(TRACE_DIR)/trace_drv_dl: tests/progs/trace_drv.c $(TRACE_IMAGES)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -rdynamic -I$(CUDA_HOME)/include -DTRACE_DLOPEN \
	    -DTRACE_FATBIN='"$(abspath $(TRACE_DIR)/trace_kern.fatbin)"' -DTRACE_PTX='"$(abspath $(TRACE_DIR)/trace_kern.ptx)"' \
	    -o $@ $< -ldl
endif
