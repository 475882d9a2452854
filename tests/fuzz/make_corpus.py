#!/usr/bin/env python3
"""Regenerates the seed corpora of tests/fuzz/corpus/ from the real files in tests/data and examples/.

    tests/fuzz/make_corpus.py [path/to/parsim]   (the binary is needed for the sweep shards of the merge corpus)

Every seed is a real file or a small, still valid piece of one (a fuzzer mutates small inputs far faster than big
ones): model, hardware and nccl seeds are copies; Kineto seeds keep a real trace's top-level metadata and a few
dozen of its events, chosen so that kernels, their runtime launches and their ac2g flows stay together; plan seeds
are the plans of tests/data/validation; merge seeds are shards written by `parsim sweep`.
"""
import csv
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")


def out(name, fname, data):
    os.makedirs(os.path.join(OUT, name), exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(os.path.join(OUT, name, fname), mode) as f:
        f.write(data)


def copies(name, patterns):
    for pat in patterns:
        for src in sorted(glob.glob(os.path.join(ROOT, pat))):
            prefix = os.path.basename(os.path.dirname(src))
            with open(src, "rb") as f:
                out(name, prefix + "_" + os.path.basename(src), f.read())


def kineto_piece(trace, kernels=12):
    """The trace's metadata and `kernels` GPU events with their launches and flows, plus a few other events."""
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    gpu_cats = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
    picked, corr = [], set()
    for e in events:
        if e.get("cat") in gpu_cats and len(corr) < kernels:
            picked.append(e)
            c = e.get("args", {}).get("correlation")
            if c is not None:
                corr.add(c)
    for e in events:
        cat, args = e.get("cat"), e.get("args", {})
        if cat in ("cuda_runtime", "cuda_driver", "Runtime") and args.get("correlation") in corr:
            picked.append(e)
        elif cat in ("ac2g", "async_cpu_to_gpu") and e.get("id") in corr:
            picked.append(e)
    extra = {"record_param_comms": 3, "ProfilerStep": 3, "[memory]": 4, "python_function": 2}
    for e in events:
        name, cat = str(e.get("name", "")), e.get("cat")
        key = "ProfilerStep" if name.startswith("ProfilerStep#") else name if name in extra else cat
        if key in extra and extra[key] > 0:
            extra[key] -= 1
            picked.append(e)
    if isinstance(trace, dict):
        piece = {k: v for k, v in trace.items() if k != "traceEvents"}
        piece["traceEvents"] = picked
        return piece
    return picked


def main():
    parsim = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "parsim")
    shutil.rmtree(OUT, ignore_errors=True)
    copies("model", ["tests/data/models/*.json", "tests/data/models/bad/*.json", "examples/models/*.json"])
    copies("hardware", ["examples/hardware/*.json", "hardware/presets/*.json"])
    copies("nccl", ["tests/data/nccl/*.txt"])
    for src in sorted(glob.glob(os.path.join(ROOT, "tests/data/profiles/*/*.json.gz"))):
        with gzip.open(src, "rt") as f:
            trace = json.load(f)
        base = os.path.basename(src).split(".json")[0][:40]
        text = json.dumps(kineto_piece(trace), separators=(",", ":"))
        out("kineto", base + ".json", text)
    # One gzip seed, so that the fuzzer starts inside the gzip path too.
    with open(os.path.join(OUT, "kineto", "mi250_minitoy_train_ROCm6_2_kineto.json"), "rb") as f:
        out("kineto", "mi250_piece.json.gz", gzip.compress(f.read(), mtime=0))
    # Plans (fuzz_plan's line format) and model JSONs from the published runs of tests/data/validation.
    flags = {"--gbs": "gbs", "--mbs": "mbs", "--seq": "seq", "--gpu": "gpu", "--gpus-per-node": "gpus_per_node",
             "--recompute": "recompute", "--precision": "precision", "--schedule": "schedule", "--model": "model"}
    plans, models = set(), set()
    for src in sorted(glob.glob(os.path.join(ROOT, "tests/data/validation/*.csv"))):
        with open(src, newline="") as f:
            for row in csv.DictReader(f):
                args = row.get("parsim_args", "").split()
                lines = [args[args.index("--plan") + 1]] if "--plan" in args else []
                # The runs use their own model JSONs; GPT-3 175B (96 layers, 96 heads) takes most of their plans,
                # fuzz_plan's built-in Mixtral 8x7B those with expert parallelism.
                moe = "ep" in lines[0] if lines else False
                lines += ["model=mixtral" if moe else "model=gpt3-175b"] if lines and "--model" not in args else []
                if not lines or lines[0] in plans:
                    continue
                plans.add(lines[0])
                for i, a in enumerate(args[:-1]):
                    if a in flags:
                        lines.append(f"{flags[a]}={args[i + 1]}")
                if "--sp" in args:
                    lines.append("sp=1")
                out("plan", f"validation_{len(plans):02d}.txt", "\n".join(lines) + "\n")
                model = row.get("parsim_model_json", "").strip()
                if model.startswith("{") and model not in models:
                    models.add(model)
                    out("model", f"validation_{len(models):02d}.json", model + "\n")
    for i, text in enumerate(["tp8pp2dp4\nmodel=llama2-7b\n", "tp4pp8dp16vpp5zero1\nmodel=llama2-70b\ngbs=1024\n",
                              "dp64fsdp\nmodel=llama3-8b\nprecision=fp8\n", "tp2cp2dp2hsdp2\nmodel=mistral-7b\nsp=1\n",
                              "tp8pp4\nmodel=gpt3-175b\nschedule=gpipe\nrecompute=full\n"]):
        out("plan", f"cli_{i}.txt", text)
    # Sweep shards (JSON and CSV) and a merged file, written by parsim itself.
    sweep = [parsim, "sweep", "--model", "llama2-7b", "--gpus", "16", "--top", "3"]
    for shard in ("0/2", "1/2"):
        for fmt in ("json", "csv"):
            text = subprocess.run(sweep + ["--shard", shard, "--format", fmt], check=True, capture_output=True,
                                  text=True).stdout
            out("merge", f"llama2-7b_16gpu_shard{shard[0]}of2.{fmt}", text)


if __name__ == "__main__":
    main()
