// parsim plans/ — the scenario option table, the resolution of "auto" settings and the scenario as a whole.
#include "plans/scenario.hpp"

#include "sim/core/error.hpp"
#include "sim/core/text.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace parsim {

// Random routing (Megatron-Core moe_router_force_load_balancing: moe_utils.py RandomSTE replaces the router logits by
// normal_() samples, so each token picks k distinct experts uniformly). Per micro-batch the ep ranks' T tokens each
// (T_g = ep·T over the EP group) send their pairs; the pairs one rank's E/ep experts receive are a sum of T_g
// independent hypergeometric draws (k of E, E/ep marked): mean μ = T_g·k/ep, variance
// σ² = T_g·k·(1/ep)·(1 − 1/ep)·(E − k)/(E − 1). Every layer waits for its busiest rank (the dispatch and combine
// exchanges), whose load is μ plus the expected maximum of ep standard normals times σ (Blom's approximation,
// hardware/compute_cost.cpp expected_max_std_normal): imbalance = 1 + z(ep)·σ/μ
// = 1 + z(ep)·√(ep·(1 − 1/ep)·(E − k)/(E − 1)/(T_g·k)). T: the tokens entering an MoE layer on a rank, b·s/cp, the SP
// shard b·s/(cp·tp) under sequence parallelism. E.g. GPT-OSS-120B on EP 64 at 16,384 tokens per rank: 1.0092.
double forced_balance_imbalance(const Plan& p, const ModelSpec& m, const TrainingConfig& t) {
  if (!m.is_moe() || p.ep <= 1) return 1.0;
  const double ep = p.ep, E = m.experts, k = m.experts_per_token;
  const double tokens = static_cast<double>(t.mbs) * static_cast<double>(t.seq) / std::max(1, p.cp) /
                        (t.sp ? std::max(1, p.tp) : 1);
  // σ²/μ² with T_g = ep·T: the ep of T_g cancels the ep of the variance's (1/ep)·(1 − 1/ep) over μ² = (T_g·k/ep)².
  const double var_over_mean2 = (1 - 1 / ep) * (E > 1 ? (E - k) / (E - 1) : 0.0) / (tokens * k);
  return 1.0 + expected_max_std_normal(p.ep) * std::sqrt(std::max(0.0, var_over_mean2));
}

// A hybrid pattern's '|' segments as Megatron-Core's pipeline layout (hybrid_layer_allocation.py
// select_pipeline_segment: chunk v·pp + p takes segment v·pp + p), the embedding on the first chunk and the MTP layers
// and the loss on the last: the layout string of --pipeline-model-parallel-layout.
namespace {
std::string hybrid_segments_layout(const ModelSpec& m) {
  std::string out;
  const std::size_t n = m.pipeline_segments.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) out += '|';
    if (i == 0) out += 'E';
    if (m.pipeline_segments[i] > 0) out += "t*" + std::to_string(m.pipeline_segments[i]);
    if (i + 1 == n) {
      if (m.mtp_layers > 0) out += "m*" + std::to_string(m.mtp_layers);
      out += 'L';
    }
  }
  return out;
}
}  // namespace

