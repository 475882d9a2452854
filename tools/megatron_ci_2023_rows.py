#!/usr/bin/env python3
"""Rows of tests/data/validation/megatron_ci_2023.csv (source S54) from a clone of NVIDIA/Megatron-LM.

Usage: tools/megatron_ci_2023_rows.py MEGATRON_GIT_DIR > tests/data/validation/megatron_ci_2023.csv

Source: the golden values of Megatron-LM's Selene CI before it moved to JET, tests/functional_tests/test_results/gpt3/
*.json read at commit 88ddc36ec7 (2024-01-26). Each file's 'iteration_timing_avg' is what
tests/functional_tests/python_test_utils/get_test_results_from_tensorboard_logs.py wrote: the mean of the TensorBoard
'iteration-time' values of the last two thirds of the 50 logged steps (the first third is left out as warm-up);
Megatron's 'iteration-time' is the interval time (timers('interval-time'), a barrier and a synchronize at each end)
divided by the iterations in the log interval (1 here). Configuration: .gitlab-ci.yml at the same commit (the job of
each test: TP_SIZE, PP_SIZE, VP_SIZE, USE_CORE, USE_TE, ADDITIONAL_PARAMS) and
tests/functional_tests/test_scripts/gpt3/pretrain_gpt3_distributed_test.sh (the model and training flags).
Only the standard library; the CSV is written with the csv module.
"""
import csv
import json
import subprocess
import sys

COMMIT = "88ddc36ec7"
SCRIPT = "tests/functional_tests/test_scripts/gpt3/pretrain_gpt3_distributed_test.sh"

# test file stem -> (tp, pp, vp_layers, use_core, use_te, additional params of its .gitlab-ci.yml job)
TESTS = {
    "gpt3_tp1_pp1_1nodes_50steps_dist_optimizer": (1, 1, 0, 0, 0, "--use-distributed-optimizer"),
    "gpt3_tp1_pp1_1nodes_50steps_dist_optimizer_overlap_grad_reduce": (1, 1, 0, 0, 0, "--use-distributed-optimizer --overlap-grad-reduce"),
    "gpt3_tp1_pp1_1nodes_50steps_dist_optimizer_overlap_grad_reduce_param_gather": (1, 1, 0, 0, 0, "--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather"),
    "gpt3_tp1_pp1_1nodes_50steps_overlap_grad_reduce": (1, 1, 0, 0, 0, "--overlap-grad-reduce"),
    "gpt3_tp1_pp2_1nodes_50steps": (1, 2, 0, 0, 0, ""),
    "gpt3_tp1_pp4_1nodes_50steps": (1, 4, 0, 0, 0, ""),
    "gpt3_tp1_pp4_1nodes_50steps_overlap_grad_reduce": (1, 4, 0, 0, 0, "--overlap-grad-reduce"),
    "gpt3_tp1_pp4_interleaved_1nodes_50steps": (1, 4, 1, 0, 0, ""),
    "gpt3_tp1_pp4_interleaved_1nodes_50steps_overlap_grad_reduce": (1, 4, 1, 0, 0, "--overlap-grad-reduce"),
    "gpt3_tp1_pp4_interleaved_1nodes_50steps_dist_optimizer_overlap_grad_reduce": (1, 4, 1, 0, 0, "--use-distributed-optimizer --overlap-grad-reduce"),
    "gpt3_tp1_pp4_interleaved_1nodes_50steps_dist_optimizer_overlap_grad_reduce_param_gather": (1, 4, 1, 0, 0, "--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather"),
    "gpt3_tp2_pp2_1nodes_50steps": (2, 2, 0, 0, 0, ""),
    "gpt3_tp2_pp2_1nodes_50steps_overlap_grad_reduce": (2, 2, 0, 0, 0, "--overlap-grad-reduce"),
    "gpt3_tp4_pp1_1nodes_50steps": (4, 1, 0, 0, 0, ""),
    "gpt3_tp4_pp1_1nodes_50steps_overlap_grad_reduce": (4, 1, 0, 0, 0, "--overlap-grad-reduce"),
    "gpt3_tp4_pp1_1nodes_50steps_dist_optimizer_overlap_grad_reduce": (4, 1, 0, 0, 0, "--use-distributed-optimizer --overlap-grad-reduce"),
    "gpt3_tp4_pp1_1nodes_50steps_dist_optimizer_overlap_grad_reduce_param_gather": (4, 1, 0, 0, 0, "--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather"),
    "gpt3_tp1_pp2_1nodes_50steps_core_enabled": (1, 2, 0, 1, 0, ""),
    "gpt3_tp1_pp2_1nodes_50steps_core_enabled_rope_embeddings": (1, 2, 0, 1, 0, "--position-embedding-type rope"),
    "gpt3_tp1_pp4_1nodes_50steps_core_enabled": (1, 4, 0, 1, 0, ""),
    "gpt3_tp1_pp4_1nodes_50steps_core_enabled_disable_bias_linear": (1, 4, 0, 1, 0, "--disable-bias-linear"),
    "gpt3_tp1_pp4_1nodes_50steps_core_enabled_swiglu": (1, 4, 0, 1, 0, "--swiglu"),
    "gpt3_tp1_pp4_1nodes_50steps_core_enabled_untie_embeddings_and_outputs": (1, 4, 0, 1, 0, "--untie-embeddings-and-output-weights"),
    "gpt3_tp1_pp4_interleaved_1nodes_50steps_core_enabled": (1, 4, 1, 1, 0, ""),
    "gpt3_tp2_pp2_1nodes_50steps_core_enabled": (2, 2, 0, 1, 0, ""),
    "gpt3_tp4_pp1_1nodes_50steps_core_enabled": (4, 1, 0, 1, 0, ""),
    "gpt3_tp2_pp2_1nodes_50steps_te_enabled": (2, 2, 0, 0, 1, ""),
}
# Same parsim-relevant configuration as a row above (tp1: sequence parallelism changes nothing): listed in its notes.
MERGED = {"gpt3_tp1_pp4_1nodes_50steps_core_enabled": ["gpt3_tp1_pp4_1nodes_50steps_core_enabled_sequence_parallel"]}

