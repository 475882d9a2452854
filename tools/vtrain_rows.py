#!/usr/bin/env python3
"""Writes tests/data/validation/vtrain_rest.csv: the vTrain measurements that are NOT in the cross-validated S56 file
(small_models_a100.csv holds the 80 single-node rows with 8 GPUs, pp 1 and 24 layers), in the validation-row format.

Source: github.com/VIA-Research/vTrain @f8dda8473a, data/ground_truth_single.csv (1,440 rows: 2/4/8 A100 on one node)
and data/ground_truth_multi.csv (109 rows: 64-512 A100), copied verbatim (byte-order mark removed) into
tests/data/validation/vtrain/. data/README.md there: 'All data points here are collected using Megatron-DeepSpeed
codebase'; the run configurations (config/validation/{single,multi}/*.json) say A100, use_checkpoint true,
use_gradient_bucket false, node_size 8. Model: the GPT of vTrain's replica (src/model/gpt_model.py): 4h GeLU MLP with
biases, learned positions, tied embeddings, GPT-2 vocabulary 50,257, dropout 0.1, fp16.

Usage: python3 tools/vtrain_rows.py   (from the repository root)
"""
import csv
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "tests/data/validation/vtrain")
OUT = os.path.join(ROOT, "tests/data/validation/vtrain_rest.csv")
HEADER = ["row_id", "source_id", "source", "source_locator", "model", "gpu_type", "num_gpus", "framework", "precision",
          "derived_step_time_s", "derived_from", "meas_memory_gb_per_gpu", "memory_definition", "parsim_args",
          "parsim_model_json", "confidence", "notes"]
FLAGS = ("--recompute full --precision fp16 --stack megatron-legacy --attention unfused --no-sp --no-tp-comm-overlap "
         "--no-overlap-grad-reduce")
FRAMEWORK = "Megatron-DeepSpeed (legacy Megatron GPT model), per vTrain data/README.md"


def model_json(layers, hidden, heads, seq):
    return json.dumps({"name": f"GPT {layers}x{hidden} (vTrain)", "layers": layers, "hidden": hidden, "heads": heads,
                       "kv_heads": heads, "ffn_hidden": 4 * hidden, "vocab": 50257, "seq_len": seq,
                       "activation": "gelu", "bias": True, "tied_embeddings": True, "norm": "layernorm",
                       "position": "learned", "dropout": True})


def main():
    out = []
    with open(os.path.join(SRC, "ground_truth_single.csv"), newline="") as f:
        rows = list(csv.reader(f))[1:]
    for line, r in enumerate(rows, start=2):
        g, gbs, mbs, h, heads, layers, seq, tp, dp, pp, ms = r
        if g == "8" and pp == "1" and layers == "24":
            continue  # in small_models_a100.csv (S56, cross-validated)
        args = (f"--plan tp{tp}pp{pp}dp{dp} --gpu a100-80gb --gpus-per-node 8 --seq {seq} --gbs {gbs} --mbs {mbs} "
                + FLAGS)
        out.append(["", "S56", "vTrain single-node ground truth (Megatron-DeepSpeed, A100)",
                    f"github.com/VIA-Research/vTrain data/ground_truth_single.csv @f8dda8473a, line {line}",
                    f"GPT {layers}x{h}", "A100 (vTrain 'A100')", g, FRAMEWORK, "fp16", f"{float(ms) / 1000:.6f}",
                    "iteration time (ms) / 1000", "", "", args, model_json(int(layers), int(h), int(heads), int(seq)),
                    "medium", "not cross-validated (tools/vtrain_rows.py)"])
    with open(os.path.join(SRC, "ground_truth_multi.csv"), newline="") as f:
        rows = list(csv.reader(f))[1:]
    for line, r in enumerate(rows, start=2):
        _, g, gbs, mbs, h, heads, layers, seq, tp, dp, pp, ms = r
        args = (f"--plan tp{tp}pp{pp}dp{dp} --gpu examples/hardware/vtrain-a100.json --seq {seq} --gbs {gbs} "
                f"--mbs {mbs} " + FLAGS)
        out.append(["", "S57", "vTrain multi-node ground truth (Megatron-DeepSpeed, A100, 64-512 GPUs)",
                    f"github.com/VIA-Research/vTrain data/ground_truth_multi.csv @f8dda8473a, line {line}",
                    f"GPT {layers}x{h}", "A100 (vTrain 'A100'; network: examples/hardware/vtrain-a100.json — "
                    "vTrain's configs state inter_node_bandwidth 800, which its src/config.py gives in Gbps per node: "
                    "4 x HDR 200 Gb/s, not DGX A100's 8; intra_node_bandwidth 150 GB/s, the NVSwitch fabric kept)", g,
                    FRAMEWORK, "fp16", f"{float(ms) / 1000:.6f}", "iteration time (ms) / 1000", "", "", args,
                    model_json(int(layers), int(h), int(heads), int(seq)), "medium",
                    "not cross-validated (tools/vtrain_rows.py)"])
    for i, r in enumerate(out, start=1):
        r[0] = f"W{i:04d}"
    with open(OUT, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        w.writerows(out)
    print(f"{len(out)} rows -> {OUT}")


if __name__ == "__main__":
    main()