TrainingConfig resolve_training(const Plan& p, const ModelSpec& m, TrainingConfig t) {
  // A hybrid pattern with '|' places its layers itself when it names one segment per pipeline chunk and no other
  // split option is given (plan_error says why otherwise).
  if (!m.pipeline_segments.empty() && !t.split.any() &&
      static_cast<std::int64_t>(m.pipeline_segments.size()) == std::int64_t{p.pp} * p.vpp)
    t.split.layout = intern_pipeline_layout(hybrid_segments_layout(m));
  if (t.seq <= 0) t.seq = m.seq_len;
  if (t.gbs <= 0) t.gbs = default_gbs(t.seq, p.dp, t.mbs);
  if (t.schedule == Schedule::Auto) t.schedule = p.vpp > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
  if (t.optimizer_sync == OptimizerSync::Auto) t.optimizer_sync = schedule_traits(t.schedule).optimizer_sync;
  if (t.stack == Stack::Auto) t.stack = sharding_traits(p.sharding).default_stack;
  const bool legacy = t.stack == Stack::MegatronLegacy;
  if (t.sp_auto) {
    // Megatron-Core recipes pair TP with sequence parallelism (NeMo 2 llm recipes and Megatron-Bridge
    // recipes/llama/llama3.py: sequence_parallel=True whenever tensor_model_parallel_size > 1); Megatron-LM requires
    // the sequence length to divide by tp for it (arguments.py), so SP stays off where it cannot apply.
    t.sp = t.stack == Stack::Megatron && p.tp > 1 && (t.seq / std::max(1, p.cp)) % p.tp == 0;
    t.sp_auto = false;
  }
  if (t.attention_auto) {
    t.flash_attention = !legacy;  // Megatron-LM ≤ 2022 / Megatron-DeepSpeed: fused scale-mask-softmax, s² in HBM
    t.attention_auto = false;
  }
  if (t.overlap_auto) {
    if (legacy) t.overlap_grad_reduce = t.overlap_param_gather = false;  // LocalDDP / DeepSpeed pipe: after backward
    t.overlap_auto = false;
  }
  if (t.te_cross_entropy && t.cross_entropy_fusion)
    throw InputError("--cross-entropy-fusion-impl te with --cross-entropy-fusion: each names the loss kernel "
                     "(Transformer Engine's parallel cross entropy, or llm.c's fused classifier); give one of them");
  // --fp8-params acts on the Megatron stack only (Transformer Engine modules; memory.cpp), so a sweep over schemes
  // whose default stack differs is not refused.
  if (t.eager_loss && !t.compile)
    throw InputError("--eager-loss says the loss is left out of --compile; without --compile every op is eager already "
                     "(drop --eager-loss, or add --compile)");
  if (t.fp8_attention && t.precision != Precision::FP8)
    throw InputError("--fp8-attention needs --precision fp8 (Transformer Engine's fp8 dot-product attention runs "
                     "inside an fp8 recipe), got --precision " + to_string(t.precision));
  if (t.fp8_params && t.precision != Precision::FP8)
    throw InputError("--fp8-params needs --precision fp8 (Transformer Engine fp8 weights), got --precision " +
                     to_string(t.precision));
  if (t.bf16_optimizer && t.precision != Precision::BF16 && t.precision != Precision::FP8)
    throw InputError("--bf16-optimizer needs --precision bf16 or fp8 (the bf16 weights are the master copy), got "
                     "--precision " + to_string(t.precision));
  if (t.bf16_optimizer && t.bf16_moments)
    throw InputError("--adam-moments bf16 with --bf16-optimizer: --bf16-optimizer already keeps bf16 moments (with the "
                     "bf16 weights as master); give one of them");
  if (t.moe_force_balance) {
    const double forced = forced_balance_imbalance(p, m, t);
    // A stated --moe-imbalance must agree (a predict's JSON settings fed back as a scenario carry both).
    if (t.moe_imbalance_given && std::fabs(t.moe_imbalance - forced) > 1e-6 * forced)
      throw InputError("--moe-imbalance " + option::num_text(t.moe_imbalance) + " with --moe-force-balance, which sets it to " +
                       fmt_num(forced, 6) + " for this plan (random routing); give one of them");
    t.moe_imbalance = forced;
  }
  if (t.log_interval <= 0) t.log_interval = t.stack == Stack::Megatron || legacy ? 100 : 10;  // Megatron-LM --log-interval;
                                                                                      // torchtitan metrics.log_freq
  if (t.tp_comm_overlap_auto) {
    t.tp_comm_overlap = false;  // Megatron-LM default (--tp-comm-overlap opt-in); recipes state it explicitly
    t.tp_comm_overlap_auto = false;
  }
  if (t.bucket_bytes <= 0) {
    const ShardingTraits& sh = sharding_traits(p.sharding);
    if (t.stack == Stack::Megatron)
      t.bucket_bytes = std::max(40e6, 1e6 * static_cast<double>(p.dp) * p.cp) *
                       grad_wire_bytes(p.sharding, t.precision, t.stack, t.grad_reduce_in_fp32);
    else if (legacy)  // DeepSpeed allreduce_bucket_size 5e8 elements (Megatron-LM's LocalDDP reduced its whole
                      // contiguous buffer at once; after the backward either way, so only the latency count differs)
      t.bucket_bytes = 5e8 * grad_wire_bytes(p.sharding, t.precision, t.stack);
    else if (sh.bucket_elements > 0)  // DeepSpeed ZeRO-2: 5e8-element reduce/all-gather buckets (domain-notes §4)
      t.bucket_bytes = sh.bucket_elements * param_wire_bytes(t.precision);
    else
      t.bucket_bytes = 25e6;
  }
  return t;
}

bool is_resolved(const TrainingConfig& t) {
  return t.seq > 0 && t.gbs > 0 && t.schedule != Schedule::Auto && t.optimizer_sync != OptimizerSync::Auto &&
         t.stack != Stack::Auto && !t.tp_comm_overlap_auto && !t.sp_auto && !t.attention_auto && !t.overlap_auto &&
         t.bucket_bytes > 0 && t.log_interval > 0;
}

Scenario resolve_scenario(const ScenarioInput& in) {
  if (in.model.empty()) throw InputError("--model is required (a built-in name or a model JSON / HF config.json path)");
  if (in.plan.empty()) throw InputError("--plan is required (e.g. tp8pp2dp4, dp64fsdp, tp4pp8dp16vpp5zero1)");
  Scenario sc;
  sc.model = resolve_model(in.model);
  sc.hw = resolve_hardware(in.gpu, in.gpus_per_node);
  sc.plan = parse_plan(in.plan);
  sc.train = resolve_training(sc.plan, sc.model, in.train);
  check_training_on_hardware(sc.hw, sc.train);
  apply_framework_collectives(sc.hw, sc.train);
  validate_plan(sc.plan, sc.model, sc.hw, sc.train);
  return sc;
}

void apply_framework_collectives(Hardware& hw, const TrainingConfig& t) {
  if (t.deterministic) hw.comm.algorithms = kAlgoRing;
}

void check_training_on_hardware(const Hardware& hw, const TrainingConfig& t) {
  if (t.attention_cudnn && (hw.gpu.arch == GpuArch::CDNA3 || hw.gpu.arch == GpuArch::CDNA4))
    throw InputError("--attention cudnn needs an NVIDIA GPU (cuDNN's fused attention), got " + hw.gpu.name +
                     "; use --attention flash (the stack's fused kernel)");
}

