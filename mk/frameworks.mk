# mk/frameworks.mk - `make test-frameworks`: Python frameworks traced on the simulated device
# (issue 46 slice 3: numba-cuda, PyTorch). tools/setup-frameworks.sh installs their environments once into a cache
# outside the tree (VT_PY_CACHE); tests/cases/fw_*.sh trace scripts from tests/frameworks/ and
# skip, loudly, when an environment is missing. `make test` runs the same cases (skipping without
# the environments); .ci/run runs this target.
.PHONY: test-frameworks
# its prerequisites (the simulator, the test programs) are named in the Makefile, after every mk
# file has added to TEST_DEPS
test-frameworks:
	@sh tools/setup-frameworks.sh
	@BUILD=$(BUILD) NVCC="$(NVCC)" CUDA_HOME="$(CUDA_HOME)" SAN="$(SAN)" sh tests/run.sh fw_
