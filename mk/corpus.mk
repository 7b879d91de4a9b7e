# mk/corpus.mk - the kernel-signature corpus (tests/gen/corpus.py; issue 32): one generated CUDA
# program, compiled six ways, whose host half states the true layouts and planted host pointers
# (tests/cases/check_corpus.sh compares the tracer's records with them).
#   sm90: default; sm80: an sm_80 cubin (on the sm_90 simulated device); none/size: --compress-mode;
#   rdc: -rdc=true (device-linked); ptx: compute_90 PTX only (the layouts come from the PTX parser)
ifneq ($(NVCC),)
CORPUS_N     := 320
CORPUS_SEED  := 1
CORPUS_CU    := $(BUILD)/gen/corpus.cu
CORPUS_DIR   := $(BUILD)/tests/progs
CORPUS_BINS  := $(addprefix $(CORPUS_DIR)/corpus_,sm90 sm80 none size rdc ptx)
TEST_DEPS    += $(CORPUS_BINS)

$(CORPUS_CU): tests/gen/corpus.py mk/corpus.mk
	@mkdir -p $(dir $@)
	python3 tests/gen/corpus.py $(CORPUS_N) $(CORPUS_SEED) $@
corpus_flags = $(if $(filter sm80,$1),-arch=sm_80,$(if $(filter ptx,$1),-arch=compute_90,-arch=sm_90)) \
    $(if $(filter none,$1),--compress-mode=none) $(if $(filter size,$1),--compress-mode=size) \
    $(if $(filter rdc,$1),-rdc=true)
$(CORPUS_BINS): $(CORPUS_DIR)/corpus_%: $(CORPUS_CU)
	@mkdir -p $(dir $@)
	$(NVCC) $(call corpus_flags,$*) -cudart shared -o $@ $<
endif