namespace {

using In = ScenarioInput;
using option::choice;
using option::flag;
using option::integer;
using option::number;
using option::text;

constexpr std::int64_t kMaxCount = std::int64_t{1} << 40;  // sequences/tokens: beyond any real run, inside int64

OptionTable<In> build_table() {
  const unsigned P = kUsePredict, S = kUseSweep, R = kUsePerRow, A = kUseAlways;
  OptionTable<In> t;
  t.push_back(text<In>(
      "model", "--model",
      "built-in model name (llama3-8b, mixtral-8x7b, deepseek-v3, ...: an unknown name lists them all) or a model JSON "
      "/ Hugging Face config.json path",
      "",
      [](In& x, const std::string& v) { x.model = v; },
      [](const In& x) -> std::optional<std::string> {
        if (x.model.empty()) return std::nullopt;
        return x.model;
      },
      P | S | A, true));
  t.push_back(text<In>(
      "plan", "--plan", "plan, e.g. tp8pp2dp4, dp64fsdp, tp4pp8dp16vpp5zero1, tp2pp1dp32ep8", "",
      [](In& x, const std::string& v) { x.plan = v; },
      [](const In& x) -> std::optional<std::string> {
        if (x.plan.empty()) return std::nullopt;
        return x.plan;
      },
      P | R, true));
  t.push_back(text<In>(
      "gpu", "--gpu",
      "GPU/node preset (a100-40gb, a100-80gb, h100, h200, b200, b300, gb200, gb300, mi300x, mi325x, mi355x) or hardware "
      "JSON",
      "h100",
      [](In& x, const std::string& v) { x.gpu = v; }, [](const In& x) -> std::optional<std::string> { return x.gpu; },
      P | S | A));
  t.push_back(integer<In>(
      "gpus_per_node", "--gpus-per-node", "GPUs per node (NVLink/xGMI domain)", "GPUs", "the preset's", 1024,
      [](In& x, std::int64_t v) { x.gpus_per_node = static_cast<int>(v); },
      [](const In& x) -> std::optional<std::int64_t> {
        if (x.gpus_per_node <= 0) return std::nullopt;
        return x.gpus_per_node;
      },
      P | S));
  t.push_back(integer<In>(
      "seq", "--seq", "sequence length", "tokens", "the model's seq_len", kMaxCount,
      [](In& x, std::int64_t v) { x.train.seq = v; },
      [](const In& x) -> std::optional<std::int64_t> {
        if (x.train.seq <= 0) return std::nullopt;
        return x.train.seq;
      },
      P | S | R));
  t.push_back(integer<In>(
      "gbs", "--gbs", "global batch per optimizer step", "sequences",
      "≈ 4M tokens: ⌈4,194,304 / seq⌉, for predict rounded up to a multiple of dp × mbs", kMaxCount,
      [](In& x, std::int64_t v) { x.train.gbs = v; },
      [](const In& x) -> std::optional<std::int64_t> {
        if (x.train.gbs <= 0) return std::nullopt;
        return x.train.gbs;
      },
      P | S | R));
  t.push_back(integer<In>(
      "mbs", "--mbs", "micro-batch size", "sequences", "1", kMaxCount, [](In& x, std::int64_t v) { x.train.mbs = v; },
      [](const In& x) -> std::optional<std::int64_t> { return x.train.mbs; }, P | R));
  t.push_back(choice<In>(
      "recompute", "--recompute",
      "activation recomputation (selective: the attention core only, or Megatron-Core's --recompute-modules; op: "
      "torchtitan's per-op selective checkpointing on the PyTorch stack — every second matmul and the element-wise ops "
      "of each block recomputed, the other matmuls' and the attention's outputs saved)",
      {"none", "selective", "full", "op"}, "none", [](In& x, const std::string& v) { x.train.recompute = parse_recompute(v); },
      [](const In& x) -> std::optional<std::string> { return to_string(x.train.recompute); }, P | R));
  t.push_back(text<In>(
      "recompute_modules", "--recompute-modules",
      "with --recompute selective: the modules recomputed, comma-separated (Megatron-Core --recompute-modules): "
      "core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts",
      "core_attn", [](In& x, const std::string& v) { x.train.recompute_modules = parse_recompute_modules(v); },
      [](const In& x) -> std::optional<std::string> {
        if (x.train.recompute_modules == RecomputeModules{}) return std::nullopt;
        return to_string(x.train.recompute_modules);
      },
      P));
  t.push_back(choice<In>(
      "precision", "--precision", "precision of the matrix multiplies (mixed precision, fp32 master weights)",
      {"bf16", "fp16", "fp8", "fp32"}, "bf16",
      [](In& x, const std::string& v) { x.train.precision = parse_precision(v); },
      [](const In& x) -> std::optional<std::string> { return to_string(x.train.precision); }, P | S | R));
  {
    // A choice whose setter also takes the aliases parse_schedule knows ("interleaved-1f1b").
    std::vector<std::string> names = {"auto"};
    for (const ScheduleTraits& st : all_schedule_traits()) names.emplace_back(st.name);
    auto o = text<In>(
        "schedule", "--schedule",
        "pipeline schedule (interleaved needs vpp > 1, zb-v and dualpipev vpp2; auto: interleaved when vpp > 1, else "
        "1f1b)",
        "auto", [](In& x, const std::string& v) { x.train.schedule = parse_schedule(v); },
        [](const In& x) -> std::optional<std::string> { return to_string(x.train.schedule); }, P | R);
    o.kind = OptionKind::Choice;
    o.choices = names;
    t.push_back(std::move(o));
  }
  t.push_back(choice<In>(
      "optimizer_sync", "--optimizer-sync",
      "how a step ends: barrier (global gradient-norm / inf-NaN checks before the next step) or post-validation (each "
      "stage steps at once, checks afterwards: Qi et al. 2024 §4); auto: post-validation for the zero-bubble "
      "schedules, else barrier",
      {"auto", "barrier", "post-validation"}, "auto",
      [](In& x, const std::string& v) { x.train.optimizer_sync = parse_optimizer_sync(v); },
      [](const In& x) -> std::optional<std::string> { return to_string(x.train.optimizer_sync); }, P | S));
  t.push_back(flag<In>(
      "sp", "--sp",
      "Megatron sequence parallelism on the TP group (default: on for the Megatron stack with tp > 1, as Megatron-Core "
      "/ NeMo recipes run it)",
      [](In& x) { x.train.sp_auto = false, x.train.sp = true; },
      [](const In& x) { return !x.train.sp_auto && x.train.sp; }, P | R));
  t.push_back(flag<In>(
      "no_sp", "--no-sp", "no sequence parallelism (plain tensor parallelism: all-reduces, full activations per rank)",
      [](In& x) { x.train.sp_auto = false, x.train.sp = false; },
      [](const In& x) { return !x.train.sp_auto && !x.train.sp; }, P | R));
  t.push_back(choice<In>(
      "stack", "--stack",
      "software stack whose kernels and defaults apply (auto: zero0/zero1 → Megatron-Core with Transformer Engine, "
      "zero2/zero3/fsdp/hsdp → PyTorch-native; megatron-legacy: Megatron-LM 2021–22 / Megatron-DeepSpeed)",
      {"auto", "megatron", "megatron-legacy", "pytorch"}, "auto", [](In& x, const std::string& v) { x.train.stack = parse_stack(v); },
      [](const In& x) -> std::optional<std::string> { return to_string(x.train.stack); }, P | S | R));
  t.push_back(number<In>(
      "bucket_mb", "--bucket-mb", "gradient bucket size (1 MB = 1e6 bytes)", "MB",
      "the stack's: Megatron max(40M, 1M·dp·cp) elements, DeepSpeed ZeRO-2 5e8 elements, PyTorch DDP 25 MB",
      [](In& x, double v) {
        // 1 kB to 1 PB: below, every gradient splits into absurdly many latency-bound buckets (1e-300 overflowed the
        // simulated clock); above, no model has that many gradient bytes (1e300 overflowed a cast). Issue 12.
        if (!(v >= 1e-3 && v <= 1e9))
          throw InputError("--bucket-mb " + fmt_num(v) + " is out of range (1e-3 to 1e9 MB, i.e. 1 kB to 1 PB)");
        x.train.bucket_bytes = v * 1e6;
      },
      [](const In& x) -> std::optional<double> {
        if (x.train.bucket_bytes <= 0) return std::nullopt;
        return x.train.bucket_bytes / 1e6;
      },
      P | S));
  t.push_back(flag<In>(
      "no_overlap_grad_reduce", "--no-overlap-grad-reduce",
      "reduce gradients after the backward instead of overlapping it (Megatron --overlap-grad-reduce off)",
      [](In& x) { x.train.overlap_grad_reduce = false; }, [](const In& x) { return !x.train.overlap_grad_reduce; },
      P | S));
  t.push_back(flag<In>(
      "no_grad_reduce_in_fp32", "--no-grad-reduce-in-fp32",
      "Megatron: keep and reduce gradients in bf16 instead of fp32 main grads (grad_reduce_in_fp32=False, as NeMo / "
      "Megatron-Bridge performance recipes set it): 2 B less per parameter held and on the wire",
      [](In& x) { x.train.grad_reduce_in_fp32 = false; }, [](const In& x) { return !x.train.grad_reduce_in_fp32; },
      P | S));
  t.push_back(flag<In>(
      "fp8_params", "--fp8-params",
      "with --precision fp8 (Megatron stack; no effect on others): Transformer Engine fp8 primary weights (NeMo fp8_params, Megatron "
      "--fp8-param-gather): each layer weight held once in fp8 (+ its transpose on Hopper) instead of bf16 + an fp8 cache",
      [](In& x) { x.train.fp8_params = true; }, [](const In& x) { return x.train.fp8_params; }, P | S));
  t.push_back(flag<In>(
      "fp8_attention", "--fp8-attention",
      "with --precision fp8 (Megatron stack; no effect on others): the attention core as cuDNN's fp8 fused kernel "
      "(Megatron-Core TransformerConfig.fp8_dot_product_attention, Transformer Engine fp8_dpa), at cuDNN's measured "
      "block-scaled fp8 speed against bf16 by head size; a sliding window's backward over the whole causal triangle",
      [](In& x) { x.train.fp8_attention = true; }, [](const In& x) { return x.train.fp8_attention; }, P | S));
  t.push_back(flag<In>(
      "bf16_optimizer", "--bf16-optimizer",
      "Adam moments in bf16 with the bf16 weights as master copy (NeMo optim.dtype: bf16, Apex DistributedFusedAdam): 4 B "
      "of optimizer state per parameter instead of 12 (bf16/fp8 precision)",
      [](In& x) { x.train.bf16_optimizer = true; }, [](const In& x) { return x.train.bf16_optimizer; }, P | S));
  t.push_back(choice<In>(
      "adam_moments", "--adam-moments",
      "dtype of Adam's two moments (exp_avg, exp_avg_sq) beside the fp32 master weights: bf16 is Megatron-Core's "
      "precision-aware optimizer (--use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16, "
      "Transformer Engine's FusedAdam; Megatron-Bridge's DeepSeek-V3 recipes): 8 B of optimizer state per parameter "
      "instead of 12",
      {"fp32", "bf16"}, "fp32", [](In& x, const std::string& v) { x.train.bf16_moments = v == "bf16"; },
      [](const In& x) -> std::optional<std::string> {
        if (!x.train.bf16_moments) return std::nullopt;
        return std::string("bf16");
      },
      P | S));
  t.push_back(flag<In>(
      "no_overlap_param_gather", "--no-overlap-param-gather",
      "ZeRO-1: all-gather parameters after the optimizer instead of during the next forward",
      [](In& x) { x.train.overlap_param_gather = false; }, [](const In& x) { return !x.train.overlap_param_gather; },
      P | S));
  t.push_back(flag<In>(
      "tp_comm_overlap", "--tp-comm-overlap",
      "overlap TP communication with GEMMs (TE userbuffers, as recipes that set tp_comm_overlap do; off by default as "
      "in Megatron-LM; never for a TP group that spans nodes)",
      [](In& x) { x.train.tp_comm_overlap_auto = false, x.train.tp_comm_overlap = true; },
      [](const In& x) { return !x.train.tp_comm_overlap_auto && x.train.tp_comm_overlap; }, P | S));
  t.push_back(flag<In>(
      "no_tp_comm_overlap", "--no-tp-comm-overlap", "never overlap TP communication with GEMMs",
      [](In& x) { x.train.tp_comm_overlap_auto = false, x.train.tp_comm_overlap = false; },
      [](const In& x) { return !x.train.tp_comm_overlap_auto && !x.train.tp_comm_overlap; }, P | S));
  t.push_back(choice<In>(
      "attention", "--attention",
      "the stack's fused flash-attention kernel (Megatron: Transformer Engine's cuDNN FusedAttention; PyTorch: "
      "scaled_dot_product_attention's FlashAttention-2 backend), FlashAttention-1 (flash1: PyTorch 2.0-2.1 "
      "scaled_dot_product_attention, half FlashAttention-2's speed), cuDNN's fused attention on any stack (cudnn: "
      "PyTorch SDPA's cuDNN backend, its default on Hopper and Blackwell from PyTorch 2.9 with cuDNN > 9.15, opt-in "
      "before; NVIDIA GPUs), or the pre-2022 QKᵀ/softmax/AV kernels that keep the s² scores in memory",
      {"flash", "flash1", "cudnn", "unfused"}, "flash (megatron-legacy: unfused)",
      [](In& x, const std::string& v) {
        x.train.attention_auto = false, x.train.flash_attention = v != "unfused", x.train.flash_v1 = v == "flash1";
        x.train.attention_cudnn = v == "cudnn";
      },
      [](const In& x) -> std::optional<std::string> {
        if (x.train.attention_auto) return std::nullopt;
        if (!x.train.flash_attention) return "unfused";
        return x.train.flash_v1 ? "flash1" : x.train.attention_cudnn ? "cudnn" : "flash";
      },
      P | S));
  t.push_back(flag<In>(
      "fused_residual_norm", "--fused-residual-norm",
      "each residual add in one kernel with the norm that follows it (llm.c fused_residual_forward5, Liger's fused add "
      "+ RMSNorm, torch.compile): the norm's separate read of the sum is gone",
      [](In& x) { x.train.fused_residual_norm = true; }, [](const In& x) { return x.train.fused_residual_norm; },
      P | S));
  t.push_back(flag<In>(
      "activation_epilogue", "--activation-epilogue",
      "a plain (ungated) FFN activation computed in FC1's GEMM epilogue, its gradient in FC2's dgrad epilogue (cuBLASLt "
      "GELU_AUX / DGELU epilogues, as llm.c runs them): no separate activation kernel reading the pre-activation",
      [](In& x) { x.train.activation_epilogue = true; }, [](const In& x) { return x.train.activation_epilogue; },
      P | S));
  t.push_back(flag<In>(
      "cross_entropy_fusion", "--cross-entropy-fusion",
      "the LM head's softmax, cross-entropy and logit gradient as one kernel over the 16-bit logits (llm.c "
      "fused_classifier): 6 B per logit instead of 28 B through fp32 logits, and no fp32 logits held",
      [](In& x) { x.train.cross_entropy_fusion = true; }, [](const In& x) { return x.train.cross_entropy_fusion; },
      P | S));
  t.push_back(choice<In>(
      "cross_entropy_fusion_impl", "--cross-entropy-fusion-impl",
      "Megatron --cross-entropy-fusion-impl (with --cross-entropy-loss-fusion, Megatron-Core's default): native, "
      "Megatron's vocab-parallel cross entropy over fp32 logits; te, Transformer Engine's Triton parallel cross entropy "
      "(what Megatron-Bridge's performance scripts set): an online-softmax pass and a loss pass that writes the logit "
      "gradient over the 16-bit logits (6 B per logit forward, 4 B backward, no fp32 logits held) and a "
      "device-to-host check of the loss gradient (torch.equal) in the backward unless CUDA graphs run the step "
      "(Megatron stack; no effect on others)",
      {"native", "te"}, "native",
      [](In& x, const std::string& v) { x.train.te_cross_entropy = v == "te"; },
      [](const In& x) -> std::optional<std::string> {
        if (!x.train.te_cross_entropy) return std::nullopt;
        return std::string("te");
      },
      P | S));
  t.push_back(flag<In>(
      "reentrant_checkpoint", "--reentrant-checkpoint",
      "PyTorch stack: full recompute with torch.utils.checkpoint(use_reentrant=True) (Hugging Face Trainer's and "
      "DeepSpeed's activation checkpointing), which re-runs the whole layer forward; by default the stack's full "
      "recompute is the non-reentrant checkpoint of the FSDP wrappers (torchtitan, llm-foundry), whose early stop "
      "(PyTorch >= 2.1) skips a dense block's last GEMM",
      [](In& x) { x.train.reentrant_checkpoint = true; }, [](const In& x) { return x.train.reentrant_checkpoint; },
      P | S));
  t.push_back(flag<In>(
      "compile", "--compile",
      "PyTorch stack (no effect on the Megatron stacks, whose fusions are Transformer Engine's and --jit-fuser's): the "
      "model's blocks compiled with torch.compile (torchtitan --training.compile, nanoGPT's compile=True): Inductor "
      "fuses each norm, the rotary embedding, the gated activation and a residual add into single kernels and launches "
      "the block from its generated wrapper; without it the stack runs eager ATen ops (RMSNorm's fp32 composite, the "
      "complex-number RoPE, the activation and product apart), each launched from Python",
      [](In& x) { x.train.compile = true; }, [](const In& x) { return x.train.compile; }, P | S));
  t.push_back(flag<In>(
      "fused_rmsnorm", "--fused-rmsnorm",
      "eager PyTorch stack: each RMSNorm one fused kernel forward and one backward (torchtitan's 2024 norm_type "
      "fused_rmsnorm, a Triton kernel; Liger's or Apex's fused RMSNorm) instead of the fp32 composite of eager ATen "
      "ops (no effect with --compile, which fuses it anyway, nor on the Megatron stacks)",
      [](In& x) { x.train.fused_rmsnorm = true; }, [](const In& x) { return x.train.fused_rmsnorm; }, P | S));
  t.push_back(flag<In>(
      "no_rope_fusion", "--no-rope-fusion",
      "Megatron-Core stacks (no effect on others): the rotary embedding through rope_utils.py's unfused PyTorch ops "
      "instead of Transformer Engine's fused kernel (Megatron-LM --no-rope-fusion; Megatron-Bridge turns the fusion "
      "off for every position embedding but plain rope, e.g. GPT-OSS's yarn): 10 B per rotated element more forward "
      "and 12 B backward at 16 bit, 22 kernels more forward and 12 backward per layer and micro-batch",
      [](In& x) { x.train.rope_fusion = false; }, [](const In& x) { return !x.train.rope_fusion; }, P | S));
  t.push_back(flag<In>(
      "eager_loss", "--eager-loss",
      "with --compile: the loss is not compiled with the blocks (torchtitan before 2025-04, whose train.py left "
      "torch.compile(loss_fn) commented out): its cross entropy over the fp32-upcast logits holds 2 + 4 + 4 B per "
      "logit while log_softmax runs instead of a compiled loss's 4",
      [](In& x) { x.train.eager_loss = true; }, [](const In& x) { return x.train.eager_loss; }, P | S));
  // Mixture of experts (issue 10): what Megatron-Core's MoE flags say; dense models ignore them.
  t.push_back(number<In>(
      "moe_imbalance", "--moe-imbalance",
      "MoE routing imbalance: the busiest expert-parallel rank's routed tokens over the mean (1 = balanced, as "
      "benchmarks that force balanced routing run; the default is Switch Transformers' capacity factor, "
      "plans/training.hpp)",
      "", "1.25",
      [](In& x, double v) {
        if (v < 1.0)
          throw InputError("--moe-imbalance " + option::num_text(v) +
                           " is below 1 (the busiest rank's load over the mean is at least 1; 1 = balanced)");
        x.train.moe_imbalance = v;
        x.train.moe_imbalance_given = true;
      },
      [](const In& x) -> std::optional<double> { return x.train.moe_imbalance; }, P | S));
  t.push_back(flag<In>(
      "moe_force_balance", "--moe-force-balance",
      "MoE routing by random router logits (Megatron-Core moe_router_force_load_balancing, what NVIDIA's and AMD's MoE "
      "benchmarks run): the busiest expert-parallel rank carries the expected maximum of ep multinomial loads, "
      "computed from the tokens per micro-batch, experts, top-k and ep (sets --moe-imbalance)",
      [](In& x) { x.train.moe_force_balance = true; }, [](const In& x) { return x.train.moe_force_balance; }, P | S));
  t.push_back(number<In>(
      "moe_capacity_factor", "--moe-capacity-factor",
      "MoE expert capacity: each expert keeps at most this × its mean share of tokens and drops the rest "
      "(Megatron-Core --moe-expert-capacity-factor)",
      "", "none (dropless)",
      [](In& x, double v) {
        if (v <= 0)
          throw InputError("--moe-capacity-factor " + option::num_text(v) +
                           " must be positive (each expert keeps at most this × its mean share of tokens; leave it "
                           "out for dropless routing)");
        x.train.moe_capacity_factor = v;
      },
      [](const In& x) -> std::optional<double> {
        if (x.train.moe_capacity_factor <= 0) return std::nullopt;
        return x.train.moe_capacity_factor;
      },
      P | S));
  {
    // A choice whose setter also takes the flex backends' names (deepep, hybridep).
    auto o = text<In>(
        "moe_dispatcher", "--moe-dispatcher",
        "MoE token dispatcher (Megatron-Core --moe-token-dispatcher-type): all-to-all over the EP group, all-gather "
        "+ reduce-scatter over the expert group, or flex (DeepEP / HybridEP: each token sent once per node and GPU)",
        "alltoall", [](In& x, const std::string& v) { x.train.moe_dispatcher = parse_moe_dispatcher(v); },
        [](const In& x) -> std::optional<std::string> { return to_string(x.train.moe_dispatcher); }, P | S);
    o.kind = OptionKind::Choice;
    o.choices = {"alltoall", "allgather", "flex"};
    t.push_back(std::move(o));
  }
  t.push_back(flag<In>(
      "moe_shared_expert_overlap", "--moe-shared-expert-overlap",
      "run the MoE shared experts beside the token dispatch and combine (Megatron-Core --moe-shared-expert-overlap)",
      [](In& x) { x.train.moe_shared_expert_overlap = true; },
      [](const In& x) { return x.train.moe_shared_expert_overlap; }, P | S));
  t.push_back(flag<In>(
      "moe_a2a_overlap", "--moe-a2a-overlap",
      "hide MoE token exchanges behind another micro-batch's compute (Megatron-Core "
      "--overlap-moe-expert-parallel-comm)",
      [](In& x) { x.train.moe_a2a_overlap = true; }, [](const In& x) { return x.train.moe_a2a_overlap; }, P | S));
  t.push_back(flag<In>(
      "moe_fused_grouped_mlp", "--moe-fused-grouped-mlp",
      "the routed experts' MLP as Transformer Engine's fused grouped kernels: one GEMM launch over all local experts, "
      "activation and quantisation in its epilogue (Megatron-Bridge cutedsl_fused_grouped_mlp, "
      "NVTE_CUTEDSL_FUSED_GROUPED_MLP=1); default: TEGroupedMLP's GroupedLinear, one cuBLAS GEMM per local expert",
      [](In& x) { x.train.moe_fused_grouped_mlp = true; },
      [](const In& x) { return x.train.moe_fused_grouped_mlp; }, P | S));
  t.push_back(integer<In>(
      "cpu_offloading_num_layers", "--cpu-offloading-num-layers",
      "activations of the first N transformer layers offloaded to host memory in the forward and reloaded for the "
      "backward (Megatron-Core --cpu-offloading; Transformer Engine keeps at most layers − N layers' activations on "
      "the GPU; pp 1, no recompute)",
      "layers", "0 (none)", 1 << 20, [](In& x, std::int64_t v) { x.train.cpu_offload_layers = static_cast<int>(v); },
      [](const In& x) -> std::optional<std::int64_t> {
        if (x.train.cpu_offload_layers <= 0) return std::nullopt;
        return x.train.cpu_offload_layers;
      },
      P | S));
  t.push_back(integer<In>(
      "decoder_first_pipeline_num_layers", "--decoder-first-pipeline-num-layers",
      "layers on the first pipeline stage (Megatron-Core; the other stages split the rest evenly)", "layers", "even",
      1 << 20, [](In& x, std::int64_t v) { x.train.split.first_stage_layers = static_cast<int>(v); },
      [](const In& x) -> std::optional<std::int64_t> {
        if (x.train.split.first_stage_layers <= 0) return std::nullopt;
        return x.train.split.first_stage_layers;
      },
      P));
  t.push_back(integer<In>(
      "decoder_last_pipeline_num_layers", "--decoder-last-pipeline-num-layers",
      "layers on the last pipeline stage (Megatron-Core; the other stages split the rest evenly)", "layers", "even",
      1 << 20, [](In& x, std::int64_t v) { x.train.split.last_stage_layers = static_cast<int>(v); },
      [](const In& x) -> std::optional<std::int64_t> {
        if (x.train.split.last_stage_layers <= 0) return std::nullopt;
        return x.train.split.last_stage_layers;
      },
      P));
  t.push_back(flag<In>(
      "account_for_embedding_in_pipeline_split", "--account-for-embedding-in-pipeline-split",
      "count the embedding as one layer of the first pipeline stage's split (Megatron-Core)",
      [](In& x) { x.train.split.account_for_embedding = true; },
      [](const In& x) { return x.train.split.account_for_embedding; }, P));
  t.push_back(flag<In>(
      "account_for_loss_in_pipeline_split", "--account-for-loss-in-pipeline-split",
      "count the LM head and loss as one layer of the last pipeline stage's split (Megatron-Core)",
      [](In& x) { x.train.split.account_for_loss = true; }, [](const In& x) { return x.train.split.account_for_loss; },
      P));
  t.push_back(text<In>(
      "pipeline_model_parallel_layout", "--pipeline-model-parallel-layout",
      "every virtual pipeline stage's layers, Megatron-Core's layout string: stages separated by '|' of E embedding, "
      "t decoder layer, m MTP layer, L loss, with (…)*n and x*n repeats (e.g. DeepSeek-V3 pp8 vpp2: "
      "Et*4|(t*4|)*14tmL); the embedding on the first and the loss and MTP layers on the last virtual stage",
      "even", [](In& x, const std::string& v) { x.train.split.layout = intern_pipeline_layout(v); },
      [](const In& x) -> std::optional<std::string> {
        if (!x.train.split.layout) return std::nullopt;
        return *x.train.split.layout;
      },
      P));
  t.push_back(flag<In>(
      "cuda_graphs", "--cuda-graphs",
      "layer passes captured as CUDA graphs (Megatron --enable-cuda-graph, TE make_graphed_callables, torch.compile "
      "reduce-overhead): one launch per layer pass instead of one per kernel",
      [](In& x) { x.train.cuda_graphs = true; }, [](const In& x) { return x.train.cuda_graphs; }, P | S));
  t.push_back(integer<In>(
      "log_interval", "--log-interval", "steps between training logs (timers with barriers, loss .item())", "steps",
      "the stack's: Megatron-LM 100, torchtitan 10", 1000000, [](In& x, std::int64_t v) { x.train.log_interval = static_cast<int>(v); },
      [](const In& x) -> std::optional<std::int64_t> {
        if (x.train.log_interval <= 0) return std::nullopt;
        return x.train.log_interval;
      },
      P | S));
  t.push_back(flag<In>(
      "deterministic", "--deterministic",
      "Megatron --deterministic-mode: NaN-filled allocations (one fill kernel each) and deterministic kernels",
      [](In& x) { x.train.deterministic = true; }, [](const In& x) { return x.train.deterministic; }, P | S));
  t.push_back(choice<In>(
      "timing_log_level", "--timing-log-level",
      "Megatron --timing-log-level: timers whose start and stop each call torch.cuda.synchronize() — 1: the step's "
      "forward-backward, optimizer and gradient-sync timers (with barriers); 2: also forward-compute, backward-compute "
      "and batch-generator around every pipeline pass",
      {"0", "1", "2"}, "0 (Megatron-LM's default)",
      [](In& x, const std::string& v) { x.train.timing_log_level = v[0] - '0'; },
      [](const In& x) -> std::optional<std::string> {
        if (x.train.timing_log_level <= 0) return std::nullopt;
        return std::to_string(x.train.timing_log_level);
      },
      P | S));
  t.push_back(choice<In>(
      "transformer_impl", "--transformer-impl",
      "Megatron --transformer-impl: Transformer Engine's fused modules, or the local spec (torch matmul linears, "
      "Megatron's fused LayerNorm / softmax / bias kernels): how many ops the host issues per layer (Megatron stack; "
      "megatron-legacy is always local, other stacks ignore it)",
      {"transformer_engine", "local"}, "transformer_engine",
      [](In& x, const std::string& v) { x.train.local_layers = v == "local"; },
      [](const In& x) -> std::optional<std::string> {
        if (!x.train.local_layers) return std::nullopt;
        return std::string("local");
      },
      P | S));
  t.push_back(flag<In>(
      "no_gradient_accumulation_fusion", "--no-gradient-accumulation-fusion",
      "Megatron --no-gradient-accumulation-fusion: the weight-gradient GEMMs write a fresh gradient that the DDP hook "
      "adds to main_grad (one more hook and add kernel per weight tensor); by default the GEMM accumulates in place",
      [](In& x) { x.train.no_grad_accum_fusion = true; }, [](const In& x) { return x.train.no_grad_accum_fusion; },
      P | S));
  t.push_back(choice<In>(
      "jit_fuser", "--jit-fuser",
      "Megatron's jit_fuser (megatron/core/jit.py) for the bias-dropout-add and bias-activation fusions: torch.compile "
      "with torch >= 2.2, torch.jit.script before (containers up to 24.01); megatron-legacy always uses TorchScript",
      {"compile", "torchscript"}, "compile",
      [](In& x, const std::string& v) { x.train.jit_torchscript = v == "torchscript"; },
      [](const In& x) -> std::optional<std::string> {
        if (!x.train.jit_torchscript) return std::nullopt;
        return std::string("torchscript");
      },
      P | S));
  t.push_back(flag<In>(
      "test_mode", "--test-mode",
      "Megatron --test-mode (the CI's real-time tests): on a model with q/k norms (Megatron --qk-layernorm; model JSON "
      "qk_norm) every attention forward all-gathers its q/k norm weights and biases over the data- and "
      "tensor-parallel groups and compares them with each rank's: per compared rank 4 tensor compares, each an eq "
      "and an all kernel and a device-to-host sync (Megatron-Core attention.py run_realtime_tests); no effect "
      "without q/k norms or off the Megatron stack",
      [](In& x) { x.train.test_mode = true; }, [](const In& x) { return x.train.test_mode; }, P | S));
  t.push_back(flag<In>(
      "no_check_for_nan_in_loss_and_grad", "--no-check-for-nan-in-loss-and-grad",
      "Megatron-Core stacks: no NaN/Inf checks of the loss (two device-to-host syncs per micro-batch) nor of the gradient "
      "buckets (a norm and a sync each) — Megatron-LM's flag; Megatron-Bridge's performance scripts turn both off "
      "(ddp.check_for_nan_in_grad, rerun_state_machine.check_for_nan_in_loss)",
      [](In& x) { x.train.nan_checks = false; }, [](const In& x) { return !x.train.nan_checks; }, P | S));
  t.push_back(flag<In>(
      "log_num_zeros_in_grad", "--log-num-zeros-in-grad",
      "Megatron --log-num-zeros-in-grad: count the zero gradients every step (kernels per tensor, an all-reduce, a sync)",
      [](In& x) { x.train.log_num_zeros_in_grad = true; }, [](const In& x) { return x.train.log_num_zeros_in_grad; },
      P | S));
  t.push_back(flag<In>(
      "log_params_norm", "--log-params-norm",
      "Megatron --log-params-norm: the parameter norm every step (multi-tensor l2 norm, an all-reduce, a sync)",
      [](In& x) { x.train.log_params_norm = true; }, [](const In& x) { return x.train.log_params_norm; }, P | S));
  t.push_back(flag<In>(
      "fsdp_no_sync", "--fsdp-no-sync",
      "FSDP/ZeRO-3: reduce-scatter gradients only on the last micro-batch (unsharded grads accumulate)",
      [](In& x) { x.train.fsdp_no_sync = true; }, [](const In& x) { return x.train.fsdp_no_sync; }, P | S));
  return t;
}

}  // namespace

