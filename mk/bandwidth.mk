# mk/bandwidth.mk - `vramtrace bandwidth`: the embedded PTX kernels and the module's unit tests.
# tools/bandwidth/kernels.ptx is committed. With nvcc present it is regenerated from kernels.cu
# when that is newer (or on `make bandwidth-ptx`); without nvcc the committed copy is used.
# Either way it becomes a C string in $(BUILD)/gen/bw_kernels_ptx.h, included by gpu.c.
BW_PTX     := tools/bandwidth/kernels.ptx
BW_PTX_H   := $(BUILD)/gen/bw_kernels_ptx.h
BW_OBJS    := $(filter $(BUILD)/obj/tools/bandwidth/%,$(TOOL_OBJS))
# PTX ISA lowered to 7.0 (CUDA 11.0): the kernels use nothing newer, so any driver since 11.0 JITs them.
BW_PTX_ISA := 7.0

.PHONY: bandwidth-ptx
ifneq ($(NVCC),)
$(BW_PTX): tools/bandwidth/kernels.cu
	$(NVCC) -ptx -arch=compute_80 -o $@.tmp $<
	sed 's/^\.version [0-9.]*$$/.version $(BW_PTX_ISA)/' $@.tmp >$@ && rm -f $@.tmp
bandwidth-ptx:
	$(NVCC) -ptx -arch=compute_80 -o $(BW_PTX).tmp tools/bandwidth/kernels.cu
	sed 's/^\.version [0-9.]*$$/.version $(BW_PTX_ISA)/' $(BW_PTX).tmp >$(BW_PTX) && rm -f $(BW_PTX).tmp
else
bandwidth-ptx:
	@echo "bandwidth-ptx: nvcc not found; using the committed $(BW_PTX)"
endif

$(BW_PTX_H): $(BW_PTX) mk/bandwidth.mk
	@mkdir -p $(dir $@)
	awk 'BEGIN { print "/* generated from $(BW_PTX) by mk/bandwidth.mk - do not edit */"; \
	             print "#define VT_BW_KERNELS_PTX \\" } \
	     { gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); gsub(/\t/, "\\t"); printf "    \"%s\\n\" \\\n", $$0 } \
	     END { print "    \"\"" }' $< >$@.tmp && mv $@.tmp $@

$(BUILD)/obj/tools/bandwidth/gpu.o: $(BW_PTX_H)
$(BUILD)/obj/tools/bandwidth/gpu.o: CFLAGS += -I$(BUILD)/gen

# Unit tests that need the module's objects (the generic rule links only libvtcore.a); -o writes
# through the report's vtr_out, which reaches its directory with src/platform/safepath.c.
$(BUILD)/tests/unit/test_bandwidth: tests/unit/test_bandwidth.c tests/unit/vt_test.h $(BW_OBJS) $(BUILD)/obj/tools/report/util.o $(BUILD)/obj/tools/cli.o $(BUILD)/libvtcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit -o $@ $< $(BW_OBJS) $(BUILD)/obj/tools/report/util.o $(BUILD)/obj/tools/cli.o $(BUILD)/libvtcore.a $(LDFLAGS) -ldl -lpthread -lm

# ABI check of tools/bandwidth/cuda_min.h against the toolkit's cuda.h (skips without it).
$(BUILD)/tests/unit/test_bandwidth_abi: tests/unit/test_bandwidth_abi.c tests/unit/vt_test.h tools/bandwidth/cuda_min.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit $(if $(HAVE_CUDA_HEADERS),-DVT_HAVE_CUDA_H -I$(CUDA_HOME)/include) -o $@ $< $(LDFLAGS)
