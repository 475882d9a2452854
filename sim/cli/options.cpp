#include "sim/cli/options.hpp"

#include "sim/core/error.hpp"
#include "sim/core/text.hpp"

#include <cmath>

namespace parsim::cli {

void add_scenario_flags(CLI::App* app, ScenarioFlags& f, bool with_plan) {
  app->add_option("--model", f.model, "built-in model name or a model JSON / Hugging Face config.json path")->required();
  if (with_plan) app->add_option("--plan", f.plan, "plan, e.g. tp8pp2dp4, dp64fsdp, tp4pp8dp16vpp5zero1")->required();
  app->add_option("--gpu", f.gpu, "GPU/node preset (a100-40gb, a100-80gb, h100, h200, mi300x, b200) or hardware JSON");
  app->add_option("--gpus-per-node", f.gpus_per_node, "GPUs per node (NVLink/xGMI domain); default from the preset");
  app->add_option("--seq", f.seq, "sequence length in tokens (default: the model's seq_len)");
  app->add_option("--gbs", f.gbs, "global batch in sequences (default ≈ 4M tokens, a multiple of dp × mbs)");
  app->add_option("--mbs", f.mbs, "micro-batch size in sequences (default 1)");
  app->add_option("--recompute", f.recompute, "none | selective | full (default none)");
  app->add_flag("--sp", f.sp, "Megatron sequence parallelism on the TP group");
  app->add_option("--precision", f.precision, "bf16 | fp16 | fp8 | fp32 (default bf16)");
  app->add_option("--schedule", f.schedule, "gpipe | 1f1b | interleaved (default 1f1b; interleaved when vpp > 1)");
  app->add_option("--stack", f.stack,
                  "auto | megatron | pytorch: software stack whose kernels and defaults apply (auto: zero0/zero1 → "
                  "Megatron-Core with Transformer Engine, zero2/zero3/fsdp/hsdp → PyTorch-native)");
  app->add_option("--bucket-mb", f.bucket_mb,
                  "gradient bucket in MB (default: Megatron max(40M, 1M·dp) elements; PyTorch DDP 25 MB)");
  app->add_flag("--no-overlap-grad-reduce", f.no_overlap_grad_reduce,
                "reduce gradients after the backward instead of overlapping it (Megatron --overlap-grad-reduce off)");
  app->add_flag("--no-overlap-param-gather", f.no_overlap_param_gather,
                "ZeRO-1: all-gather parameters after the optimizer instead of during the next forward");
  app->add_flag("--tp-comm-overlap", f.tp_comm_overlap,
                "overlap TP communication with GEMMs (TE userbuffers; default on for the Megatron stack with --sp)");
  app->add_flag("--no-tp-comm-overlap", f.no_tp_comm_overlap, "never overlap TP communication with GEMMs");
  app->add_option("--attention", f.attention,
                  "flash | unfused: fused flash-attention kernel (default) or the pre-2022 QKᵀ/softmax/AV kernels that "
                  "keep the s² scores in memory");
  app->add_flag("--fsdp-no-sync", f.fsdp_no_sync,
                "FSDP/ZeRO-3: reduce-scatter gradients only on the last micro-batch (unsharded grads accumulate)");
}

ScenarioArgs to_args(const ScenarioFlags& f) {
  ScenarioArgs a;
  a.model = f.model;
  a.plan = f.plan;
  a.gpu = f.gpu;
  if (!f.gpus_per_node.empty()) {
    auto v = parse_positive_int(f.gpus_per_node, "--gpus-per-node");
    if (v > 1024) throw InputError("--gpus-per-node " + f.gpus_per_node + " is too large (at most 1024)");
    a.gpus_per_node = static_cast<int>(v);
  }
  if (!f.seq.empty()) a.seq = parse_positive_int(f.seq, "--seq");
  if (!f.gbs.empty()) a.gbs = parse_positive_int(f.gbs, "--gbs");
  a.mbs = parse_positive_int(f.mbs, "--mbs");
  a.recompute = f.recompute;
  a.precision = f.precision;
  parse_recompute(f.recompute);
  parse_precision(f.precision);
  if (!f.schedule.empty()) {
    a.schedule = f.schedule;
    a.schedule_given = true;
  }
  a.sp = f.sp;
  a.bucket_mb = f.bucket_mb.empty() ? 0.0 : parse_positive_number(f.bucket_mb, "--bucket-mb (MB)");
  a.overlap_grad_reduce = !f.no_overlap_grad_reduce;
  a.overlap_param_gather = !f.no_overlap_param_gather;
  if (f.tp_comm_overlap && f.no_tp_comm_overlap)
    throw InputError("--tp-comm-overlap and --no-tp-comm-overlap contradict each other: give one");
  a.tp_comm_overlap = f.tp_comm_overlap ? 1 : f.no_tp_comm_overlap ? 0 : -1;
  a.stack = check_choice("--stack", f.stack, {"auto", "megatron", "pytorch"});
  a.fsdp_no_sync = f.fsdp_no_sync;
  a.attention = check_choice("--attention", f.attention, {"flash", "unfused"});
  return a;
}

void add_train_flags(CLI::App* app, TrainFlags& f) {
  app->add_option("--tokens", f.tokens, "training-run size in tokens (2e12, 300B, 2T): adds time-to-train");
  app->add_option("--price-per-gpu-hour", f.price, "dollars per GPU-hour: adds the run's cost (with --tokens)");
  app->add_option("--goodput", f.goodput,
                  "fraction of wall time spent training after checkpoints, restarts and failures (default 1)");
}

TrainValues to_train_values(const TrainFlags& f) {
  TrainValues v;
  v.goodput = parse_positive_number(f.goodput, "--goodput");
  if (v.goodput > 1) throw InputError("--goodput must be a fraction in (0, 1], got '" + f.goodput + "'");
  if (!f.price.empty()) {
    v.price = parse_positive_number(f.price, "--price-per-gpu-hour");
    if (f.tokens.empty()) throw InputError("--price-per-gpu-hour needs --tokens (the run's size) to give a cost");
  }
  if (!f.tokens.empty()) {
    v.tokens = parse_token_count(f.tokens, "--tokens");
    v.enabled = true;
  }
  return v;
}

std::string check_choice(const std::string& flag, const std::string& value, std::initializer_list<const char*> valid) {
  std::string l = to_lower(value), list;
  for (const char* c : valid) {
    if (l == c) return l;
    list += (list.empty() ? "" : ", ") + std::string(c);
  }
  throw InputError(flag + " '" + value + "' is not valid (choose " + list + ")");
}

}  // namespace parsim::cli