const OptionTable<ScenarioInput>& scenario_options() {
  static const OptionTable<ScenarioInput> table = build_table();
  return table;
}

void check_scenario_conflicts(const std::vector<OptionValue>& values) {
  conflicting_options(values, "tp_comm_overlap", "no_tp_comm_overlap",
                      "--tp-comm-overlap and --no-tp-comm-overlap contradict each other: give one");
  conflicting_options(values, "sp", "no_sp", "--sp and --no-sp contradict each other: give one");
}

void apply_scenario_options(const std::vector<OptionValue>& values, ScenarioInput& in) {
  check_scenario_conflicts(values);
  apply_options(scenario_options(), values, in);
}

void apply_scenario_json(const nlohmann::json& j, const std::string& where, ScenarioInput& in) {
  apply_scenario_options(option_values_from_json(scenario_options(), j, where), in);
}

ScenarioInput scenario_from_flag_string(const std::string& flags, const std::string& where, bool allow_model) {
  std::vector<std::string> tokens;
  std::istringstream s(flags);
  for (std::string w; s >> w;) tokens.push_back(w);
  OptionTable<ScenarioInput> table;
  for (const auto& o : scenario_options())
    if (o.use & kUsePredict) table.push_back(o);
  std::set<std::string> forbidden;
  if (!allow_model) forbidden.insert("--model");
  const auto values = option_values_from_tokens(table, tokens, where, forbidden, " (the model comes from elsewhere)");
  ScenarioInput in;
  try {
    apply_scenario_options(values, in);
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
  return in;
}

nlohmann::ordered_json training_to_json(const TrainingConfig& t) {
  ScenarioInput in;
  in.train = t;
  OptionTable<ScenarioInput> table;
  for (const auto& o : scenario_options())
    if (o.key != "model" && o.key != "plan" && o.key != "gpu" && o.key != "gpus_per_node") table.push_back(o);
  return options_to_json(table, in);
}

}  // namespace parsim
