# mk/sim.mk - the simulated CUDA device (tests/sim, a TEST FIXTURE): $(BUILD)/sim/libcuda.so.1 and
# $(BUILD)/sim/libcudart.so.13, stand-ins that unmodified nvcc-built programs load through
# LD_LIBRARY_PATH. Built only when the CUDA headers exist (their types give the exact ABI).
ifeq ($(HAVE_CUDA_HEADERS),1)
SIM_DIR    := $(BUILD)/sim
SIM_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(OPT) $(SANFLAGS) -fPIC -I$(CUDA_HOME)/include -Itests/sim
SIM_DRV_SRCS := tests/sim/sim_driver.c tests/sim/sim_mem.c tests/sim/sim_drv_mem.c tests/sim/sim_module.c \
                tests/sim/sim_graph.c tests/sim/sim_procaddr.c tests/sim/sim_layout.c tests/sim/sim_drv_ext.c \
                tests/sim/sim_drv_misc.c
SIM_RT_SRCS  := $(wildcard tests/sim/rt_*.c)
SIM_DRV_OBJS := $(SIM_DRV_SRCS:tests/sim/%.c=$(SIM_DIR)/obj/%.o)
SIM_RT_OBJS  := $(SIM_RT_SRCS:tests/sim/%.c=$(SIM_DIR)/obj/%.o)
SIM_LIBS     := $(SIM_DIR)/libcuda.so.1 $(SIM_DIR)/libcudart.so.13 $(SIM_DIR)/libcuda.so $(SIM_DIR)/libcudart.so \
                $(SIM_DIR)/libvtsimredirect.so $(SIM_DIR)/libnvidia-ml.so.1

$(SIM_DIR)/obj/%.o: tests/sim/%.c $(wildcard tests/sim/*.h tests/sim/*.def)
	@mkdir -p $(dir $@)
	$(CC) $(SIM_CFLAGS) -c $< -o $@

# -Bsymbolic-functions: as in NVIDIA's libraries, the driver's own references (cuGetProcAddress's
# table, calls between entry points) bind to its own functions, not to a preloaded library's
# cuMemAlloc_v2 of the same name (tests/cases/rel_preloads.sh).
$(SIM_DIR)/libcuda.so.1: $(SIM_DRV_OBJS)
	$(CC) -shared -o $@ $(SIM_DRV_OBJS) $(LDFLAGS) -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic-functions -lzstd -llz4 -ldl -lpthread
# --no-undefined: the runtime must reach the driver only through dlopen + cuGetProcAddress_v2
$(SIM_DIR)/libcudart.so.13: $(SIM_RT_OBJS) tests/sim/libcudart.map
	$(CC) -shared -o $@ $(SIM_RT_OBJS) $(LDFLAGS) -Wl,-soname,libcudart.so.13 -Wl,-Bsymbolic-functions \
	    -Wl,--version-script=tests/sim/libcudart.map $(if $(SAN),,-Wl,--no-undefined) -ldl -lpthread
# run --sim preloads it: a dlopen of a CUDA runtime or driver by path gets the simulated one
$(SIM_DIR)/libvtsimredirect.so: tests/sim/sim_redirect.c
	@mkdir -p $(dir $@)
	$(CC) $(SIM_CFLAGS) -shared -o $@ $< $(LDFLAGS) -ldl -lpthread
# NVML beside the driver, as the driver package installs it (frameworks call it: sim_nvml.c)
$(SIM_DIR)/libnvidia-ml.so.1: tests/sim/sim_nvml.c tests/sim/sim.h
	@mkdir -p $(dir $@)
	$(CC) $(SIM_CFLAGS) -shared -o $@ $< $(LDFLAGS) -Wl,-soname,libnvidia-ml.so.1
$(SIM_DIR)/libcuda.so: $(SIM_DIR)/libcuda.so.1
	ln -sf libcuda.so.1 $@
$(SIM_DIR)/libcudart.so: $(SIM_DIR)/libcudart.so.13
	ln -sf libcudart.so.13 $@

.PHONY: sim check-sim
sim: $(SIM_LIBS)
TEST_DEPS += $(SIM_LIBS)
# every name in the table resolves through cuGetProcAddress_v2 and is exported
check-sim: $(SIM_LIBS)
	@sh tests/sim/check-sim.sh $(SIM_DIR)
endif
