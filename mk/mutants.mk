# mk/mutants.mk - `make mutants`: plants N mistakes in src/ and tools/report/, one at a time, and
# counts those the test suite catches (tools/mutants.py; docs/testing.md). Not part of `make test`:
# a survivor costs a whole suite run. universalmutator is installed once into the Python cache
# (tools/setup-frameworks.sh mutants).
#   make mutants [N=20] [MODULE=core] [SEED=123] [MUTANTS_RESULTS=file]
.PHONY: mutants
N ?= 20
VT_PY_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/vramtrace/py
# the prerequisites (everything the suite runs) are named in the Makefile, after the mk files
mutants:
	@sh tools/setup-frameworks.sh mutants
	@[ -x "$(VT_PY_CACHE)/mutants/bin/python" ] || { echo "make mutants: universalmutator is not installed (no network?): nothing measured" >&2; exit 2; }
	@NVCC="$(NVCC)" CUDA_HOME="$(CUDA_HOME)" "$(VT_PY_CACHE)/mutants/bin/python" tools/mutants.py --n "$(N)" \
	    $(if $(MODULE),--module "$(MODULE)") $(if $(SEED),--seed "$(SEED)") $(if $(MUTANTS_RESULTS),--results "$(MUTANTS_RESULTS)")

# `make coverage`: the suite under gcc --coverage (build-cov); per module, the lines no test runs,
# which is where a planted mistake survives for certain (tools/coverage.sh; T=PATTERN for some tests)
.PHONY: coverage
coverage:
	@NVCC="$(NVCC)" CUDA_HOME="$(CUDA_HOME)" sh tools/coverage.sh $(T)