LAYERS, HIDDEN, HEADS, SEQ, MBS, GBS, GPUS = 12, 512, 8, 1024, 4, 32, 8


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def timing(repo, stem):
    path = f"tests/functional_tests/test_results/gpt3/{stem}.json"
    value = json.loads(git(repo, "show", f"{COMMIT}:{path}"))["iteration_timing_avg"]
    last = git(repo, "log", "-1", "--format=%h %ad", "--date=short", COMMIT, "--", path).split()
    return path, value, last


def main():
    repo = sys.argv[1]
    cols = ["row_id", "source_id", "source", "source_locator", "model", "gpu_type", "num_gpus", "framework", "precision",
            "derived_step_time_s", "derived_from", "meas_memory_gb_per_gpu", "memory_definition", "parsim_args",
            "parsim_model_json", "confidence", "notes"]
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(cols)
    for i, (stem, (tp, pp, vp, core, te, extra)) in enumerate(TESTS.items(), start=1):
        path, t, (commit, date) = timing(repo, stem)
        dp = GPUS // (tp * pp)
        legacy = not core and not te
        prec = "fp16" if legacy else "bf16"
        zero = "--use-distributed-optimizer" in extra
        ogr = "--overlap-grad-reduce" in extra
        opg = "--overlap-param-gather" in extra
        plan = f"tp{tp}pp{pp}dp{dp}" + (f"vpp{LAYERS // (pp * vp)}" if vp else "") + ("zero1" if zero else "")
        args = [f"--plan {plan}", "--gpu a100-80gb", f"--seq {SEQ}", f"--gbs {GBS}", f"--mbs {MBS}", "--recompute none",
                f"--precision {prec}"]
        if legacy:
            args.append("--stack megatron-legacy")
        args.append("--no-tp-comm-overlap")
        if not ogr and not legacy:
            args.append("--no-overlap-grad-reduce")
        if zero and not opg and not legacy:
            args.append("--no-overlap-param-gather")
        if not te:
            args.append("--attention unfused")
        if tp > 1:
            args.append("--no-sp")
        args += ["--log-interval 1", "--log-num-zeros-in-grad", "--log-params-norm"]
        swiglu = "--swiglu" in extra
        model = {
            "name": f"GPT 12x512 (Megatron-LM Selene CI 2023 {stem})", "layers": LAYERS, "hidden": HIDDEN,
            "heads": HEADS, "kv_heads": HEADS, "ffn_hidden": 1344 if swiglu else 4 * HIDDEN, "vocab": 50257,
            "seq_len": SEQ, "activation": "swiglu" if swiglu else "gelu", "bias": "--disable-bias-linear" not in extra,
            "tied_embeddings": "--untie-embeddings-and-output-weights" not in extra, "norm": "layernorm",
            "position": "rope" if "rope" in extra else "learned", "dropout": True}
        impl = ("legacy Megatron-LM model (megatron/model, ParallelTransformer, transformer-impl local)" if legacy else
                "Megatron-Core GPTModel (--use-mcore-models), " +
                ("transformer-impl transformer_engine" if te else "local spec (transformer-impl local)"))
        image = "nvcr.io/nvidia/pytorch:23.07-py3" if te else "nvcr.io/nvidia/pytorch:23.04-py3"
        notes = (f"Host-bound regime (a CI correctness run of a 12 x 512 GPT, not a tuned benchmark). CI job flags: "
                 f"{extra or '(none beyond the script)'}; script flags: --log-params-norm --log-num-zeros-in-grad "
                 f"--log-validation-ppl-to-tensorboard --log-timers-to-tensorboard --timing-log-level 2 --log-interval 1 "
                 f"--no-gradient-accumulation-fusion --no-bias-swiglu-fusion --no-rope-fusion"
                 f"{' --apply-query-key-layer-scaling' if legacy else ''}; CUDA_DEVICE_MAX_CONNECTIONS=1. "
                 f"DP = 8 / (TP x PP) = {dp}, {GBS // (MBS * dp)} micro-batch(es) per step. Dropout 0.1 (Megatron "
                 f"default), GPT-2 BPE vocabulary 50,257. Not expressed: --timing-log-level 2 (torch.cuda.synchronize() at "
                 f"start and stop of the forward-compute and backward-compute timers of every micro-batch, "
                 f"megatron/core/pipeline_parallel/schedules.py and megatron/timers.py @{COMMIT}), the per-step "
                 f"parameter-norm and zero-count reductions beyond parsim's flags, the per-iteration timer barrier.")
        if legacy and (ogr or opg):
            notes += (" Not expressed: --overlap-grad-reduce / --overlap-param-gather with the legacy model (Megatron-LM's "
                      "megatron/core/distributed DDP of Sept 2023 serves both model paths; parsim's megatron-legacy "
                      "stack never overlaps the gradient reduction or the parameter gather).")
        for other in MERGED.get(stem, []):
            _, t2, (c2, d2) = timing(repo, other)
            notes += f" Test {other} (same parsim configuration at tp1) measured {t2:.4f} s (file @{c2}, {d2})."
        locator = (f"github.com/NVIDIA/Megatron-LM {path} @{COMMIT} (value last changed {commit} {date}), key "
                   f"'iteration_timing_avg'; configuration: .gitlab-ci.yml @{COMMIT} (job of this test) and {SCRIPT} "
                   f"@{COMMIT}; container {image} on Selene (DGX A100 80GB, 8 GPUs per node, 1 node)")
        w.writerow([
            f"L{i:04d}", "S54",
            "NVIDIA Megatron-LM Selene CI golden values of 2023-24 (per-test 'iteration_timing_avg' recorded by NVIDIA's "
            "CI on DGX A100 nodes of Selene before the move to JET)",
            locator, "GPT 12x512", "A100-SXM4-80GB (Selene: DGX A100 80GB, 8 per node)", GPUS,
            f"Megatron-LM pretrain_gpt.py, {impl}", prec, f"{t:.4f}",
            "mean of the last two thirds of the 50 logged 'iteration-time' values "
            "(tests/functional_tests/python_test_utils/get_test_results_from_tensorboard_logs.py @" + COMMIT + ")",
            "", "", " ".join(args), json.dumps(model), "high", notes])


if __name__ == "__main__":
    main()
