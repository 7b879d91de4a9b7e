# mk/frameworks.mk - `make test-frameworks`: Python frameworks traced on the simulated device
# (issue 46 slice 3). tools/setup-frameworks.sh installs their environments once into a cache
# outside the tree (VT_PY_CACHE); tests/cases/fw_*.sh trace scripts from tests/frameworks/ and
# skip, loudly, when an environment is missing. `make test` runs the same cases (skipping without
# the environments); .ci/run runs this target.
.PHONY: test-frameworks
test-frameworks: all $(TEST_DEPS)
	@sh tools/setup-frameworks.sh
	@BUILD=$(BUILD) NVCC="$(NVCC)" CUDA_HOME="$(CUDA_HOME)" SAN="$(SAN)" sh tests/run.sh fw_
