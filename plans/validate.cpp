// parsim plans/ — a plan checked against model, cluster and training settings. Each check cites the framework rule it
// mirrors; each message names the offending value and what would be valid (one line, docs/cli.md "Errors").
#include "plans/plan.hpp"

#include "sim/core/checked.hpp"
#include "sim/core/error.hpp"

#include <algorithm>
#include <string>

namespace parsim {

namespace {

std::string S(std::int64_t v) { return std::to_string(v); }

std::string join_ints(const std::vector<int>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out;
}

std::string model_name(const ModelSpec& m) { return m.name.empty() ? std::string("the model") : m.name; }

}  // namespace

// TransformerBlock asserts Transformer Engine, whose get_cpu_offload_context does the offloading; the transfers are
// priced over the stated CPU–GPU link.
std::optional<std::string> cpu_offload_stack_error(const Hardware& hw, const TrainingConfig& t) {
  const int n = t.cpu_offload_layers;
  if (n <= 0) return std::nullopt;
  const std::string opt = "--cpu-offloading-num-layers " + S(n);
  if (t.stack != Stack::Megatron || t.local_layers)
    return opt + " needs the Megatron-Core stack with Transformer Engine modules (TE's CPU-offload context), got " +
           "--stack " + to_string(t.stack) + (t.local_layers ? " with --transformer-impl local" : "");
  if (!(hw.node.host_link_gbytes_per_s > 0))
    return opt + ": the hardware states no CPU–GPU link bandwidth (set node.host_link_gbytes_per_s, GB/s per "
                 "direction, in the hardware file)";
  return std::nullopt;
}

namespace {

// --cpu-offloading-num-layers: Megatron-Core's checks (transformer_config.py __post_init__ @d98e8a64dd: fewer
// offloaded layers than the model has, no pipeline parallelism, no activation recomputation), the non-pipelined
// schedule those imply, then the stack and the link (cpu_offload_stack_error).
std::optional<std::string> cpu_offload_error(const Plan& p, const ModelSpec& m, const Hardware& hw,
                                             const TrainingConfig& t) {
  const int n = t.cpu_offload_layers;
  if (n <= 0) return std::nullopt;
  const std::string opt = "--cpu-offloading-num-layers " + S(n);
  if (n >= m.layers)
    return opt + " is not fewer than the " + S(m.layers) + " layers of " + model_name(m) +
           " (Megatron-Core offloads at most layers − 1; 1.." + S(m.layers - 1) + ")";
  if (auto e = cpu_offload_stack_error(hw, t)) return e;
  if (p.pp > 1)
    return opt + " with pp" + S(p.pp) +
           ": Megatron-Core supports CPU offloading without pipeline parallelism only (pp1)";
  if (t.recompute != Recompute::None)
    return opt + " with --recompute " + to_string(t.recompute) +
           ": Megatron-Core refuses CPU offloading with activation recomputation (--recompute none)";
  if (t.schedule != Schedule::OneFOneB)
    return opt + " with --schedule " + to_string(t.schedule) +
           ": offloading runs in Megatron-Core's non-pipelined schedule (--schedule 1f1b)";
  return std::nullopt;
}

// tp degrees the attention heads allow: tp | heads, and kv_heads either split (tp | kv) or replicated (kv | tp).
bool tp_fits_heads(int tp, const ModelSpec& m) {
  if (m.heads % tp != 0) return false;
  return m.kv_heads % tp == 0 || tp % m.kv_heads == 0;
}

std::vector<int> valid_tps(const ModelSpec& m) {
  std::vector<int> out;
  for (int t = 1; t <= m.heads; ++t)
    if (tp_fits_heads(t, m)) out.push_back(t);
  return out;
}

std::optional<std::string> expert_plan_error(const Plan& p, const ModelSpec& m) {
  const int etp = p.expert_tp();
  // As written: etp2 with tp2 is still an expert term; only a no-op etp1 with tp1 passes.
  const bool expert_terms = p.ep > 1 || (p.etp > 0 && (p.etp > 1 || p.etp != p.tp));
  if (!m.is_moe()) {
    if (expert_terms)
      return "plan '" + p.to_string() + "' has expert parallelism (ep" + S(p.ep) + ", etp" + S(etp) + ") but " +
             model_name(m) + " is a dense model without experts (drop the ep/etp terms; they apply to MoE models)";
    return std::nullopt;
  }
  if (m.experts % p.ep != 0) {
    std::vector<int> valid;
    for (int e = 1; e <= m.experts; ++e)
      if (m.experts % e == 0) valid.push_back(e);
    return "ep" + S(p.ep) + " does not divide the " + S(m.experts) + " routed experts of " + model_name(m) +
           " (valid ep: " + join_ints(valid) + ")";
  }
  const std::int64_t fold = std::int64_t{p.tp} * p.cp * p.dp;  // GPUs of one pipeline stage
  const std::int64_t expert_group = std::int64_t{etp} * p.ep;
  if (fold % expert_group != 0)
    return "ep" + S(p.ep) + " × etp" + S(etp) + " = " + S(expert_group) + " does not divide tp·cp·dp = " + S(p.tp) +
           "·" + S(p.cp) + "·" + S(p.dp) + " = " + S(fold) +
           " (expert layers regroup the GPUs of a pipeline stage as etp × ep × edp; choose ep·etp dividing " + S(fold) +
           ")";
  return std::nullopt;
}

// --recompute-modules against the model and the other options, as Megatron-Core's TransformerConfig.__post_init__
// checks them (megatron/core/transformer/transformer_config.py @d98e8a64: mla_up_proj needs multi-latent attention,
// shared_experts cannot run with --moe-shared-expert-overlap, and --overlap-moe-expert-parallel-comm forbids moe),
// plus what Megatron accepts silently as a no-op and parsim names instead: moe / moe_act / shared_experts on a model
// without experts (no MoELayer to act on), shared_experts without shared experts, mlp when every layer is MoE
// (transformer_layer.py sets recompute_mlp only for layers that are not MoE layers).
std::optional<std::string> recompute_modules_error(const ModelSpec& m, const TrainingConfig& t) {
  const RecomputeModules r = t.recompute_modules;
  if (r == RecomputeModules{}) return std::nullopt;
  const std::string list = "--recompute-modules " + to_string(r);
  if (t.recompute != Recompute::Selective)
    return list + " needs --recompute selective (Megatron-Core --recompute-granularity selective), got --recompute " +
           to_string(t.recompute);
  if (t.stack != Stack::Megatron)
    return list + " is Megatron-Core's selective recompute (--stack megatron), got --stack " + to_string(t.stack) +
           " (whose selective recompute is the attention core: drop --recompute-modules)";
  bool mla = false, dense = false;
  for (const auto& kc : m.layer_kind_counts()) {
    mla = mla || kc.first.attention == AttentionKind::MLA;
    dense = dense || kc.first.ffn == FfnKind::Dense;
  }
  auto bad = [&](RecomputeModule x, const std::string& why) -> std::optional<std::string> {
    for (const RecomputeModuleName& n : kRecomputeModuleNames)
      if (n.module == x) return "--recompute-modules " + std::string(n.name) + ": " + why;
    return why;
  };
  if (r.has(RecomputeModule::MlaUpProj) && !mla)
    return bad(RecomputeModule::MlaUpProj, model_name(m) + " has no multi-latent attention (valid for MLA models such "
                                           "as DeepSeek-V3; choose from core_attn, layernorm, mlp" +
                                           std::string(m.is_moe() ? ", moe, moe_act, shared_experts)" : ")"));
  if (!m.is_moe())
    for (RecomputeModule x : {RecomputeModule::Moe, RecomputeModule::MoeAct, RecomputeModule::SharedExperts})
      if (r.has(x))
        return bad(x, model_name(m) + " is a dense model without experts (valid: core_attn, layernorm, mlp" +
                          std::string(mla ? ", mla_up_proj)" : ")"));
  if (r.has(RecomputeModule::SharedExperts) && m.is_moe() && m.shared_experts <= 0)
    return bad(RecomputeModule::SharedExperts, model_name(m) + " has no shared experts (use moe or moe_act)");
  if (r.has(RecomputeModule::SharedExperts) && t.moe_shared_expert_overlap)
    return bad(RecomputeModule::SharedExperts, "cannot run with --moe-shared-expert-overlap (Megatron-Core "
                                               "transformer_config.py rejects the pair)");
  if (r.has(RecomputeModule::Moe) && t.moe_a2a_overlap)
    return bad(RecomputeModule::Moe, "cannot run with --moe-a2a-overlap (Megatron-Core: 'disable moe in "
                                     "recompute_modules when enabling overlap_moe_expert_parallel_comm')");
  if (r.has(RecomputeModule::Mlp) && !dense)
    return bad(RecomputeModule::Mlp, "every layer of " + model_name(m) + " is an MoE layer, and mlp recomputes dense "
                                     "MLPs only (use moe or moe_act)");
  return std::nullopt;
}

}  // namespace

// Hybrid models (layers that are single blocks; Mamba-2 mixers): what parsim prices is Megatron-Core's MambaModel
// with Transformer Engine (megatron/core/models/mamba, megatron/core/ssm/mamba_mixer.py). MambaMixer splits its heads
// and groups over TP ("nheads % tp == 0", "ngroups % tp == 0" in its __init__); context parallelism of the Mamba
// mixers (an all-to-all over heads in newer Megatron-Core) and the combined 1F1B schedule of --moe-a2a-overlap are not
// modelled for them, nor the legacy / local / PyTorch stacks' layers.
namespace {
// hybrid_stack_error with the model's hybrid counts already in hand (hybrid_error needs them as well).
std::optional<std::string> hybrid_stack_error(const ModelSpec& m, const TrainingConfig& t, const HybridCounts& hc) {
  // LatentMoE (any model): Megatron-Core's MoELayer asserts "Shared expert overlap not supported when MoE latent
  // projections are used" (moe_layer.py preprocess).
  if (m.moe_latent > 0 && t.moe_shared_expert_overlap)
    return "--moe-shared-expert-overlap does not combine with the latent MoE of " + model_name(m) +
           " (Megatron-Core refuses shared-expert overlap with MoE latent projections; drop the flag)";
  if (!hc.hybrid) return std::nullopt;
  if (t.stack != Stack::Megatron || t.local_layers)
    return model_name(m) + " is a hybrid model (single-block layers" + std::string(hc.mamba > 0 ? ", Mamba-2 mixers" : "") +
           "), modelled as Megatron-Core's MambaModel with Transformer Engine: use --stack megatron without "
           "--transformer-impl local (got --stack " + to_string(t.stack) + (t.local_layers ? ", local layers)" : ")");
  if (t.moe_a2a_overlap)
    return "--moe-a2a-overlap is not modelled for a hybrid model such as " + model_name(m) + " (drop the flag)";
  return std::nullopt;
}
}  // namespace

std::optional<std::string> hybrid_stack_error(const ModelSpec& m, const TrainingConfig& t) {
  return hybrid_stack_error(m, t, hybrid_counts(m));
}

std::optional<std::string> hybrid_error(const Plan& p, const ModelSpec& m, const TrainingConfig& t) {
  const HybridCounts hc = hybrid_counts(m);
  if (auto e = hybrid_stack_error(m, t, hc)) return e;
  if (!hc.hybrid) return std::nullopt;
  const bool mamba = hc.mamba > 0;
  // Pipeline stages (Megatron-Core hybrid_layer_allocation.py select_pipeline_segment): '|' segments in the pattern
  // are the chunks (resolve_training turns them into the layout), one per pp × vpp chunk, and exclude the first /
  // last-stage layer counts; without '|', pp must divide the layers and there is no virtual pipeline.
  const std::int64_t chunks = std::int64_t{p.pp} * p.vpp;
  const std::int64_t segments = static_cast<std::int64_t>(m.pipeline_segments.size());
  if (segments > 0) {
    if (t.split.first_stage_layers > 0 || t.split.last_stage_layers > 0 || t.split.account_for_embedding ||
        t.split.account_for_loss)
      return "the layer pattern of " + model_name(m) + " places its pipeline stages with '|': drop "
             "--decoder-first/last-pipeline-num-layers and --account-for-*-in-pipeline-split (Megatron-Core refuses both)";
    if (!t.split.layout)
      return "the layer pattern of " + model_name(m) + " has " + S(segments) + " pipeline segments ('|'), the plan " +
             "pp" + S(p.pp) + (p.vpp > 1 ? " × vpp" + S(p.vpp) : std::string()) + " = " + S(chunks) +
             " chunks (give a plan with pp × vpp = " + S(segments) + ")";
  } else if (chunks > 1 && !t.split.any()) {
    if (p.vpp > 1)
      return "vpp" + S(p.vpp) + " with " + model_name(m) + ": Megatron-Core interleaves a hybrid model only along '|' "
             "pipeline segments in its layer pattern (add them, one per pp × vpp chunk)";
    if (m.layers % p.pp != 0)
      return "pp" + S(p.pp) + " does not divide the " + S(m.layers) + " layers of " + model_name(m) +
             " (Megatron-Core splits a hybrid pattern without '|' evenly; add '|' segments or "
             "--decoder-first/last-pipeline-num-layers)";
  }
  if (mamba) {
    if (m.mamba_heads % p.tp != 0 || m.mamba_groups % p.tp != 0) {
      std::vector<int> valid;
      for (int tp : valid_tps(m))
        if (m.mamba_heads % tp == 0 && m.mamba_groups % tp == 0) valid.push_back(tp);
      return "tp" + S(p.tp) + " does not divide the " + S(m.mamba_heads) + " Mamba heads and " + S(m.mamba_groups) +
             " groups of " + model_name(m) + " (Megatron-Core's MambaMixer splits both over TP; valid tp: " +
             join_ints(valid) + ")";
    }
    if (p.cp > 1)
      return "cp" + S(p.cp) + ": context parallelism of Mamba-2 mixers is not modelled (" + model_name(m) +
             " has Mamba layers; use cp1)";
  }
  return std::nullopt;
}

// --recompute op is torchtitan's per-op policy for its dense blocks (parallelize_llama.py): the PyTorch stack,
// standard attention through scaled_dot_product_attention's fused kernels (its output is one of the saved ops), no
// expert layers (torchtitan's MoE models save grouped matmuls as well, a policy parsim does not price) and no MLA.
std::optional<std::string> recompute_op_error(const ModelSpec& m, const TrainingConfig& t) {
  if (t.recompute != Recompute::Op) return std::nullopt;
  if (t.stack != Stack::PyTorch)
    return "--recompute op is torchtitan's per-op selective checkpointing (--stack pytorch), got --stack " +
           to_string(t.stack) + " (Megatron: --recompute selective with --recompute-modules)";
  if (!t.flash_attention)
    return "--recompute op saves the fused attention kernel's output; with --attention unfused there is none (choose "
           "--attention flash, flash1 or cudnn, or another --recompute)";
  for (const auto& kc : m.layer_kind_counts()) {
    if (kc.first.ffn == FfnKind::MoE)
      return "--recompute op is priced for dense blocks; " + model_name(m) +
             " has expert layers (choose --recompute selective or full)";
    if (kc.first.attention == AttentionKind::MLA)
      return "--recompute op is priced for multi-head / grouped-query attention; " + model_name(m) +
             " uses multi-latent attention (choose --recompute selective or full)";
  }
  return std::nullopt;
}

// --no-rope-fusion prices rope_utils.py's unfused ops on the query and key heads (costs/layer.cpp unfused_rope_work);
// a model without a rotary embedding has none, and MLA's rope parts run another code path.
std::optional<std::string> rope_fusion_error(const ModelSpec& m, const TrainingConfig& t) {
  if (t.rope_fusion || t.stack != Stack::Megatron) return std::nullopt;
  if (m.position != PositionKind::RoPE)
    return "--no-rope-fusion: " + model_name(m) + " has no rotary embedding (its \"position\" is " +
           (m.position == PositionKind::ALiBi ? "alibi" : m.position == PositionKind::None ? "none" : "learned") +
           "); drop the flag";
  for (const auto& kc : m.layer_kind_counts())
    if (kc.first.attention == AttentionKind::MLA)
      return "--no-rope-fusion is priced for multi-head / grouped-query attention; " + model_name(m) +
             " uses multi-latent attention, whose unfused rope path is not modelled (drop the flag)";
  return std::nullopt;
}

std::optional<std::string> plan_error(const Plan& p, const ModelSpec& m, const Hardware& hw, const TrainingConfig& t) {
  const std::string plan = p.to_string();
  if (auto e = rope_fusion_error(m, t)) return e;
  // Degrees (a Plan built in code rather than parsed).
  if (p.tp < 1 || p.pp < 1 || p.dp < 1 || p.cp < 1 || p.vpp < 1 || p.ep < 1 || p.etp < 0)
    return "plan '" + plan + "' has a degree below 1 (tp, pp, dp, cp, ep, etp and vpp are positive integers)";
  if (sharding_traits(p.sharding).term_takes_group && (p.hsdp_group < 1 || p.dp % p.hsdp_group != 0))
    return to_string(p.sharding) + S(p.hsdp_group) + " does not divide dp" + S(p.dp) +
           " (the shard group size must divide the data-parallel degree)";
  if (m.layers < 1 || m.heads < 1 || m.kv_heads < 1)
    return "model " + model_name(m) + " needs positive layers, heads and kv_heads (got " + S(m.layers) + ", " +
           S(m.heads) + ", " + S(m.kv_heads) + ")";
  if (hw.node.gpus_per_node < 1) return "gpus_per_node must be a positive integer, got " + S(hw.node.gpus_per_node);
  if (t.seq <= 0) return "sequence length must be a positive integer, got " + S(t.seq);
  if (t.gbs <= 0) return "--gbs must be a positive integer, got " + S(t.gbs);
  if (t.mbs <= 0) return "--mbs must be a positive integer, got " + S(t.mbs);
  if (auto e = cpu_offload_error(p, m, hw, t)) return e;
  // Chunked attention beyond one chunk runs each chunk as its own causal sequence (Megatron-Bridge
  // models/llama/llama4_utils.py chunkify @067f987df): local to a rank, which context parallelism's ring does not do
  // (Megatron-Bridge runs it only when every CP half-chunk of the sequence holds whole attention chunks, and then
  // without the ring for those layers — not modelled).
  if (m.attention_chunk > 0 && t.seq > m.attention_chunk && p.cp > 1) {
    bool chunked = false;
    for (const auto& kc : m.layer_kind_counts()) chunked = chunked || kc.first.attention == AttentionKind::Chunked;
    if (chunked)
      return "context parallelism (cp" + S(p.cp) + ") with chunked attention beyond one chunk (--seq " + S(t.seq) +
             ", " + S(m.attention_chunk) + "-token chunks of " + model_name(m) +
             ") is not modelled: use cp 1, or --seq " + S(m.attention_chunk) + " or less";
  }

  // Expert parallelism (Megatron-Core MoE parallel folding, Liu et al. 2025 arXiv 2504.14960): the expert layers of a
  // pipeline stage run on the same tp·cp·dp GPUs as its attention layers, regrouped as etp × ep × edp. So ep and etp
  // exist only for MoE models, ep must divide the routed experts (each EP rank holds experts/ep of them,
  // --num-experts % --expert-model-parallel-size == 0 in Megatron-LM's arguments.py), and etp·ep must divide tp·cp·dp.
  if (auto e = expert_plan_error(p, m)) return e;

  // Tensor parallelism splits attention heads across ranks (Shoeybi et al. 2019 §3): tp | heads. GQA KV heads are
  // split when tp | kv_heads, else replicated tp/kv times (Megatron-Core: num_query_groups < tp copies each group).
  if (m.heads % p.tp != 0)
    return "tp" + S(p.tp) + " does not divide the " + S(m.heads) + " attention heads of " + model_name(m) +
           " (valid tp: " + join_ints(valid_tps(m)) + ")";
  if (m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0)
    return "tp" + S(p.tp) + " neither divides nor is a multiple of the " + S(m.kv_heads) + " KV heads of " +
           model_name(m) + " (valid tp: " + join_ints(valid_tps(m)) + ")";
  // Tensor parallelism also splits the FFN's inner dimension (Megatron's ColumnParallelLinear: output_size divided
  // by the TP size, which must divide it): a dense FFN layer's ffn_hidden by tp, a routed expert's by etp. tp40 on
  // Llama-2-13B (40 heads, ffn 13,824 = 2^9·27) passed the heads check but splits no FFN evenly (issue 12).
  bool dense_ffn = false;
  for (int i = 0; i < m.layers && !dense_ffn; ++i) dense_ffn = m.layer(i).ffn == FfnKind::Dense;
  if (dense_ffn && m.ffn_hidden > 0 && m.ffn_hidden % p.tp != 0) {
    std::vector<int> valid;
    for (int tp : valid_tps(m))
      if (m.ffn_hidden % tp == 0) valid.push_back(tp);
    return "tp" + S(p.tp) + " does not divide the FFN hidden size " + S(m.ffn_hidden) + " of " + model_name(m) +
           " (tensor parallelism splits it evenly; valid tp: " + join_ints(valid) + ")";
  }
  if (auto e = hybrid_error(p, m, t)) return e;
  if (m.is_moe() && m.expert_ffn_hidden > 0 && m.expert_ffn_hidden % p.expert_tp() != 0)
    return "etp" + S(p.expert_tp()) + " does not divide the expert FFN hidden size " + S(m.expert_ffn_hidden) +
           " of " + model_name(m) + " (expert tensor parallelism splits each expert's FFN evenly)";
  // A TP group must tile the nodes: inside one node (tp | gpus_per_node) or whole nodes (gpus_per_node | tp).
  const int gpn = hw.node.gpus_per_node;
  if (gpn % p.tp != 0 && p.tp % gpn != 0)
    return "tp" + S(p.tp) + " does not fit nodes of " + S(gpn) + " GPUs (tp must divide " + S(gpn) +
           " or be a multiple of it)";

  // Pipeline: at least one layer per model chunk (Megatron-Core splits the decoder into pp·vpp chunks), unless the
  // embedding/loss are counted as layers (then the first/last chunk may hold none) — Megatron-Core's split options.
  const std::int64_t chunks = std::int64_t{p.pp} * p.vpp;
  if (t.split.any()) {
    if (chunks > 4 * std::int64_t{m.layers} + 8)
      return "pp" + S(p.pp) + " × vpp" + S(p.vpp) + " = " + S(chunks) + " pipeline chunks for " + S(m.layers) +
             " layers: far too many";
    try {
      (void)layers_per_chunk(m.layers, p.pp, p.vpp, t.split);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    // Megatron-Core validate_layer_layout: the layout's MTP layers match the model's (mtp_num_layers).
    if (t.split.layout) {
      const std::string& tail = pipeline_layout_stages(t.split.layout).back();
      const auto mtp = std::count(tail.begin(), tail.end(), 'm');
      if (mtp != m.mtp_layers)
        return "pipeline layout '" + *t.split.layout + "' holds " + S(mtp) + " MTP layers 'm'; " + model_name(m) +
               " has " + S(m.mtp_layers);
    }
  } else if (chunks > m.layers)
    return "pp" + S(p.pp) + (p.vpp > 1 ? " × vpp" + S(p.vpp) : std::string()) + " = " + S(chunks) +
           " pipeline chunks exceed the " + S(m.layers) + " layers of " + model_name(m) +
           " (need pp × vpp ≤ " + S(m.layers) + ")";
  if (p.vpp > 1 && p.pp == 1) return "vpp" + S(p.vpp) + " needs pipeline parallelism (pp > 1) to interleave";
  // Megatron-LM arguments.py: the interleaved schedule needs pp > 2 unless P2P communication is overlapped.
  if (p.vpp > 1 && p.pp == 2 && !t.overlap_p2p)
    return "vpp" + S(p.vpp) + " with pp2 needs overlapped P2P communication (Megatron-LM requires pp > 2 otherwise)";
  if (t.schedule == Schedule::Auto) return "the pipeline schedule is unresolved ('auto'; resolve_training sets it)";
  const ScheduleTraits& sched = schedule_traits(t.schedule);
  if (!vpp_fits(sched, p.vpp)) return schedule_precondition_error(sched, p.pp, p.vpp, 0);

  // Batch: every DP replica runs gbs / dp sequences in micro-batches of mbs.
  // (Checked products: --mbs takes up to 18 digits, so dp × mbs and its multiples can pass 2^63; found by fuzz_plan.)
  const auto unit_or = checked_mul(p.dp, t.mbs);
  if (!unit_or)
    return "dp × mbs = " + S(p.dp) + " × " + S(t.mbs) + " is beyond 2^63 sequences (global batch " + S(t.gbs) + ")";
  const std::int64_t unit = *unit_or;
  if (t.gbs % unit != 0) {
    const std::int64_t below = t.gbs / unit * unit;
    const auto above = checked_add(below, unit);
    return "global batch " + S(t.gbs) + " is not divisible by dp × mbs = " + S(p.dp) + " × " + S(t.mbs) + " = " +
           S(unit) + " (valid: a multiple of " + S(unit) + (above ? ", e.g. " + (below > 0 ? S(below) + " or " : "") +
           S(*above) : std::string()) + ")";
  }
  const std::int64_t mb = t.gbs / unit;
  // One simulated step plays every micro-batch out (non-periodic schedules) or walks its schedule order (memory
  // pre-check): bounded so that a step stays seconds, not hours — --gbs 2^40 on dp8 asked for 1.4·10^11 (issue 12).
  // 2^20 is far beyond any published run (thousands at most) and keeps 10^6 micro-batches simulable.
  if (mb > kMaxMicroBatches)
    return "gbs / (dp × mbs) = " + S(t.gbs) + " / (" + S(p.dp) + " × " + S(t.mbs) + ") = " + S(mb) +
           " micro-batches per step is beyond what parsim simulates (at most " + S(kMaxMicroBatches) +
           "); raise --mbs or lower --gbs";
  // The schedule's preconditions (plans/schedule.cpp): Megatron-Core interleaving needs m % pp == 0 at the default
  // group size G = pp (schedules.py); the DualPipe family needs m ≥ 2·pp (and DualPipe an even pp and m); the V-shape
  // schedules need pp > 1.
  if (auto e = schedule_precondition_error(sched, p.pp, p.vpp, mb)) {
    if (sched.microbatches_multiple_of_pp && mb % p.pp != 0)
      return *e + "; choose gbs a multiple of " +
             (checked_mul(unit, p.pp) ? S(*checked_mul(unit, p.pp)) : std::string("dp × mbs × pp"));
    return *e;
  }

  // Context parallelism with causal load balancing cuts each sequence into 2·cp chunks (Megatron-Core CP docs).
  if (p.cp > 1 && t.seq % (2 * std::int64_t{p.cp}) != 0)
    return "sequence length " + S(t.seq) + " is not divisible by 2 × cp = " + S(2 * std::int64_t{p.cp}) +
           " (context parallelism splits each sequence into 2·cp chunks for causal load balance)";
  // Sequence parallelism splits each CP rank's s/cp tokens across the TP group (Korthikanti et al. 2022 §4.2.2).
  if (t.sp && p.tp > 1 && (t.seq / p.cp) % p.tp != 0)
    return "sequence parallelism needs the " + S(t.seq / p.cp) + " tokens per CP rank to divide by tp" + S(p.tp) +
           " (choose --seq a multiple of " + S(std::int64_t{p.tp} * p.cp) + ")";
  // The legacy Megatron stack predates Transformer Engine: no fp8 GEMMs and no userbuffer TP overlap.
  if (t.stack == Stack::MegatronLegacy && t.precision == Precision::FP8)
    return "--precision fp8 needs Transformer Engine, which the megatron-legacy stack predates (choose bf16 or fp16, or "
           "--stack megatron)";
  if (t.stack == Stack::MegatronLegacy && t.tp_comm_overlap)
    return "--tp-comm-overlap is Transformer Engine's userbuffer overlap, which the megatron-legacy stack predates "
           "(drop it, or use --stack megatron)";
  if (auto e = recompute_modules_error(m, t)) return e;
  if (auto e = recompute_op_error(m, t)) return e;
  if (t.precision == Precision::FP8 && !hw.gpu.has_fp8())
    return "--precision fp8 needs fp8 tensor cores, which " + (hw.gpu.name.empty() ? std::string("this GPU") : hw.gpu.name) +
           " does not have (choose bf16, fp16 or fp32)";
  return std::nullopt;
}

void validate_plan(const Plan& p, const ModelSpec& m, const Hardware& hw, const TrainingConfig& t) {
  if (auto e = plan_error(p, m, hw, t)) throw InputError(*e);
}

std::vector<std::string> plan_warnings(const Plan& p, const ModelSpec& m, const Hardware& hw, const TrainingConfig& t) {
  std::vector<std::string> w;
  const int gpn = hw.node.gpus_per_node;
  if (m.kv_heads > 0 && p.tp > m.kv_heads && p.tp % m.kv_heads == 0)
    w.push_back("tp" + S(p.tp) + " > " + S(m.kv_heads) + " KV heads: each KV head is replicated " +
                S(p.tp / m.kv_heads) + "x across the TP group");
  if (gpn > 0 && p.tp > gpn)
    w.push_back("tp" + S(p.tp) + " spans " + S(p.tp / gpn) + " nodes of " + S(gpn) +
                " GPUs: tensor-parallel collectives cross the inter-node network" +
                (t.tp_comm_overlap ? " and --tp-comm-overlap cannot hide them (TE userbuffers need NVLink peers)" : ""));
  if (gpn > 0 && p.world() > gpn && p.world() % gpn != 0)
    w.push_back("world size " + S(p.world()) + " is not a whole number of " + S(gpn) +
                "-GPU nodes: the last node is partly used");
  if (t.sp && p.tp == 1)
    w.push_back("--sp has no effect with tp1 (Megatron disables sequence parallelism without tensor parallelism)");
  // Megatron-Core transformer_config.py: "When using expert parallelism and tensor parallelism, sequence parallelism
  // must be used" (and Megatron-LM's argument check asks for it with any MoE model on tp > 1).
  if (m.is_moe() && p.tp > 1 && !t.sp)
    w.push_back("MoE with tp" + S(p.tp) + " without --sp: Megatron-Core requires sequence parallelism here; simulated "
                "with every TP rank routing the same tokens and the expert outputs all-reduced over TP (add --sp for "
                "what Megatron runs)");
  // layernorm recompute acts on the norms that are separate modules in Megatron-Core's Transformer Engine layer spec
  // (gpt_layer_specs.py: MLA's input norm, an MoE layer's pre-MLP norm); the others are fused into a LayerNormLinear.
  if (t.recompute == Recompute::Selective && t.recompute_modules.has(RecomputeModule::LayerNorm)) {
    bool acts = false;
    for (const auto& kc : m.layer_kind_counts())
      acts = acts || kc.first.ffn == FfnKind::MoE || kc.first.attention == AttentionKind::MLA;
    if (!acts)
      w.push_back("--recompute-modules layernorm has no effect on " + model_name(m) +
                  ": Transformer Engine fuses its norms into the following LayerNormLinear (Megatron-Core recomputes "
                  "only separate norm modules: MLA's input norm, an MoE layer's pre-MLP norm)");
  }
  const ShardingTraits& sh = sharding_traits(p.sharding);
  if (sh.shards_optimizer && !sh.hierarchical && p.dp == 1 && p.cp == 1)
    w.push_back(to_string(p.sharding) + " with dp1 shards nothing (a data-parallel group of one)");
  if (sh.hierarchical) {
    if (p.hsdp_group == p.dp && p.dp > 1)
      w.push_back("hsdp" + S(p.hsdp_group) + " with dp" + S(p.dp) + " is a single shard group: the same as fsdp");
    else if (p.hsdp_group == 1)
      w.push_back("hsdp1 shards nothing: every data-parallel rank keeps the full model state");
  }
  if (sh.framework_refuses_pp && p.pp > 1)
    w.push_back(to_string(p.sharding) + " with pp" + S(p.pp) +
                ": DeepSpeed does not combine ZeRO-2/3 with pipeline parallelism; simulated as specified");
  const std::int64_t chunks = std::int64_t{p.pp} * p.vpp;
  if (m.layers > 0 && chunks > 1 && !t.split.any() && chunks <= m.layers && m.layers % chunks != 0) {
    const auto per = layers_per_chunk(m.layers, p.pp, p.vpp);
    w.push_back(S(m.layers) + " layers over " + S(chunks) + " pipeline chunks are uneven: first chunk " +
                S(per.front()) + ", last chunk " + S(per.back()) + ", middle chunks up to " +
                S(m.layers / chunks + 1) + " layers");
  }
  if (p.pp > 1 && t.mbs > 0 && p.dp > 0 && t.gbs > 0) {
    const std::int64_t mb = t.micro_batches(p);
    if (mb > 0 && mb < p.pp)
      w.push_back("only " + S(mb) + " micro-batches for pp" + S(p.pp) +
                  ": the pipeline never fills (bubble at least (p−1)/(m+p−1) = " + S(p.pp - 1) + "/" +
                  S(mb + p.pp - 1) + ")");
  }
  return w;
}

}  // namespace parsim
