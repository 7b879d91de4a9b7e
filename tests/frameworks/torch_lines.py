"""torch_lines.py - PyTorch memory named by this script's lines (tests/cases/fw_lines.sh, issue 47
slice 3; lines by their "# at:" markers), on a simulated device of 64 MiB (VRAMTRACE_SIM_MEM),
under PyTorch's caching allocator and under `vramtrace run --torch-tensors`. What it does:
  build()   weights(): one 3 MiB float32 tensor (at:weights), called at at:build_w;
            activations(): 1 MiB, called twice in a loop (at:acts, at:build_acts)
  the peak  the three tensors live (5 MiB of tensors). The caching allocator holds them in
            segments: the script prints PyTorch's own memory_snapshot() as "segment BYTES
            BLOCKS" (each segment's size and its blocks' sizes), from which the test knows
            which segment each line's tensors made (native backend only: cudaMallocAsync keeps none)
  grow()    asks for 128 MiB (at:oom), more than the device has: PyTorch raises
            OutOfMemoryError (printed "oom OutOfMemoryError"); held by what the peak holds
The simulated device runs no kernel."""
import torch

MiB = 1 << 20
dev = torch.device("cuda")


def weights():
    return torch.empty(3 * MiB // 4, device=dev)  # at:weights


def activations():
    return torch.empty(MiB // 4, device=dev)  # at:acts


def build():
    w = weights()  # at:build_w
    acts = []
    for _ in range(2):
        acts.append(activations())  # at:build_acts
    return w, acts


def grow():
    return torch.empty(128 * MiB // 4, device=dev)  # at:oom


model = build()  # at:main_build
if torch.cuda.get_allocator_backend() == "native":  # cudaMallocAsync keeps no segments to show
    for seg in torch.cuda.memory_snapshot():
        print("segment", seg["total_size"], " ".join(str(b["size"]) for b in seg["blocks"] if b["state"] == "active_allocated"))
try:
    grow()  # at:call_oom
    print("oom none")
except torch.cuda.OutOfMemoryError:
    print("oom OutOfMemoryError")
print("backend", torch.cuda.get_allocator_backend())
