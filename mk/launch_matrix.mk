# mk/launch_matrix.mk - issue 34's detection matrix: tests/progs/matrix/launch_paths.cu (one kernel
# through every launch path, with live, host and freed pointers) compiled five ways
# (tests/cases/check_launch_paths.sh runs each path on each build):
#   sm90: default; sm80: an sm_80 cubin + compute_80 PTX (on the sm_90 simulated device);
#   none: --compress-mode=none; rdc: -rdc=true (device-linked); ptsz: --default-stream per-thread
#   (CUDA_API_PER_THREAD_DEFAULT_STREAM: the headers map the launch, capture and graph calls to
#   their _ptsz forms, and <<<>>> to __cudaLaunchKernel_ptsz)
# Linked with the driver API too (-lcuda: the toolkit's stub at build time, the simulated
# libcuda.so.1 at run time).
ifneq ($(NVCC),)
MATRIX_DIR   := $(BUILD)/tests/progs
MATRIX_BINS  := $(addprefix $(MATRIX_DIR)/launch_paths_,sm90 sm80 none rdc ptsz)
TEST_DEPS    += $(MATRIX_BINS)
matrix_flags = $(if $(filter sm80,$1),-arch=sm_80,-arch=sm_90) $(if $(filter none,$1),--compress-mode=none) \
    $(if $(filter rdc,$1),-rdc=true) $(if $(filter ptsz,$1),--default-stream per-thread)
$(MATRIX_BINS): $(MATRIX_DIR)/launch_paths_%: tests/progs/matrix/launch_paths.cu mk/launch_matrix.mk
	@mkdir -p $(dir $@)
	$(NVCC) $(call matrix_flags,$*) -g -lineinfo -Xcompiler -rdynamic -Xcompiler -Wno-deprecated-declarations \
	    -cudart shared -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda
endif
