#!/usr/bin/env python3
"""Sweep the plans for a model and cluster, pick the fastest that fits, look at it, and compare it with runners-up.

    PYTHONPATH=build/python python3 examples/python/sweep_and_plot.py [--model llama3-8b] [--gpus 64] [--out DIR]

Writes DIR/sweep.svg (every feasible plan, the Pareto front), DIR/step.svg (the chosen plan's step) and, when
matplotlib is installed, DIR/sweep_matplotlib.png (the same sweep drawn from the returned dicts)."""
import argparse
import os

import parsim


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="llama3-8b")
    ap.add_argument("--gpus", type=int, default=64)
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--out", default=".")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    # 1. Sweep (runs without the GIL, on all cores), keeping 4 GiB of headroom below the GPU's capacity.
    sweep = parsim.sweep(model=args.model, gpus=args.gpus, gpu=args.gpu, headroom_gib=4, all=True,
                         svg=os.path.join(args.out, "sweep.svg"))
    results = sweep["results"]
    print(f"{sweep['feasible']} of {sweep['evaluated']} plans fit; fastest:")
    for r in results[:5]:
        print(f"  {r['plan']:<28} mbs {r['mbs']}  {r['recompute']:<9} sp {str(r['sp']):<5} "
              f"{r['step_time_s']:.3f} s  MFU {100 * r['mfu']:.1f} %  {r['memory']['peak_gib']:.1f} GiB")
    if not results:
        return

    # 2. The fastest plan, simulated again with a picture of its step and advice.
    best = results[0]
    settings = dict(model=args.model, gpu=args.gpu, plan=best["plan"], mbs=best["mbs"], recompute=best["recompute"],
                    sp=best["sp"], schedule=best["schedule"], gbs=best["gbs"], seq=best["seq"])
    step = parsim.predict(**settings, svg=os.path.join(args.out, "step.svg"), advice=True)
    # The sweep's row is this prediction (to the last bits: keeping the timeline for the picture plays every
    # micro-batch instead of extending the steady state, which sums the same times in another order).
    assert abs(step["step_time_s"] - best["step_time_s"]) <= 1e-9 * best["step_time_s"]
    print(f"\n{best['plan']}: {step['step_time_s']:.3f} s per step, bubble {100 * step['bubble_fraction']:.1f} %")
    for note in step["advice"]["notes"]:
        print("  advice:", note)

    # 3. The three fastest plans with the best one's micro-batch, recompute and sp, side by side.
    same = [r["plan"] for r in results
            if (r["mbs"], r["recompute"], r["sp"], r["schedule"]) == (best["mbs"], best["recompute"], best["sp"],
                                                                      best["schedule"])]
    plans = list(dict.fromkeys(same))[:3]
    if len(plans) > 1:
        cmp = parsim.compare(model=args.model, gpu=args.gpu, plan=plans, gbs=best["gbs"], seq=best["seq"],
                             mbs=best["mbs"], recompute=best["recompute"], sp=best["sp"], schedule=best["schedule"])
        print()
        for p in cmp["plans"]:
            print(" ", p["versus_best"])

    # 4. Optional: the sweep with matplotlib.
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"\nwrote {args.out}/sweep.svg and {args.out}/step.svg (matplotlib not installed: no PNG)")
        return
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.scatter([r["memory"]["peak_gib"] for r in results], [r["step_time_s"] for r in results], s=10)
    ax.set_xlabel("peak memory per GPU (GiB)")
    ax.set_ylabel("step time (s)")
    ax.set_title(f"{args.model} on {args.gpus} × {args.gpu}")
    fig.savefig(os.path.join(args.out, "sweep_matplotlib.png"), dpi=120)
    print(f"\nwrote {args.out}/sweep.svg, {args.out}/step.svg and {args.out}/sweep_matplotlib.png")


if __name__ == "__main__":
    main()
