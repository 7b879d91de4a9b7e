"""pytorch_oom.py - a small model trained with a growing batch until CUDA runs out of memory.

Run it under the tracer on a GPU machine, with and without expandable segments:

    vramtrace run -o pt.jsonl -- python3 examples/pytorch_oom.py
    PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vramtrace run -o pt-vmm.jsonl -- python3 examples/pytorch_oom.py
    vramtrace report pt.jsonl

Each step is an NVTX range ("step N" > "forward" / "backward" / "optimizer"), so the report shows
in which phase the peak and the OOM happened. `--limit-gib G` caps PyTorch's share of the GPU
(torch.cuda.set_per_process_memory_fraction) so the OOM comes quickly on a big card. With
`--snapshot FILE` PyTorch's own memory snapshot is saved too, for reading side by side.
Exit status: 0 when the OOM was reached and reported, 1 if it never came, 2 without CUDA.
"""
import argparse
import sys

try:
    import torch
except ImportError:
    print("pytorch_oom: PyTorch is not installed", file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit-gib", type=float, default=8.0)
    ap.add_argument("--width", type=int, default=8192)
    ap.add_argument("--max-steps", type=int, default=64)
    ap.add_argument("--snapshot", default=None)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("pytorch_oom: no CUDA device", file=sys.stderr)
        return 2
    dev = torch.device("cuda")
    total = torch.cuda.get_device_properties(dev).total_memory
    torch.cuda.set_per_process_memory_fraction(min(1.0, args.limit_gib * 2**30 / total), dev)
    if args.snapshot:
        torch.cuda.memory._record_memory_history(max_entries=100000)
    w = args.width
    model = torch.nn.Sequential(
        torch.nn.Linear(w, w), torch.nn.GELU(), torch.nn.Linear(w, w), torch.nn.GELU(), torch.nn.Linear(w, 10)
    ).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batch = 256
    for step in range(1, args.max_steps + 1):
        try:
            with torch.cuda.nvtx.range(f"step {step}"):
                x = torch.randn(batch, w, device=dev)
                y = torch.randint(0, 10, (batch,), device=dev)
                with torch.cuda.nvtx.range("forward"):
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                with torch.cuda.nvtx.range("backward"):
                    loss.backward()
                with torch.cuda.nvtx.range("optimizer"):
                    opt.step()
                    opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            print(f"step {step}: batch {batch}, reserved {torch.cuda.memory_reserved() / 2**30:.2f} GiB", flush=True)
            batch *= 2
        except torch.cuda.OutOfMemoryError as e:
            print(f"step {step}: OOM at batch {batch}: {str(e).splitlines()[0]}", flush=True)
            if args.snapshot:
                torch.cuda.memory._dump_snapshot(args.snapshot)
            return 0
    print("pytorch_oom: no OOM within --max-steps", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
