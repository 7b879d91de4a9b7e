# mk/bench.mk - `make bench`: tracer cost per call, instructions per call, trace size, tracer memory
# and report throughput, printed as one table by bench/run.sh (docs/performance.md). Not part of
# `make test`; no timing thresholds anywhere. The CUDA program needs nvcc (-cudart shared, run on
# the simulated device); without it `make bench` says so and stops.
BENCH_DIR   := $(BUILD)/bench
BENCH_CFLAGS := -std=c11 -Wall -Wextra -Werror -O2 -g
BENCH_TOOLS := $(BENCH_DIR)/gen_trace $(BENCH_DIR)/jsonc_floor $(BENCH_DIR)/vg_mmap_shim.so $(BENCH_DIR)/bench_registry \
               $(BENCH_DIR)/prims

$(BENCH_DIR)/gen_trace: bench/gen_trace.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -o $@ $<
$(BENCH_DIR)/jsonc_floor: bench/jsonc_floor.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -o $@ $< -ljson-c
$(BENCH_DIR)/bench_registry: bench/bench_registry.c src/core/registry.c src/core/rangemap.c src/core/inflight.c src/platform/addrspace.c src/platform/tracer.c src/core/registry.h src/core/rangemap.h src/core/inflight.h
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -D_GNU_SOURCE $(SRC_INC) -o $@ bench/bench_registry.c src/core/registry.c src/core/rangemap.c src/core/inflight.c src/platform/addrspace.c src/platform/tracer.c -lpthread
$(BENCH_DIR)/prims: bench/prims.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -o $@ $<
$(BENCH_DIR)/vg_mmap_shim.so: bench/vg_mmap_shim.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -fPIC -shared -o $@ $<

.PHONY: bench bench-tools
bench-tools: $(BENCH_TOOLS)
ifneq ($(NVCC),)
$(BENCH_DIR)/bench_calls: bench/bench_calls.cu bench/status_kb.h
	@mkdir -p $(dir $@)
	$(NVCC) -arch=sm_90 -O2 -cudart shared -Xcompiler -Wall,-Wextra -o $@ $<
$(BENCH_DIR)/soak: bench/soak.cu bench/status_kb.h
	@mkdir -p $(dir $@)
	$(NVCC) -arch=sm_90 -O2 -g -lineinfo -cudart shared -Xcompiler -Wall,-Wextra -o $@ $<
bench: all sim $(BENCH_TOOLS) $(BENCH_DIR)/bench_calls $(BENCH_DIR)/soak
	@BUILD=$(BUILD) sh bench/run.sh
else
bench: all $(BENCH_TOOLS)
	@echo "bench: nvcc not found; the call benchmarks need an nvcc -cudart shared program and the simulated device" >&2; exit 1
endif
