#!/usr/bin/env python3
"""Measure a GEMM sweep on this machine's GPU for `parsim calibrate` (needs PyTorch with CUDA or ROCm).

    python3 tools/gemm_sweep.py --out sweep.csv                 # bf16, XLA's 375 shapes
    python3 tools/gemm_sweep.py --dtype fp8 --out sweep_fp8.csv # e4m3 x e4m3 -> bf16 (torch._scaled_mm)
    parsim calibrate sweep.csv --gpu b200 --out my-gpu.json     # fit gemm_ceiling and gemm_k_half
    parsim calibrate sweep_fp8.csv --gpu my-gpu.json --precision fp8 --out my-gpu.json

The shapes are those of XLA's GEMM performance table (xla/tools/matmul_perf_table_gen: batch 1, 2, 4 x m, n, k in
256 ... 4096), so a sweep is comparable with tests/data/hardware/xla_matmul_perf_table.csv. Each shape is timed as that
table times it: warm-up, then the median of --repeats kernel windows measured with CUDA events, alternating between
two operand sets so that the second does not find the first in L2. A batch b > 1 runs as one batched matmul
(torch.bmm), what parsim's model counts as b GEMMs of one launch. Output: CSV `b,m,n,k,gpu,<dtype>_tflops` with the
device name, library versions and method in '#' comment lines. --dry-run prints the shapes and needs no GPU.
"""
import argparse
import statistics
import sys

SIZES = (256, 512, 1024, 2048, 4096)
BATCHES = (1, 2, 4)


def xla_shapes():
    return [(b, m, n, k) for b in BATCHES for m in SIZES for n in SIZES for k in SIZES]


def measure(shapes, dtype, repeats, device_label):
    import torch  # only here: --dry-run works without PyTorch

    if not torch.cuda.is_available():
        sys.exit("gemm_sweep: no CUDA/ROCm device visible to PyTorch")
    dev = torch.device("cuda")
    rows = []
    for b, m, n, k in shapes:
        sets = []
        for _ in range(2):
            a = torch.randn(b, m, k, device=dev, dtype=torch.bfloat16)
            w = torch.randn(b, k, n, device=dev, dtype=torch.bfloat16)
            if dtype == "fp8":
                a8 = a.to(torch.float8_e4m3fn)
                w8 = w.transpose(1, 2).contiguous().to(torch.float8_e4m3fn).transpose(1, 2)  # column-major B
                one = torch.ones((), device=dev, dtype=torch.float32)
                sets.append((a8, w8, one))
            else:
                sets.append((a, w, None))

        def run(s):
            a_, w_, one = s
            if dtype == "fp8":
                for i in range(b):  # _scaled_mm is 2-D: b launches
                    torch._scaled_mm(a_[i], w_[i], scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            elif b == 1:
                torch.mm(a_[0], w_[0])
            else:
                torch.bmm(a_, w_)

        for i in range(5):
            run(sets[i % 2])
        times = []
        for i in range(repeats):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            run(sets[i % 2])
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) / 1e3)
        t = statistics.median(times)
        rows.append((b, m, n, k, device_label, 2.0 * b * m * n * k / t / 1e12))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", help="CSV to write (default: standard output)")
    p.add_argument("--dtype", choices=("bf16", "fp8"), default="bf16")
    p.add_argument("--repeats", type=int, default=20, help="timed runs per shape (median), default 20")
    p.add_argument("--gpu-label", default="mygpu", help="the gpu column (parsim calibrate --device picks it)")
    p.add_argument("--dry-run", action="store_true", help="print the shapes and exit (no GPU needed)")
    args = p.parse_args()
    shapes = xla_shapes()
    if args.dry_run:
        for s in shapes:
            print("b=%d m=%d n=%d k=%d" % s)
        print("%d shapes" % len(shapes))
        return 0
    if args.repeats < 1:
        sys.exit("gemm_sweep: --repeats must be at least 1")
    rows = measure(shapes, args.dtype, args.repeats, args.gpu_label)
    import torch

    lines = [
        "# parsim tools/gemm_sweep.py: %s GEMMs on %s, torch %s (CUDA %s, HIP %s); median of %d event-timed runs per "
        "shape after 5 warm-ups, two operand sets alternated" % (args.dtype, torch.cuda.get_device_name(),
                                                               torch.__version__, torch.version.cuda,
                                                               getattr(torch.version, "hip", None), args.repeats),
        "b,m,n,k,gpu,%s_tflops" % args.dtype,
    ]
    lines += ["%d,%d,%d,%d,%s,%.3f" % r for r in rows]
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
