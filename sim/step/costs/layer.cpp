// One transformer layer's pass costs: GEMMs timed by shape, attention, elementwise kernels, fp8 casts, the TP and CP
// communication Megatron issues inside the layer, and recomputation. Sources: Shoeybi et al. 2019 §3 (TP f/g
// operators), Korthikanti et al. 2022 §4.2.2 and §5 (SP, recompute), Micikevicius et al. 2022 (fp8 casts), domain-notes
// §6. The backward is given whole (what 1F1B-class schedules run) and as its two halves for schedules that split it
// (Qi et al. 2024, "Zero Bubble Pipeline Parallelism" §2: B = input gradient, W = weight gradient).
#include "sim/step/costs.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace parsim {

PassCost& PassCost::operator+=(const PassCost& o) {
  compute_s += o.compute_s;
  tp_s += o.tp_s;
  tp_exposed_s += o.tp_exposed_s;
  cp_s += o.cp_s;
  cp_exposed_s += o.cp_exposed_s;
  ep_s += o.ep_s;
  ep_exposed_s += o.ep_exposed_s;
  host_s += o.host_s;
  kernels += o.kernels;
  host_wait_s += o.host_wait_s;
  ep_overlap_s += o.ep_overlap_s;
  offload_wait_s += o.offload_wait_s;
  return *this;
}

PassCost PassCost::operator-(const PassCost& o) const {
  PassCost p = *this;
  p.compute_s -= o.compute_s;
  p.tp_s -= o.tp_s;
  p.tp_exposed_s -= o.tp_exposed_s;
  p.cp_s -= o.cp_s;
  p.cp_exposed_s -= o.cp_exposed_s;
  p.ep_s -= o.ep_s;
  p.ep_exposed_s -= o.ep_exposed_s;
  p.host_s -= o.host_s;
  p.kernels -= o.kernels;
  p.host_wait_s -= o.host_wait_s;
  p.ep_overlap_s -= o.ep_overlap_s;
  p.offload_wait_s -= o.offload_wait_s;
  return p;
}

PassCost PassCost::scaled(double k) const {
  PassCost p = *this;
  p.compute_s *= k;
  p.tp_s *= k;
  p.tp_exposed_s *= k;
  p.cp_s *= k;
  p.cp_exposed_s *= k;
  p.ep_s *= k;
  p.ep_exposed_s *= k;
  p.host_s *= k;
  p.kernels *= k;
  p.host_wait_s *= k;
  p.ep_overlap_s *= k;
  p.offload_wait_s *= k;
  return p;
}

ExpertSplit expert_split(const Scenario& sc) {
  const Plan& pl = sc.plan;
  // With one EP rank every routed pair stays local: the rank's load is exactly k × its tokens whatever the routing.
  // Otherwise the busiest rank carries `moe_imbalance` × the mean, capped by the capacity factor when tokens beyond an
  // expert's capacity are dropped (Megatron-Core --moe-expert-capacity-factor: capacity = tokens·k·factor/E).
  double imb = pl.ep > 1 ? sc.train.moe_imbalance : 1.0;
  if (sc.train.moe_capacity_factor > 0) imb = std::min(imb, std::max(1.0, sc.train.moe_capacity_factor));
  return ExpertSplit{pl.ep, pl.expert_tp(), imb};
}

namespace {

// The MoE layer's extra kernels per forward beside its GEMMs (Megatron-Core moe/router.py, token_dispatcher.py,
// moe_utils.py with --moe-permute-fusion): router score/top-k, the auxiliary-loss statistics (≈ 3 reductions), the
// tokens-per-expert histogram, the fused permute and the fused unpermute: 7 kernels [D, counted from the code path];
// the backward runs each one's gradient kernel(s), ≈ 2×. The alltoall dispatcher's chunk sort by local expert and
// its inverse are 2 kernels more where the plan has them (alltoall_sort below; they were counted here as well as
// there until moe4).
constexpr int kMoeKernelsFwd = 7;
// FlashAttention-2 / FlashAttention-1 kernel speed on the same problem (--attention flash1; sources where it is used).
constexpr double kFlash2OverFlash1 = 2.0;

// The alltoall dispatcher's second permutation (Megatron-Core token_dispatcher.py MoEAlltoAllTokenDispatcher,
// moe_utils.sort_chunks_by_idxs): the all-to-all delivers the received pairs grouped by source rank, and with more
// than one local expert they are re-sorted by local expert before the grouped GEMM and sorted back by rank before
// the combine — each a read and a write of every received pair's hidden vector (2 · R · h · e per sort, 2 sorts per
// forward, 2 kernels). layer_work counts the first permutation and the unpermutation only; flex
// dispatchers (DeepEP / HybridEP) deliver the tokens expert-major and have no such sort [D, counted from the code
// path]. Per forward; none when the plan has no sort.
// Memory-bound work of one pass: the bytes it reads and writes and the kernels it launches (alltoall_sort,
// expert_bias_work, expert_fp8_pad_work).
struct MemoryWork {
  double bytes = 0;
  int kernels = 0;
};
MemoryWork alltoall_sort(const Scenario& sc, const LayerWork& lw, const ExpertSplit& split) {
  const ModelSpec& m = sc.model;
  if (sc.train.moe_dispatcher != MoeDispatcher::AllToAll || split.ep <= 1 || m.experts / split.ep <= 1) return {};
  return {4.0 * lw.routed_tokens_received * static_cast<double>(m.expert_width()) * activation_element_bytes(sc.train.precision),
          2};
}

// Expert biases on the TEGroupedMLP path (models with "bias": GPT-OSS). Megatron-Core experts.py TEGroupedMLP
// _apply_bias (a329dd6da5, 2025-09 "Enable bias in expert mlp [gpt-oss 5/5]", until the packed-bias path of
// 883533e049, 2026-08 — the 26.04.01 and 26.06 containers run it): FC2 returns its bias apart and, because each pair's
// output must be scaled by its routing probability, the bias is applied outside the GEMM, per local expert: the FC2
// output is split by expert and each piece becomes t + b·p (two kernels: b·p materialised, then the add), the pieces
// are concatenated and cast back to the activation type — per element of the FC2 output [R × h], with p_b the bytes
// of the product's type: write b·p (p_b), read t and b·p and write the sum (e + 2·p_b), read and write the
// concatenation (2·p_b), and where the product is wider than e a cast (p_b + e). The probabilities are fp32 with the
// flex dispatchers (token_dispatcher.py: "DeepEP only supports float32 probs", "HybridEP only supports float32
// probs"), so the product is fp32: 4 + 10 + 8 + 6 = 28 B at e = 2; with the alltoall dispatcher they keep the
// router's 16-bit type: 6·e = 12 B. 2 kernels per local expert + the concatenation (+ the cast) forward; the
// backward's mul and reduction kernels follow the generic 2× of the elementwise backward. FC1's bias goes into the
// fused bias-activation kernel (bias_activation_fusion), no pass of its own. The fused grouped MLP
// (--moe-fused-grouped-mlp: TE GroupedLinear ops with bias prob scaling, TransformerEngine 580e7aa28, 2026-04)
// scales and adds it in the GEMM epilogue: none there. [D, counted from the code path.]
MemoryWork expert_bias_work(const Scenario& sc, const LayerWork& lw, const ExpertSplit& split) {
  const ModelSpec& m = sc.model;
  const int local = std::max(1, m.experts / std::max(1, split.ep));
  const double e = activation_element_bytes(sc.train.precision);
  const double pb = sc.train.moe_dispatcher == MoeDispatcher::Flex ? std::max(4.0, e) : e;
  const bool cast = pb > e;
  const double per_element = pb + (e + 2 * pb) + 2 * pb + (cast ? pb + e : 0.0);
  return {per_element * lw.routed_tokens_received * static_cast<double>(m.expert_width()), 2 * local + 1 + (cast ? 1 : 0)};
}

// Elements of this rank's query and key heads in one layer pass: tokens · (a/t + kv_r) · d — what a RoPE rotates
// (× rotary_fraction) and a q/k norm normalises.
double qk_elements(const Scenario& sc, const LayerWork& lw) {
  const ModelSpec& m = sc.model;
  const int t = sc.plan.tp;
  const double tokens = static_cast<double>(sc.train.mbs * sc.train.seq) / sc.plan.cp;
  const double heads = static_cast<double>((m.heads + t - 1) / t), kv = static_cast<double>((m.g() + t - 1) / t);
  return tokens * (heads + kv) * static_cast<double>(lw.attention.head_dim);
}

// The PyTorch stack's memory-bound kernels as eager ATen runs them (no --compile). layer_work counts every norm,
// rotary embedding and activation as one fused kernel (what Transformer Engine, Megatron's fusions and torch.compile's
// Inductor run); eager PyTorch runs the model code's ops one by one [D, counted from the code paths]:
//   RMSNorm (torchtitan's and Hugging Face's LlamaRMSNorm, torch.nn.RMSNorm's composite F.rms_norm): x.float() (read
//     e, write 4), pow(2) (read 4, write 4), mean (read 4), + eps and rsqrt (per-row scalars), x·rsqrt (read 4, write
//     4), .type_as(x) (read 4, write e), · weight (read e, write e): 4e + 28 B per element in 8 kernels, against the
//     fused 2e in 1 — 2e + 28 B and 7 kernels more per norm (the layer's norm_layers over its hidden tokens, a QK
//     norm over its query and key heads). F.layer_norm is one native kernel: nothing more.
//   RoPE (torchtitan / Meta's apply_rotary_emb): xq.float() (read e, write 4), the complex multiply by freqs_cis (read
//     4, write 4), .type_as (read 4, write e): 2e + 16 B per rotated element in 3 kernels for each of q and k, against
//     the fused 2e in 1 (Hugging Face's rotate_half form — neg, cat, two muls, add — moves more, 12e): 16 B and 4
//     kernels more per layer.
//   gated activation (SwiGLU / GeGLU: act(w1·x) * (w3·x)): the activation (read e, write e) and the product (read 2e,
//     write e) apart, 5e per FFN element against the fused 3e: 2e more and 1 kernel.
// The backward's autograd nodes follow the generic 2× of the elementwise backward. Not counted: the attention
// output's transpose copy and repeat_kv's expansion of K and V (both remain under Inductor).
MemoryWork pytorch_eager_work(const Scenario& sc, const LayerWork& lw, bool moe) {
  const ModelSpec& m = sc.model;
  const TrainingConfig& tr = sc.train;
  if (tr.stack != Stack::PyTorch || tr.compile) return {};
  const double e = activation_element_bytes(tr.precision), h = static_cast<double>(m.hidden);
  const int t = sc.plan.tp;
  const double tokens = static_cast<double>(tr.mbs * tr.seq) / sc.plan.cp;
  const double hidden_tokens = tr.sp ? tokens / t : tokens;
  const double qk = qk_elements(sc, lw);
  MemoryWork w;
  // (--fused-rmsnorm: each RMSNorm is one fused kernel, layer_work's 2e per element, as compiled.)
  if (m.norm == NormKind::RMSNorm && !tr.fused_rmsnorm) {
    w.bytes += m.norm_layers * hidden_tokens * h * (2 * e + 28);
    w.kernels += 7 * m.norm_layers;
    if (m.qk_norm != QkNorm::None) {
      w.bytes += qk * (2 * e + 28);
      w.kernels += 2 * 7;
    }
  }
  if (m.position == PositionKind::RoPE && lw.attention.v_head_dim == 0) {
    w.bytes += 16.0 * qk * m.rotary_fraction;
    w.kernels += 4;
  }
  if (m.gated() && !moe) {
    w.bytes += 2 * e * tokens * static_cast<double>((m.ffn_hidden + t - 1) / t);
    w.kernels += 1;
  }
  return w;
}

// PyTorch DDP trains fp32 parameters under torch.autocast (plans/sharding.cpp torch_ddp_bytes: 4 + 8 + 8 B per
// parameter; nanoGPT, Hugging Face Trainer with bf16/fp16=True on an fp32 model): the linears run in 16 bits but the
// residual stream stays fp32 — the embeddings are fp32 and a 16-bit branch output added to it is promoted — and
// autocast runs the norms in fp32 (layer_norm is on its fp32 list; an RMSNorm composite upcasts anyway). Beyond
// layer_work's 16-bit estimate, per element of the hidden stream [D, from the autocast op lists and promotion rules]:
//   each residual add reads the fp32 stream (4) and the branch (e) and writes fp32 (4): 8 + e instead of 3e;
//   each norm reads the fp32 stream: 4 instead of e; eager, it also writes fp32 (4 instead of e) and the next linear's
//     autocast casts that to 16 bits (read 4, write e) — Inductor (--compile) writes the 16-bit copy directly;
// and per weight element of the layer's linears, autocast's 16-bit copy each forward (read 4, write e, one kernel per
// weight) and, backward, the copy's gradient cast back to fp32 (read e, write 4) and, on every micro-batch but the
// first (AccumulateGrad keeps the first gradient as .grad), added into the fp32 .grad (read 4 + 4, write 4): on
// average 4 + e + 12·(m − 1)/m over the step's m micro-batches, in two kernels per weight. Stacks that hold 16-bit
// parameters (FSDP's param_dtype, ZeRO, Megatron) have none of this.
struct AutocastWork {
  double stream_bytes = 0;  // forward elementwise bytes more (its backward follows the generic 2×)
  int stream_kernels = 0;
  double weight_fwd_bytes = 0, weight_bwd_bytes = 0;
  int weights = 0;
};
AutocastWork ddp_autocast_work(const Scenario& sc, const LayerWork& lw) {
  const TrainingConfig& tr = sc.train;
  const bool sixteen_bit = tr.precision == Precision::BF16 || tr.precision == Precision::FP16;
  if (tr.stack != Stack::PyTorch || sc.plan.sharding != Sharding::None || !sixteen_bit) return {};
  const ModelSpec& m = sc.model;
  const double e = activation_element_bytes(tr.precision);
  const int t = sc.plan.tp;
  const double tokens = static_cast<double>(tr.mbs * tr.seq) / sc.plan.cp;
  const double hidden = (tr.sp ? tokens / t : tokens) * static_cast<double>(m.hidden);
  const double adds = m.parallel_attention ? 1.0 : 2.0;
  AutocastWork w;
  w.stream_bytes = hidden * (adds * (8 - 2 * e) + m.norm_layers * ((4 - e) + (tr.compile ? 0.0 : 8.0)));
  w.stream_kernels = tr.compile ? 0 : m.norm_layers;
  double kn = 0;
  for (const GemmShape& g : lw.gemms) {
    kn += static_cast<double>(g.k) * static_cast<double>(g.n);
    ++w.weights;
  }
  w.weight_fwd_bytes = kn * (4 + e);
  const double m_b = static_cast<double>(std::max<std::int64_t>(1, tr.micro_batches(sc.plan)));
  w.weight_bwd_bytes = kn * (4 + e + 12 * (m_b - 1) / m_b);
  return w;
}

// The routed experts' GEMM of one role (fc1 or fc2, forward or a gradient) over `groups` local experts of one shape.
// TEGroupedMLP (Megatron-Core experts.py over Transformer Engine GroupedLinear, the default): one cuBLAS GEMM per local
// expert, issued round-robin on TE's compute streams (transformer_engine/common/util/multi_stream.cpp
// get_num_compute_streams() = 4; nvte_multi_stream_cublas_gemm), so at most 4 experts' tiles share the SMs' waves at a
// time and each batch of ≤ 4 pays its own tail and launch gap. The fused grouped MLP (--moe-fused-grouped-mlp: TE's
// CuTe-DSL grouped GEMM, Megatron-Bridge cutedsl_fused_grouped_mlp) is one launch over all local experts.
constexpr int kTeGemmStreams = 4;
// fast_accum: a forward GEMM (fp8 fast accumulation, gemm_time_s).
double routed_gemm_s(const Hardware& hw, const TrainingConfig& tr, int groups, std::int64_t m, std::int64_t n,
                     std::int64_t k, bool fast_accum = false) {
  const Precision p = tr.precision;
  if (groups == 1) return gemm_time_s(hw, m, n, k, p, fast_accum);
  if (tr.moe_fused_grouped_mlp || groups <= kTeGemmStreams) return grouped_gemm_time_s(hw, groups, m, n, k, p, fast_accum);
  const int full = groups / kTeGemmStreams, rest = groups % kTeGemmStreams;
  return full * grouped_gemm_time_s(hw, kTeGemmStreams, m, n, k, p, fast_accum) +
         (rest > 0 ? grouped_gemm_time_s(hw, rest, m, n, k, p, fast_accum) : 0.0);
}

// The routed experts' GEMMs of an MoE layer as layer_work lists them (models/flops.cpp routed_expert_gemms: fc1, fc2
// per local expert, after every other GEMM): the shapes of fc1 and fc2 and how many local experts run them — the
// groups of routed_gemm_s. None (groups 0) in a dense layer.
struct RoutedGemms {
  const GemmShape* fc1 = nullptr;
  const GemmShape* fc2 = nullptr;
  int groups = 0;
};
RoutedGemms routed_gemms(const LayerWork& lw) {
  RoutedGemms r;
  for (const GemmShape& g : lw.gemms) {
    if (g.kind != GemmKind::RoutedExpert) continue;
    if (std::strcmp(g.name, "expert_fc1") == 0) {
      if (!r.fc1) r.fc1 = &g;
      ++r.groups;
    } else if (!r.fc2) {
      r.fc2 = &g;
    }
  }
  return r;
}

// Forward GEMMs that a recompute re-runs, timed by shape as the forward times them, and under fp8 their input casts —
// the input X[m×k] and the weight W[k×n] quantised, fp8_cast_bytes_per_element each — as one memory-bound batch of
// two kernels per GEMM (selective_recompute's modules, --recompute op).
struct RerunGemms {
  const Hardware& hw;
  Precision precision;
  double time = 0, cast_bytes = 0;
  int cast_kernels = 0;
  // The fp8 casts' bytes of one GEMM shape (a grouped GEMM's groups add their bytes, its kernels are counted once).
  void cast(const GemmShape& g) { cast(g.m, g.n, g.k); }
  void cast(std::int64_t m, std::int64_t n, std::int64_t k) {
    if (precision == Precision::FP8)
      cast_bytes += hw.gpu.compute.fp8_cast_bytes_per_element *
                    (static_cast<double>(m) * static_cast<double>(k) + static_cast<double>(k) * static_cast<double>(n));
  }
  void gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
    time += gemm_time_s(hw, m, n, k, precision, true);
    cast(m, n, k);
    cast_kernels += 2;
  }
  double cast_time() const {
    return cast_kernels > 0 && cast_bytes > 0 ? memory_bound_time_s(hw, cast_bytes, cast_kernels) : 0.0;
  }
};

// The clamp of the routed experts' activation inputs on the TEGroupedMLP path (models with "activation_clamp":
// GPT-OSS swiglu_limit 7.0). Megatron-Core's bias-activation fusion for GPT-OSS (Megatron-Bridge gpt_oss_bridge.py:
// quick_gelu, activation_func_clamp_value 7.0, glu_linear_offset 1.0, bias_activation_fusion True) calls
// fused_bias_geglu.py weighted_bias_quick_geglu_impl, which — in the Megatron-LM commits the 26.04.01 and 26.06
// containers pin (Megatron-Bridge 3rdparty/Megatron-LM 4415119414 and 0022550753) — clamps outside the fused
// function in eager PyTorch: x_glu, x_linear = input.chunk(2), then torch.cat((x_glu.clamp(max=c),
// x_linear.clamp(-c, c))) before WeightedQuickGeGLUFunction. Per element of the FC1 output half (f = f_e/etp per
// received pair, e bytes): forward two clamps (read f, write f each) and the concatenation (read 2f, write 2f) =
// 8f·e in 3 kernels; backward autograd runs both clamps' gradients (read the gradient and the saved input, write:
// 3f each) and the chunk's gradient, a concatenation of the two halves (read 2f, write 2f) = 10f·e in 3 kernels.
// moe_act recompute re-runs the forward part (the checkpoint wraps the whole bias_act_func). The fused grouped MLP
// (--moe-fused-grouped-mlp) applies the activation in its GEMM epilogue: none there. [D, counted from the code path.]
struct ClampWork {
  double fwd_bytes = 0, bwd_bytes = 0;
  int kernels = 0;  // each direction
};
ClampWork expert_clamp_work(const Scenario& sc, const LayerWork& lw) {
  const ModelSpec& m = sc.model;
  if (!m.eager_activation_clamp(sc.train.moe_fused_grouped_mlp)) return {};
  const RoutedGemms rg = routed_gemms(lw);
  if (rg.groups == 0) return {};
  const double f = lw.routed_tokens_received * static_cast<double>(rg.fc2->k) * activation_element_bytes(sc.train.precision);
  return {8.0 * f, 10.0 * f, 3};
}

// Megatron-Core's RoPE without its fusion (--no-rope-fusion: apply_rope_fusion off — Megatron-LM --no-rope-fusion; what
// Megatron-Bridge's GPTModelProvider.provide forces for every position_embedding_type other than "rope", e.g.
// GPT-OSS's "yarn" (src/megatron/bridge/utils/fusions.py validate_rope_fusion_compatibility, @21d102f5e and
// @63b08b397), and what models/common/embeddings/rope_utils.py apply_rotary_pos_emb falls back to under the fusion
// whenever mscale != 1). layer_work prices TE's fused kernel: one read and one write of each rotated element (2e),
// one kernel each way. The unfused path, rope_utils.py _apply_rotary_pos_emb_bshd, per tensor (q, then k) [D, counted
// from the code path]:
//   forward: cos(freqs)·mscale and sin(freqs)·mscale cast to the activation type (6 small kernels on [s, d]);
//     t·cos (read e, write e), _rotate_half's -x2 (e/2 + e/2) and cat((-x2, x1)) (2e), ·sin (2e), the add (read 2e,
//     write e), and the final torch.cat((t, t_pass)) with an empty t_pass, a copy (2e): 12e in 6 kernels + 6 small;
//   backward (autograd): grad·sin and grad·cos (2e each), the neg of the half (e), the chunk's backward cat (2e), the
//     empty t_pass slice's backward — a zero tensor of t's shape (write e) — and the accumulation of the three
//     gradients of t (two adds, 3e each): 14e in 7 kernels.
// Beyond the fused 2e: 10e forward in 11 kernels, 12e backward in 6 kernels, per rotated element. The rotated
// elements per token are those layer_work rotates: (a/t + kv_r)·d·rotary_fraction. Its own forward and backward
// traffic (not the generic 2×). Megatron-Core stacks only: eager PyTorch prices its own RoPE (pytorch_eager_work),
// compiled PyTorch fuses it. Multi-latent attention is refused by plans/validate.cpp.
struct RopeWork {
  double fwd_bytes = 0, bwd_bytes = 0;
  int fwd_kernels = 0, bwd_kernels = 0;
};
RopeWork unfused_rope_work(const Scenario& sc, const LayerWork& lw) {
  const ModelSpec& m = sc.model;
  const TrainingConfig& tr = sc.train;
  if (tr.stack != Stack::Megatron || tr.rope_fusion || m.position != PositionKind::RoPE ||
      lw.attention.v_head_dim != 0)
    return {};
  const double rotated = qk_elements(sc, lw) * m.rotary_fraction;
  const double e = activation_element_bytes(tr.precision);
  return {10 * e * rotated, 12 * e * rotated, 2 * 11, 2 * 6};
}

// fp8 alignment of the routed experts' token groups on the TEGroupedMLP path. An fp8 GEMM needs each group's rows in
// multiples of the quantisation block (Transformer Engine get_align_size_for_quantization: 32 for MXFP8 / NVFP4, 16
// for the per-tensor and current-scaling recipes), and the per-expert token counts the router produces are not (a
// count is a multiple of 16 with probability 1/16, so with several local experts the copy nearly always runs — also
// under forced load balancing, whose random routing balances the counts only on average). Megatron-Core experts.py
// TEGroupedMLP.forward therefore, with config.fp8, passes the permuted hidden states and the permuted probabilities
// through TE Fp8Padding (pytorch/module/fp8_padding.py: unless every split is already aligned, fused_multi_row_padding
// copies the [R × h] input into a padded buffer, the [R] probabilities likewise) and the FC2 output through
// Fp8Unpadding (fused_multi_row_unpadding: [R × h] copied back); autograd runs the inverse copy of each gradient. Per
// direction: read and write R·h·e twice = 4·R·h·e bytes in 3 kernels (the probabilities' copy is ≈ 1/h of the bytes).
// Megatron-Core's moe_router_padding_for_fp8 pads the routing map instead and skips these copies; the Megatron-Bridge
// performance recipes of the validation rows leave it at its default, False (scripts/performance/configs/qwen/
// qwen3_llm_pretrain.py, src/megatron/bridge/recipes/deepseek/deepseek_v3.py; MCore transformer_config.py;
// parsim has no option for it). The fused grouped MLP (--moe-fused-grouped-mlp) takes
// device-side group offsets and has no such copy. The padded rows' extra GEMM work (≤ align − 1 rows per local expert)
// is < 1 % of a group and not counted. [D, counted from the code path.] Returns one direction's work (the same each
// way).
MemoryWork expert_fp8_pad_work(const Scenario& sc, const LayerWork& lw) {
  if (sc.train.precision != Precision::FP8 || sc.train.moe_fused_grouped_mlp) return {};
  if (routed_gemms(lw).groups == 0) return {};
  return {4.0 * lw.routed_tokens_received * static_cast<double>(sc.model.expert_width()) *
              activation_element_bytes(sc.train.precision),
          3};
}

struct MambaTimes {
  double fwd = 0, bwd = 0;
};
// Each direction at its bytes, or at its FLOPs at the bf16 GEMM rate if that were longer, plus the launches — on the
// stack's kernel profile `hw` (layer_costs' CostContext hardware: the Megatron profile and its sustained fraction).
// The chunked scan's Triton kernels do not stream their bytes at the achievable bandwidth: they move them at
// kSsdBandwidthShare = 0.42 of it (costs.hpp). [M, H100] vLLM pull request #27299 (2025-10-25, "Mamba2 SSD add fused
// kernel", microbenchmark on one H100 by its reviewers) times the "Original" forward — vLLM's copy of mamba_ssm's
// _chunk_cumsum_fwd, _chunk_state_fwd, _state_passing_fwd, _bmm_chunk_fwd and _chunk_scan_fwd, the kernels
// mamba_split_conv1d_scan_combined runs between the conv and the norm — at granite-4.0-h-small's shape (H 128,
// P 64, G 1, N 128, chunk Q 256; no z gate): 1.262, 1.292, 1.180, 1.107, 1.070 and 1.082 × 10⁷ tokens/s at 8,192 …
// 262,144 tokens, mean 1.166 × 10⁷ = 85.8 ns per token (below 8,192 tokens a fixed ≈ 0.28 ms per call dominates).
// mamba_work's count of those kernels' bytes at that shape (cumsum 10H, chunk states 2HP + 2GN + 8H + 4HPN/Q, state
// passing 6HPN/Q + 4H/Q, C·Bᵀ 4GN + 4GQ, chunk scan without z 4GQ + 4HP + 8H + 2GN + 2HPN/Q; the final state per
// sequence negligible) is 104,834 B per token = 36.0 ns at H100's 3.35 TB/s × 0.87: 36.0 / 85.8 = 0.42 (0.39 … 0.46
// over the sizes; the same pull request's one fused kernel runs at 2.3 × 10⁷ tokens/s, ≈ 0.8 of the achievable rate
// on that count, so the count is not what is slow). Their backward (chunk_scan / chunk_state / state-passing / bmm
// backward kernels, the same Triton style) is taken at the same share [E], and so is every other GPU [E: measured on
// H100 only]. The conv1d (causal-conv1d's CUDA kernel), the gated norm and the PyTorch glue stream at the full rate.
MambaTimes mamba_times(const Hardware& hw, const Scenario& sc, const LayerWork& lw) {
  const MambaWork w = mamba_work(sc, lw);
  if (w.fwd_kernels == 0) return {};
  const double rate = hw.gpu.peak_bf16 * hw.gpu.compute.gemm_ceiling * sustained_fraction(hw);
  // The scan kernels' bytes at kSsdBandwidthShare of the achievable bandwidth: counted as that many more bytes.
  auto priced = [&](double bytes, double ssd_bytes, double flops, int kernels) {
    const double streamed = bytes + ssd_bytes * (1.0 / kSsdBandwidthShare - 1.0);
    return memory_bound_time_s(hw, streamed, kernels) +
           std::max(0.0, flops / rate - memory_bound_time_s(hw, streamed, 0));
  };
  return {priced(w.fwd_bytes, w.ssd_fwd_bytes, w.fwd_flops, w.fwd_kernels),
          priced(w.bwd_bytes, w.ssd_bwd_bytes, w.bwd_flops, w.bwd_kernels)};
}

// A sliding-window layer's attention as the flash kernels run it (FlashAttention-2 csrc/flash_attn/src
// flash_fwd_launch_template.h: run_mha_fwd_hdim64 / hdim128 use 128-query × 128-key tiles — FlashAttention-3's
// hdim-64 forward 192 × 128 — and flash_fwd_kernel.h visits, for query block j, the key blocks from
// ⌊max(0, j·M − w + 1)/N⌋ to ⌊(j·M + M − 1)/N⌋; Megatron passes window_size (w − 1, 0), GPT-OSS w = 128): every
// visited tile is computed whole (the band's edges are masked inside it), so a query block of M = 128 with w = 128
// computes 2 key tiles — 256 keys per query where the pair count (AttentionShape::forward_flops) has ≈ 128. Summed
// exactly over the query blocks of the whole sequence (the first blocks visit fewer tiles); a CP rank holding
// s_q = s/c load-balanced queries does 1/c of it. The tiles are counted explicitly, so the non-causal curves apply
// (attn_causal_efficiency is the diagonal-tile waste and imbalance of a causal s² kernel). With so short a key loop
// the kernel's fixed work per query block — loading Q, filling the pipeline, writing O and the softmax statistics —
// is not amortised: layer_costs prices the tiles at the curve's long-loop rate (kLongLoopKeys) and adds the per-block work as
// attn_block_overhead_tiles more tile iterations per block, (T + c)/T for T tiles per block (cuDNN's measured
// windowed kernels on GB200 and H200, hardware/presets: c = 4.44 and 1.62, i.e. a window-128 layer runs at 0.31 and
// 0.55 of the long-loop tile rate). tiles_per_block 0: not a window narrower than the sequence (the causal
// full-sequence count applies). [D, FA2/FA3 tile sizes; M, cuDNN 9.27 benchmark tables.]
constexpr std::int64_t kAttnTileQ = 128, kAttnTileK = 128;
// A key loop long enough that the attention curves' sequence ramp s/(s + s_half) is within 0.04 % of 1 (s_half ≤ 400).
constexpr std::int64_t kLongLoopKeys = std::int64_t{1} << 20;
struct WindowTiles {
  double flops = 0;
  double tiles_per_block = 0;
};
WindowTiles window_tiles(const AttentionShape& at) {
  if (!at.causal || at.window <= 0 || at.window >= at.seq_kv) return {};
  const std::int64_t s = at.seq_kv, w = at.window;
  const std::int64_t blocks = (s + kAttnTileQ - 1) / kAttnTileQ;
  std::int64_t tiles = 0;
  for (std::int64_t j = 0; j < blocks; ++j) {
    const std::int64_t first = std::max<std::int64_t>(0, j * kAttnTileQ - w + 1) / kAttnTileK;
    const std::int64_t last = std::min(s - 1, j * kAttnTileQ + kAttnTileQ - 1) / kAttnTileK;
    tiles += last - first + 1;
  }
  const double dims = at.v_head_dim > 0 ? static_cast<double>(at.head_dim + at.v_head_dim)
                                        : 2.0 * static_cast<double>(at.head_dim);
  // Pairs computed over the whole sequence: tiles · M · N, scaled to this rank's s_q of the s queries.
  const double pairs = static_cast<double>(tiles) * kAttnTileQ * kAttnTileK *
                       (static_cast<double>(at.seq_q) / static_cast<double>(s));
  WindowTiles out;
  out.flops = 2.0 * static_cast<double>(at.batch) * static_cast<double>(at.heads) * dims * pairs;
  out.tiles_per_block = static_cast<double>(tiles) / static_cast<double>(blocks);
  return out;
}

// cuDNN's fp8 fused attention against its bf16 kernel (--fp8-attention: Megatron-Core fp8_dot_product_attention, TE
// fp8_dpa; with Blackwell's MXFP8 recipes Transformer Engine quantises Q, K, V and dO block-scaled, backends.py
// MXFP8Quantizer). Measured in cudnn-frontend's training SDPA tables of 2026-04-24 on GB200 (cuDNN 9.22, batch 2,
// causal "top_left"; fp8 time / bf16 time, mean over 4,096 / 8,192 / 16,384 / 32,768 tokens) [M]:
//   head dim 64 (GPT-OSS, 128 heads, window 128): forward 0.210/0.210, 0.417/0.414, 0.826/0.822 ms → 1.00 (1,637 vs
//     2,634 µs at 32k left out: the bf16 row is the outlier); backward: the mxfp8 kernel does not skip the window's
//     tiles — 2.080 / 7.427 / 27.940 / 108.37 ms, ×3.6–3.9 per doubling (the full causal triangle's s²), against bf16's
//     0.465 / 0.911 / 1.818 / 3.692 (linear) — at 4,096 tokens 2.080 ms for the triangle's 2.5 · 5.50e11 FLOP =
//     661 TFLOP/s, the rate of a bf16 causal backward at this head size: ratio 1.00 on the triangle;
//   head dim 128 (Llama-3.1, 64 / 8 heads): forward 0.326/0.391, 1.156/1.397, 4.400/5.150, 17.201/21.692 → 0.827;
//     backward 1.305/1.198, 4.272/4.127, 15.315/16.554, 61.716/71.756 → 0.977;
//   head dim 192 (DeepSeek-V3 MLA, d_v 128, 128 heads): forward 0.714/0.977, 2.478/3.470, 9.337/13.103, 37.773/50.456
//     → 0.727; backward 2.620/3.383, 9.567/11.984, 36.835/50.424, 149.238/212.546 → 0.751.
// The gain grows with the head size (more tensor-core work per softmax element, which fp8 does not speed up);
// linear in the query/key head size between the measured 64, 128 and 192, constant beyond. Per-tensor fp8 recipes
// (the same tables' "fp8" rows: 0.770 / 0.858 at head dim 128) run somewhat faster than this; Transformer Engine's
// quantisation kernels around the attention are not counted. [M on GB200; applied to every GPU, E elsewhere.]
struct Fp8AttentionRatio {
  double fwd = 1, bwd = 1;
};
Fp8AttentionRatio fp8_attention_ratio(std::int64_t head_dim) {
  constexpr double d[] = {64, 128, 192}, fwd[] = {1.00, 0.827, 0.727}, bwd[] = {1.00, 0.977, 0.751};
  const double x = std::clamp(static_cast<double>(head_dim), d[0], d[2]);
  const int i = x <= d[1] ? 0 : 1;
  const double t = (x - d[i]) / (d[i + 1] - d[i]);
  return {fwd[i] + t * (fwd[i + 1] - fwd[i]), bwd[i] + t * (bwd[i + 1] - bwd[i])};
}

struct GemmTimes {
  double f = 0, dgrad = 0, wgrad = 0;
  GemmTimes& operator+=(const GemmTimes& o) {
    f += o.f, dgrad += o.dgrad, wgrad += o.wgrad;
    return *this;
  }
};

}  // namespace

TpHalves tp_halves(const Scenario& sc, LayerKind kind) {
  TpHalves h;
  h.mixer = kind.has_mixer() ? 1.0 : 0.0;
  if (kind.ffn == FfnKind::Dense) h.ffn = 1.0;
  if (kind.ffn == FfnKind::MoE) h.ffn = !sc.train.sp || sc.model.shared_experts > 0 ? 1.0 : 0.0;
  return h;
}

// A Mamba-2 mixer's memory-bound kernels as Megatron-Core trains them (megatron/core/ssm/mamba_mixer.py
// MambaMixer._ssm_training at Megatron-LM d98e8a64dd: use_mamba_mem_eff_path, the default) — in_proj and out_proj are
// the layer's GEMMs, timed by shape; between them mamba_split_conv1d_scan_combined (state-spaces/mamba
// mamba_ssm/ops/triton/ssd_combined.py @e9594ce1: causal_conv1d, _chunk_cumsum, _chunk_state, _state_passing,
// _bmm_chunk, _chunk_scan with the SiLU(z) gate fused, no norm or out_proj passed) and the grouped RMSNorm
// (layernorm_gated.py, group size d_inner/G, rstd fp32). Per token on one TP rank (H heads, G groups, P head dim, N
// state, Q chunk, C = H·P + 2GN conv channels, W = 2·H·P + 2GN + H the in_proj width, e bytes per activation element,
// fp32 internals 4 B), each kernel's tensors read and written once (re-reads inside a kernel hit L2) [D, counted from
// the code path]:
//   forward   conv1d 2e·C; cumsum e·H + 8H; chunk states e·H·P + e·GN + 8H + 4HPN/Q; state passing
//             4HPN/Q + e·HPN/Q + 4H/Q + 4HPN/L (the fp32 final state per sequence of L); C·Bᵀ 2e·GN + 4GQ;
//             chunk scan 4GQ + 4e·HP + 8H + e·GN + e·HPN/Q; norm 2e·HP + 4G — 11 launches (4 of them the A_log and
//             dt_bias casts), and with b > 1 the two rearrange(...).contiguous() copies, 2e·W + 2e·HP in 2 more.
//   backward  norm 3e·HP + 4G; the recompute of the conv, dt, C·Bᵀ, chunk states and state passing (fp32)
//             2e·C + 2e·H + e·H + 8H + 2e·GN + 4GQ + e·HP + e·GN + 8H + 4HPN/Q + 8HPN/Q + 4H/Q + 4HPN/L; dz and
//             dout_x 6e·HP; dstates e·HP + e·GN + 4H + 4HPN/Q; state-passing backward 8HPN/Q + 2e·HPN/Q + 4H/Q;
//             dx 3e·HP + 4GQ + 12H + e·GN + e·HPN/Q; dB e·HP + e·HPN/Q + 12H + e·GN + 4GN and its sum 8GN; dC the
//             same; dCB 2e·HP + 8H + 4GQ and its sum 8GQ; the two bmm backwards 2·(4GQ + 2e·GN + 4GN); ddA
//             2e·HP + 8H + 4GQ + 8HQ/64 + 4H; conv backward 3e·C; the dt and ddA bookkeeping (zero fills, cumsums,
//             flips, adds) 4H·3 + 8H + 24H + 24H + 8H + 2e·H + 12H/Q — 53 launches.
// At e = 2 (Nemotron-3-Nano, t = 1: H 64, P 64, N 128, G 8, Q 128, L 8192) 149,410 B forward and 464,042 B backward per
// token. The SSD's matmuls (tl.dot; causal blocks skipped at 64-row tiles) are 4HPN + 2GQN + HP(Q + 64) FLOPs per
// token forward and 10HPN + 6GQN + 3HP(Q + 64) backward (recompute included) — about 40 FLOP/B, far below the
// GPUs' ridge points: each direction is priced at its bytes, or at its FLOPs at the bf16 GEMM rate if that were
// longer. Not modelled: L2 reuse across kernels (small micro-batches run faster), re-reads of a group's B, C and C·Bᵀ
// by each of its heads when L2 does not hold them (up to +38 % forward, +22 % backward), deterministic mode's
// workspaces. The mixer runs in 16 bits under fp8 recipes (Transformer Engine quantises the GEMMs only).
MambaWork mamba_work(const Scenario& sc, const LayerWork& lw) {
  const SsmShape& x = lw.ssm;
  if (x.tokens <= 0) return {};
  const double e = activation_element_bytes(sc.train.precision);
  const double H = static_cast<double>(x.heads), P = static_cast<double>(x.head_dim), N = static_cast<double>(x.state);
  const double G = static_cast<double>(x.groups), Q = static_cast<double>(x.chunk);
  const double HP = H * P, GN = G * N, GQ = G * Q, HPN = H * P * N, C = static_cast<double>(x.conv_channels);
  const double W = 2 * HP + 2 * GN + H, L = static_cast<double>(sc.train.seq) / sc.plan.cp, BM = 64;
  const bool copies = sc.train.mbs > 1;
  // The chunked scan's Triton kernels (cumsum, chunk states, state passing, C·Bᵀ, chunk scan), and the rest.
  const double ssd_fwd = (e * H + 8 * H) + (e * HP + e * GN + 8 * H + 4 * HPN / Q) +
                         (4 * HPN / Q + e * HPN / Q + 4 * H / Q + 4 * HPN / L) + (2 * e * GN + 4 * GQ) +
                         (4 * GQ + 4 * e * HP + 8 * H + e * GN + e * HPN / Q);
  const double fwd = 2 * e * C + ssd_fwd + (2 * e * HP + 4 * G) + (copies ? 2 * e * W + 2 * e * HP : 0.0);
  const double ssd_bwd =
      (2 * e * H + e * H + 8 * H + 2 * e * GN + 4 * GQ + e * HP + e * GN + 8 * H + 4 * HPN / Q + 8 * HPN / Q +
       4 * H / Q + 4 * HPN / L) +                                                               // recompute (bar conv)
      6 * e * HP +                                                                              // dz, dout_x
      (e * HP + e * GN + 4 * H + 4 * HPN / Q) +                                                 // dstates
      (8 * HPN / Q + 2 * e * HPN / Q + 4 * H / Q) +                                             // state passing
      (3 * e * HP + 4 * GQ + 12 * H + e * GN + e * HPN / Q) +                                   // dx
      2 * (e * HP + e * HPN / Q + 12 * H + e * GN + 4 * GN + 8 * GN) - 4 * H +                  // dB, dC (+ sums)
      (2 * e * HP + 8 * H + 4 * GQ + 8 * GQ) +                                                  // dCB (+ sum)
      2 * (4 * GQ + 2 * e * GN + 4 * GN) +                                                      // bmm backwards
      (2 * e * HP + 8 * H + 4 * GQ + 8 * H * Q / BM + 4 * H);                                   // ddA
  const double bwd = (3 * e * HP + 4 * G) +                                                     // norm
                     2 * e * C +                                                                // conv recompute
                     ssd_bwd +                                                                  // the scan's
                     3 * e * C +                                                                // conv backward
                     (3 * 4 * H + 8 * H + 24 * H + 24 * H + 8 * H + 2 * e * H + 12 * H / Q);    // dt / ddA glue
  const double tokens = static_cast<double>(x.tokens);
  MambaWork w;
  w.fwd_bytes = tokens * fwd;
  w.bwd_bytes = tokens * bwd;
  w.ssd_fwd_bytes = tokens * ssd_fwd;
  w.ssd_bwd_bytes = tokens * ssd_bwd;
  w.fwd_flops = tokens * (4 * HPN + 2 * GQ * N + HP * (Q + BM));
  w.bwd_flops = tokens * (10 * HPN + 6 * GQ * N + 3 * HP * (Q + BM));
  w.fwd_kernels = 11 + (copies ? 2 : 0);
  w.bwd_kernels = 53;
  return w;
}

// What selective recompute re-runs in one layer's backward, by Megatron-Core module (--recompute-modules;
// megatron/core/transformer/transformer_config.py `recompute_modules`, default ["core_attn"]), each as the forward
// work of that module on this rank, timed like the forward (GEMMs by shape, memory-bound kernels by bytes, fp8 casts
// of the recomputed GEMMs' inputs, the module's own TP / EP communication):
//   core_attn       the attention core's forward (attn_f).
//   layernorm       the norms that are separate modules in the Transformer Engine layer spec (gpt_layer_specs.py:
//                   MLA's input norm, an MoE layer's pre-MLP norm; the others are fused into a LayerNormLinear and
//                   not recomputed): read h, write h per token of the SP shard, one kernel each.
//   moe_act         the routed experts' activation (experts.py, CheckpointWithoutOutput around the bias-activation):
//                   read the FC1 output (gated 2, plain 1 per column), write the activation output, per routed pair.
//   mla_up_proj     the q (or q without LoRA) and kv up-projection GEMMs and RoPE on Q and the shared rope key
//                   (multi_latent_attention.py qkv_up_proj_and_rope_apply).
//   mlp             a dense layer's MLP (transformer_layer.py, tensor_parallel.checkpoint around self.mlp): FC1 with
//                   its fused norm, the activation, FC2, and the MLP half's TP collectives (AG + RS with SP, else AR).
//   shared_experts  the shared experts' GEMMs, activation and TP collectives (shared_experts.py).
//   moe             the whole MoE block (moe_layer.py): router, permutation / sort kernels, routed and shared
//                   experts, the dispatch and combine exchanges and the shared experts' TP collectives; it includes
//                   moe_act and shared_experts.
PassCost selective_recompute(const CostContext& c, LayerKind kind, const LayerWork& lw, double attn_f, double tp_f,
                             const MoeComm& ep) {
  const Scenario& sc = c.sc;
  const ModelSpec& m = sc.model;
  const TrainingConfig& tr = sc.train;
  const Hardware& hw = c.hw;
  const RecomputeModules r = tr.recompute_modules;
  PassCost p;
  if (r.has(RecomputeModule::CoreAttn)) p.compute_s += attn_f;
  if (r == RecomputeModules{}) return p;  // the default: the attention core only
  const int t = sc.plan.tp;
  const bool moe = kind.ffn == FfnKind::MoE, mla = kind.attention == AttentionKind::MLA;
  const double e = activation_element_bytes(tr.precision), h = static_cast<double>(m.hidden);
  const double tokens = static_cast<double>(tr.mbs * tr.seq) / sc.plan.cp;
  const double sp_tokens = tokens / (tr.sp ? t : 1);
  const double act_rw = m.gated() ? 3.0 : 2.0;  // activation: read gate (+ up), write the output
  // Forward time of the GEMMs selected by `pick` (the routed experts as two grouped GEMMs over the local experts, as
  // layer_costs times them), plus their fp8 input casts.
  const RoutedGemms rg = routed_gemms(lw);
  auto gemms_fwd = [&](auto pick) {
    RerunGemms run{hw, tr.precision};
    bool routed = false;
    for (const GemmShape& g : lw.gemms) {
      if (!pick(g)) continue;
      if (g.kind == GemmKind::RoutedExpert) {
        run.cast(g);
        routed = true;
        continue;
      }
      run.gemm(g.m, g.n, g.k);
    }
    if (routed)
      for (const GemmShape* g : {rg.fc1, rg.fc2}) {
        run.time += routed_gemm_s(hw, tr, rg.groups, g->m, g->n, g->k, true);
        run.cast_kernels += 2;
      }
    return run.time + run.cast_time();
  };
  // The MLP half's TP collectives (layer_costs' tp_f holds two halves, except an MoE layer under SP without shared
  // experts, where it holds the attention half only).
  const TpHalves halves = tp_halves(sc, kind);
  const double mlp_tp = halves.total() > 0 ? tp_f * halves.ffn / halves.total() : 0.0;
  auto k_of = [&](const char* name) -> double {
    for (const GemmShape& g : lw.gemms)
      if (std::strcmp(g.name, name) == 0) return static_cast<double>(g.k);
    return 0.0;
  };
  if (r.has(RecomputeModule::LayerNorm)) {
    const int norms = (mla ? 1 : 0) + (moe ? 1 : 0);
    if (norms > 0) p.compute_s += memory_bound_time_s(hw, norms * 2.0 * sp_tokens * h * e, norms);
  }
  if (mla && r.has(RecomputeModule::MlaUpProj)) {
    p.compute_s += gemms_fwd([](const GemmShape& g) {
      const std::string n = g.name;
      return n == "q_up" || n == "q_proj" || n == "kv_up";
    });
    if (m.position == PositionKind::RoPE) {
      const double a_r = std::ceil(static_cast<double>(m.heads) / t);
      p.compute_s += memory_bound_time_s(hw, 2.0 * tokens * (a_r + 1) * static_cast<double>(m.qk_rope_head_dim) * e, 2);
    }
  }
  if (!moe && r.has(RecomputeModule::Mlp)) {
    const double ffn_f = gemms_fwd([](const GemmShape& g) { return g.kind == GemmKind::Ffn; });
    p.compute_s += ffn_f + memory_bound_time_s(hw, 2.0 * sp_tokens * h * e + tokens * act_rw * k_of("ffn_out") * e, 2);
    if (mlp_tp > 0) add_tp_comm(c, p, mlp_tp, ffn_f);
  }
  if (moe) {
    const double shared_act = tokens * act_rw * k_of("shared_out") * e;
    if (r.has(RecomputeModule::Moe)) {
      const double moe_f = gemms_fwd([](const GemmShape& g) {
        return g.kind == GemmKind::Router || g.kind == GemmKind::SharedExpert || g.kind == GemmKind::RoutedExpert ||
               g.kind == GemmKind::MoeLatent;
      });
      const double shared_f = gemms_fwd([](const GemmShape& g) { return g.kind == GemmKind::SharedExpert; });
      // The MoE block's memory-bound work as layer_work counts it (router scores, permute / unpermute, the
      // activations) plus the alltoall dispatcher's chunk sort when layer_costs prices it.
      // (The routed activation is in the fused grouped MLP's GEMM epilogue with --moe-fused-grouped-mlp.)
      const bool fused = tr.moe_fused_grouped_mlp;
      double bytes = sp_tokens * (e + 4.0) * m.experts +
                     4.0 * lw.routed_tokens_sent * static_cast<double>(m.expert_width()) * e +
                     (fused ? 0.0 : lw.routed_tokens_received * act_rw * k_of("expert_fc2") * e) + shared_act;
      int kernels = kMoeKernelsFwd + (fused ? 0 : 1);
      const MemoryWork sort = alltoall_sort(sc, lw, expert_split(sc));
      bytes += sort.bytes;
      kernels += sort.kernels;
      const ClampWork clamp = expert_clamp_work(sc, lw);  // the clamped activation inputs' forward
      bytes += clamp.fwd_bytes;
      kernels += clamp.kernels;
      p.compute_s += moe_f + memory_bound_time_s(hw, bytes, kernels);
      if (mlp_tp > 0) add_tp_comm(c, p, mlp_tp, shared_f);
      add_ep_comm(c, p, ep.fwd_s, ep.a2a_fwd_s, shared_f, 0.0);
    } else {
      if (r.has(RecomputeModule::MoeAct)) {
        const ClampWork clamp = expert_clamp_work(sc, lw);  // the clamped activation inputs' forward, re-run too
        p.compute_s += memory_bound_time_s(hw, lw.routed_tokens_received * act_rw * k_of("expert_fc2") * e +
                                                   clamp.fwd_bytes, 1 + clamp.kernels);
      }
      if (r.has(RecomputeModule::SharedExperts) && m.shared_experts > 0) {
        const double shared_f = gemms_fwd([](const GemmShape& g) { return g.kind == GemmKind::SharedExpert; });
        p.compute_s += shared_f + memory_bound_time_s(hw, shared_act, 1);
        if (mlp_tp > 0) add_tp_comm(c, p, mlp_tp, shared_f);
      }
    }
  }
  return p;
}

// Megatron's FusedScaleMaskSoftmax (megatron/model/fused_softmax.py of Megatron-LM and Megatron-DeepSpeed,
// megatron/core/fusions/fused_softmax.py of Megatron-Core's local spec; vTrain's replica of the Megatron-DeepSpeed one,
// github.com/VIA-Research/vTrain src/model/fused_softmax.py @f8dda8473a) calls its fused causal kernel
// (scaled_upper_triang_masked_softmax) only when is_kernel_available holds: a 16-bit input, 16 < sk ≤ the kernel's
// longest row (2,048 in Megatron-DeepSpeed and vTrain's replica, 4,096 in Megatron-LM since 2022 and Megatron-Core),
// sq and sk multiples of 4, and attn_batches = b·np (micro-batch × query heads per TP rank) a multiple of 4 and of
// the kernel's batches per block — 128 threads in warps of min(2^⌈log2 sk⌉, 32) lanes, 2 rows per warp up to
// 2^⌈log2 sk⌉ = 128 and 1 above (csrc/megatron/scaled_upper_triang_masked_softmax.h get_batch_per_block: 4 rows
// for any sk > 128). Otherwise forward_torch_softmax runs eager ops: input.float() when softmax_in_fp32 (forced by
// apply_query_key_layer_scaling, the fp16 default of the legacy program; Megatron-Core's attention_softmax_in_fp32
// defaults to True), input * scale (the layer-scaling coefficient, fp16), masked_fill_ with the causal mask,
// torch.nn.Softmax, .half() / .bfloat16() — and autograd records a backward node for each. A GPT with 16 heads at
// TP 8 and micro-batch 1 (b·np = 2) takes that path; at micro-batch 2 it does not. Per score (e = 2 B, f = 4 B in fp32
// else e): forward float r e w 4, scale r f w f, masked_fill_ r f w f, softmax r f w f, cast r 4 w e, against the
// fused kernel's r e w e; backward cast-back r e w 4, softmax backward r f r f w f, masked_fill backward r f w f,
// scale backward r f w f, cast-back r 4 w e, against the fused backward's r e r e w e. Kept for the backward: the fp32
// softmax output (SoftmaxBackward's) instead of the fused kernel's 16-bit one, and without dropout also the 16-bit copy
// the P·V GEMM saves.
SoftmaxPath megatron_softmax(const Scenario& sc) {
  SoftmaxPath p;
  const TrainingConfig& tr = sc.train;
  const bool legacy = tr.stack == Stack::MegatronLegacy;
  const bool local = legacy || (tr.stack == Stack::Megatron && tr.local_layers);
  if (!local || tr.flash_attention || tr.precision == Precision::FP32 || sc.model.heads <= 0) return p;
  const std::int64_t b = tr.mbs, np = std::max<std::int64_t>(1, sc.model.heads / sc.plan.tp);
  const std::int64_t sq = tr.seq / std::max(1, sc.plan.cp), sk = tr.seq, batches = b * np;
  std::int64_t pow2 = 1;
  while (pow2 < sk) pow2 <<= 1;
  const std::int64_t per_block = (128 / std::min<std::int64_t>(pow2, 32)) * (pow2 <= 128 ? 2 : 1);
  const std::int64_t longest = legacy ? 2048 : 4096;
  if (sk > 16 && sk <= longest && sq % 4 == 0 && sk % 4 == 0 && batches % 4 == 0 && batches % per_block == 0) return p;
  const bool fp16 = tr.precision == Precision::FP16;
  const bool fp32 = fp16 || !legacy, scale = fp16;
  const double e = 2, f = fp32 ? 4 : e;
  const double cast = fp32 ? e + 4 : 0, scaled = scale ? 2 * f : 0;
  p.fallback = true;
  p.extra_kernels_fwd = p.extra_kernels_bwd = (fp32 ? 2 : 0) + (scale ? 1 : 0) + 1;
  p.extra_bytes_fwd = cast + scaled + 2 * f + 2 * f + cast - 2 * e;
  p.extra_bytes_bwd = cast + 3 * f + 2 * f + scaled + cast - 3 * e;
  p.extra_saved_bytes = (f - e) + (sc.model.dropout || !fp32 ? 0 : e);
  return p;
}

PassCosts layer_costs(const CostContext& c) { return layer_costs(c, representative_kind(c.sc.model)); }

PassCosts layer_costs(const CostContext& c, LayerKind kind) { return layer_costs(c, kind, nullptr, nullptr); }

PassCosts layer_costs(const CostContext& c, LayerKind kind, PassParts* fwd_parts, PassParts* bwd_parts) {
  const Scenario& sc = c.sc;
  const ModelSpec& m = sc.model;
  const TrainingConfig& tr = sc.train;
  const Hardware& hw = c.hw;
  const std::int64_t b = tr.mbs, s = tr.seq;
  const int t = sc.plan.tp, cp = sc.plan.cp;
  const double act_bytes = activation_element_bytes(tr.precision);
  const double tokens_local = static_cast<double>(b * s) / cp;
  const double A = activation_bytes(sc);  // one activation tensor, domain-notes §6
  const bool moe = kind.ffn == FfnKind::MoE;
  const ExpertSplit split = moe ? expert_split(sc) : ExpertSplit{1, t, 1.0};

  const LayerWork lw = layer_work(m, kind, b, s, t, cp, tr.sp, tr.precision, split);
  // GEMM times by role: the routed experts of an MoE layer run as grouped GEMMs over the local experts (Megatron-Core
  // TEGroupedMLP, --moe-grouped-gemm), one group per fc1 / fc2, all local experts at their real token counts; the
  // shared experts separately (they can overlap the dispatch).
  GemmTimes dense, shared, routed;
  int routed_groups = 0, other_gemms = 0;
  // (routed_gemm_s of one group is the plain GEMM.)
  auto time_of = [&](const GemmShape& g, int groups) {
    return GemmTimes{routed_gemm_s(hw, tr, groups, g.m, g.n, g.k, true),  // forward: fp8 fast accumulation
                     routed_gemm_s(hw, tr, groups, g.m, g.k, g.n),   // dX[m×k] = dY[m×n]·Wᵀ[n×k]
                     routed_gemm_s(hw, tr, groups, g.k, g.n, g.m)};  // dW[k×n] = Xᵀ[k×m]·dY[m×n]
  };
  // The local experts' fc1s and fc2s, each one group (routed_gemms).
  if (const RoutedGemms rg = routed_gemms(lw); rg.groups > 0) {
    routed += time_of(*rg.fc1, rg.groups);
    routed += time_of(*rg.fc2, rg.groups);
    routed_groups = 2;
  }
  double last_ffn_f = 0;  // the forward of the layer's last GEMM (a dense FFN's down-projection): see early_stop
  for (const GemmShape& g : lw.gemms) {
    if (g.kind == GemmKind::RoutedExpert) continue;
    ++other_gemms;
    const GemmTimes gt = time_of(g, 1);
    if (g.kind == GemmKind::SharedExpert) shared += gt;
    else dense += gt;
    if (g.kind == GemmKind::Ffn) last_ffn_f = gt.f;
  }
  const double gemm_f = dense.f + shared.f + routed.f;
  const double gemm_dgrad = dense.dgrad + shared.dgrad + routed.dgrad;
  const double gemm_wgrad = dense.wgrad + shared.wgrad + routed.wgrad;
  const double attn_flops = lw.attention.forward_flops();
  double attn_f = 0, attn_b = 0;
  if (!kind.has_attention()) {
    // No softmax attention in this layer (a Mamba mixer, or no mixer: hybrid models).
  } else if (tr.flash_attention) {
    const WindowTiles win = window_tiles(lw.attention);
    // Transformer Engine on Blackwell under --deterministic with attention dropout runs flash-attn 2, not cuDNN
    // (attention_fallback_profile: TE fused_attn.cpp); nullptr everywhere else.
    const KernelProfile* curve = attention_fallback_profile(hw, tr.deterministic, m.dropout);
    // --attention cudnn on the PyTorch stack: scaled_dot_product_attention's cuDNN backend, the same cuDNN fused
    // attention Transformer Engine runs — the preset's megatron-profile curves (pytorch/pytorch#162073 made it SDPA's
    // default on sm90/sm100 from PyTorch 2.9 with cuDNN > 9.15; #138522 had made it opt-in after 2.5).
    if (tr.attention_cudnn && tr.stack == Stack::PyTorch && !tr.flash_v1) {
      const auto it = sc.hw.gpu.kernels.find("megatron");
      if (it != sc.hw.gpu.kernels.end()) curve = &it->second;
    }
    // A kernel's time with its work scaled by k and its launch gap paid once.
    const double gap = hw.gpu.compute.kernel_overhead_s;
    auto scaled_work = [gap](double time, double k) { return gap + k * std::max(0.0, time - gap); };
    // --fp8-attention (Megatron stack): cuDNN's fp8 kernel at its measured speed against bf16 (fp8_attention_ratio),
    // a sliding window's backward over the whole causal triangle.
    const bool fp8_attention = tr.fp8_attention && tr.precision == Precision::FP8 && tr.stack == Stack::Megatron;
    if (win.tiles_per_block > 0) {
      // A sliding window: the whole tiles the kernel computes at the curve's long-loop rate (its sequence ramp at
      // kLongLoopKeys, > 0.9996: the ramp stands for the per-block work that a full-length key loop amortises, which
      // the window's short loop pays explicitly here, as attn_block_overhead_tiles more tiles per query block —
      // measured against the 32k causal kernel's rate, window_tiles).
      const double per_block = (win.tiles_per_block + hw.gpu.compute.attn_block_overhead_tiles) / win.tiles_per_block;
      const std::int64_t d = lw.attention.head_dim;
      attn_f = scaled_work(attention_fwd_time_s(hw, win.flops, kLongLoopKeys, d, tr.precision, false, curve), per_block);
      if (fp8_attention) {
        AttentionShape triangle = lw.attention;
        triangle.window = 0;
        attn_b = attention_bwd_time_s(hw, triangle.forward_flops(), triangle.seq_kv, d, tr.precision, true, curve);
      } else {
        attn_b = scaled_work(attention_bwd_time_s(hw, win.flops, kLongLoopKeys, d, tr.precision, false, curve), per_block);
      }
    } else {
      // Chunked attention (Llama 4) runs as causal attention over chunk-long sequences (a packed batch, one per chunk,
      // or a block mask that skips every tile across chunks): its key loops, and so the sequence ramp, are a chunk
      // long; the FLOPs are the chunks' causal pairs (AttentionShape::forward_flops).
      const AttentionShape& at = lw.attention;
      const std::int64_t keys = at.chunk > 0 && at.chunk < at.seq_kv ? at.chunk : at.seq_kv;
      attn_f = attention_fwd_time_s(hw, attn_flops, keys, at.head_dim, tr.precision, at.causal, curve);
      attn_b = attention_bwd_time_s(hw, attn_flops, keys, at.head_dim, tr.precision, at.causal, curve);
    }
    if (fp8_attention) {
      const Fp8AttentionRatio r = fp8_attention_ratio(lw.attention.head_dim);
      attn_f = scaled_work(attn_f, r.fwd);
      attn_b = scaled_work(attn_b, r.bwd);
    }
    if (tr.flash_v1) {
      // FlashAttention-1 kernels (--attention flash1): the flash curves of the hardware file are FlashAttention-2
      // class (or faster); FA2 is "around 2× faster than FlashAttention" on A100 at every sequence length and head
      // size benchmarked (Dao 2023, arXiv 2307.08691, abstract and §4.1), and PyTorch's own switch of
      // scaled_dot_product_attention from FA1 to FA2 measured "around 2x speedups" (PyTorch 2.2 release notes,
      // pytorch.org/blog/pytorch2-2, Jan 2024). So PyTorch 2.0–2.1's SDPA runs each flash kernel at half the speed;
      // the launch gap stays one.
      attn_f = scaled_work(attn_f, kFlash2OverFlash1);
      attn_b = scaled_work(attn_b, kFlash2OverFlash1);
    }
  } else {
    // Unfused attention (Megatron-LM before FlashAttention, 2022): batched GEMMs over b·a/t heads that compute the
    // full s×s scores (no causal skipping), with the s² tensor in HBM. Forward: S = QKᵀ, fused scale-mask-softmax
    // (read 2 B, write 2 B per score), O = P·V; backward: dP = dO·Vᵀ, dV = Pᵀ·dO, softmax backward (read P and dP,
    // write dS: 6 B), dQ = dS·K, dK = dSᵀ·Q; attention dropout (when the model has it) adds a 1-byte mask and a
    // read+write of the scores in each direction (Shoeybi 2019; Korthikanti 2022 §4: the 5as²b activation bytes).
    const AttentionShape& at = lw.attention;
    const std::int64_t bh = at.batch * at.heads, sq = at.seq_q, skv = at.seq_kv, d = at.head_dim;
    const double scores = static_cast<double>(bh) * static_cast<double>(sq) * static_cast<double>(skv);
    const double drop = m.dropout ? 5.0 : 0.0;
    attn_f = gemm_time_s(hw, bh * sq, skv, d, tr.precision) + gemm_time_s(hw, bh * sq, d, skv, tr.precision) +
             memory_bound_time_s(hw, (4.0 + drop) * scores, drop > 0 ? 2 : 1);
    attn_b = gemm_time_s(hw, bh * sq, skv, d, tr.precision) + gemm_time_s(hw, bh * skv, d, sq, tr.precision) +
             gemm_time_s(hw, bh * sq, d, skv, tr.precision) + gemm_time_s(hw, bh * skv, d, sq, tr.precision) +
             memory_bound_time_s(hw, (6.0 + drop) * scores, drop > 0 ? 2 : 1);
    // Megatron's softmax on shapes its fused kernel does not take: eager fp32 ops (megatron_softmax).
    if (const SoftmaxPath sm = megatron_softmax(sc); sm.fallback) {
      attn_f += memory_bound_time_s(hw, sm.extra_bytes_fwd * scores, sm.extra_kernels_fwd);
      attn_b += memory_bound_time_s(hw, sm.extra_bytes_bwd * scores, sm.extra_kernels_bwd);
    }
  }
  // Norms, activation function, residual adds, rotary: ~10 kernels forward, twice the traffic backward. An MoE layer
  // adds its router and permutation kernels (kMoeKernelsFwd) and, with the alltoall dispatcher, the chunk sort; the
  // eager PyTorch stack its unfused ops (pytorch_eager_work).
  int extra_kernels = moe ? kMoeKernelsFwd : 0;
  double elem_bytes_fwd = lw.elementwise_bytes_fwd;
  // The fused grouped MLP (--moe-fused-grouped-mlp) applies the routed experts' activation in the FC1 GEMM's
  // epilogue (and its gradient in FC2's dgrad epilogue): the activation kernel and its traffic over every received
  // pair (layer_work: read gate and up, write the output) are gone.
  const bool fused_mlp = moe && tr.moe_fused_grouped_mlp;
  double act_fc2_k = 0;  // the routed FC2's input width f_e/etp
  for (std::size_t i = 0; fused_mlp && i + 1 < lw.gemms.size(); ++i)
    if (lw.gemms[i].kind == GemmKind::RoutedExpert) {
      act_fc2_k = static_cast<double>(lw.gemms[i + 1].k);
      break;
    }
  if (moe) {  // the alltoall dispatcher's chunk sort (alltoall_sort)
    const MemoryWork sort = alltoall_sort(sc, lw, split);
    elem_bytes_fwd += sort.bytes;
    extra_kernels += sort.kernels;
  }
  if (fused_mlp) {
    elem_bytes_fwd -= lw.routed_tokens_received * (m.gated() ? 3.0 : 2.0) * act_fc2_k * act_bytes;
    extra_kernels -= 1;
  }
  if (moe && !fused_mlp && (m.expert_bias || m.has_ffn_bias())) {
    const MemoryWork eb = expert_bias_work(sc, lw, split);
    elem_bytes_fwd += eb.bytes;
    extra_kernels += eb.kernels;
  }
  // --fused-residual-norm: each residual add runs in one kernel with the norm that follows it (llm.c
  // fused_residual_forward5; Liger's fused add + RMSNorm; Inductor fuses the add into the norm's reduction): read the
  // residual and the branch output, write their sum and the normalised sum — the separate norm's read of the sum (h·e
  // per hidden token) is gone, once per add (two per layer, one with a parallel attention + MLP residual).
  // --compile (PyTorch stack): Inductor does the same inside each compiled block — the attention residual add with
  // the FFN norm that reads it; the block's last add feeds the next block's graph (torchtitan and fms-fsdp compile
  // per TransformerBlock), so one add per layer, none with a parallel attention + MLP residual.
  const int residual_fusions = tr.fused_residual_norm ? (m.parallel_attention ? 1 : 2)
                               : (tr.stack == Stack::PyTorch && tr.compile && !m.parallel_attention) ? 1 : 0;
  if (residual_fusions > 0) {
    const double hidden_tokens = tr.sp ? tokens_local / t : tokens_local;
    elem_bytes_fwd -= residual_fusions * hidden_tokens * static_cast<double>(m.hidden) * act_bytes;
  }
  // The PyTorch stack without --compile: eager ATen's unfused norms, rotary embedding and gated activation.
  const MemoryWork eager = pytorch_eager_work(sc, lw, moe);
  elem_bytes_fwd += eager.bytes;
  extra_kernels += eager.kernels;
  // PyTorch DDP: autocast over fp32 parameters (ddp_autocast_work) — the fp32 residual stream and norms here, the
  // weights' 16-bit copies and their gradients' fp32 accumulation below.
  const AutocastWork amp = ddp_autocast_work(sc, lw);
  elem_bytes_fwd += amp.stream_bytes;
  extra_kernels += amp.stream_kernels;
  // --activation-epilogue: a plain (ungated) FFN activation computed in FC1's GEMM epilogue (cuBLASLt
  // CUBLASLT_EPILOGUE_GELU_AUX_BIAS, as llm.c's matmul_forward_cublaslt runs it; its gradient in FC2's dgrad epilogue,
  // CUBLASLT_EPILOGUE_DGELU): the GEMM writes the pre-activation for the backward beside its output, and the separate
  // kernel's read of the pre-activation (f/t·e per token, layer_work's 2·f/t·e read + write) is gone.
  if (tr.activation_epilogue && !moe && !m.gated()) {
    elem_bytes_fwd -= tokens_local * static_cast<double>((m.ffn_hidden + t - 1) / t) * act_bytes;
  }
  // ≈ 5 kernels per sub-block forward (norm, residual add, RoPE, activation …), 6 backward; a hybrid model's layer
  // has one sub-block.
  const int blocks = kind.blocks();
  const double elem_f = memory_bound_time_s(hw, elem_bytes_fwd, 5 * blocks + extra_kernels);
  const double elem_b = memory_bound_time_s(hw, 2 * elem_bytes_fwd, 6 * blocks + 2 * extra_kernels);
  // The clamped activation inputs (expert_clamp_work): their own forward and backward traffic, not the generic 2×.
  const ClampWork clamp = moe ? expert_clamp_work(sc, lw) : ClampWork{};
  const double clamp_only_f = clamp.kernels > 0 ? memory_bound_time_s(hw, clamp.fwd_bytes, clamp.kernels) : 0.0;
  const double clamp_only_b = clamp.kernels > 0 ? memory_bound_time_s(hw, clamp.bwd_bytes, clamp.kernels) : 0.0;
  // The fp8 alignment copies of the routed tokens (expert_fp8_pad_work): the same copies forward and backward.
  const MemoryWork pad = moe ? expert_fp8_pad_work(sc, lw) : MemoryWork{};
  const double pad_s = pad.kernels > 0 ? memory_bound_time_s(hw, pad.bytes, pad.kernels) : 0.0;
  // The unfused RoPE's traffic beyond the fused kernel's (unfused_rope_work).
  const RopeWork rope = unfused_rope_work(sc, lw);
  const double rope_f = rope.fwd_kernels > 0 ? memory_bound_time_s(hw, rope.fwd_bytes, rope.fwd_kernels) : 0.0;
  const double rope_b = rope.bwd_kernels > 0 ? memory_bound_time_s(hw, rope.bwd_bytes, rope.bwd_kernels) : 0.0;
  // Memory-bound work priced with its own forward and backward traffic: the routed tokens' extra passes around the
  // expert GEMMs and the unfused RoPE.
  // A Mamba-2 mixer's conv1d, scan and gated norm (mamba_work): memory-bound kernels with their own traffic, and the
  // scan's small matmuls.
  const MambaTimes mt = kind.attention == AttentionKind::Mamba ? mamba_times(hw, sc, lw) : MambaTimes{};
  const double own_mem_f = clamp_only_f + pad_s + rope_f + mt.fwd, own_mem_b = clamp_only_b + pad_s + rope_b + mt.bwd;
  const double amp_w_f = amp.weights > 0 ? memory_bound_time_s(hw, amp.weight_fwd_bytes, amp.weights) : 0.0;
  const double amp_w_b = amp.weights > 0 ? memory_bound_time_s(hw, amp.weight_bwd_bytes, 2 * amp.weights) : 0.0;
  // fp8 (Transformer Engine recipes): every GEMM operand is quantised first — forward the input X[m×k] and the weight
  // W[k×n], backward the output gradient dY[m×n] — reading 16 bit and writing 8 bit, and the backward GEMMs need
  // transposed fp8 copies of X, W and dY (read and write 1 byte each). This memory-bound work is why fp8's end-to-end
  // speed-up is well below the 2× of its peak (Micikevicius et al. 2022, arXiv 2209.05433; TE docs). Of the backward
  // casts, dgrad (dX = dY·Wᵀ) needs dY and Wᵀ, wgrad (dW = Xᵀ·dY) needs Xᵀ and dYᵀ. A grouped GEMM casts all its
  // groups in one multi-tensor kernel (TE GroupedLinear split_quantize). The fused grouped MLP quantises the
  // activation output for FC2 in FC1's epilogue and FC1's output gradient in FC2's dgrad epilogue: those two casts
  // (FC2's forward input, FC1's backward dY) are not separate kernels.
  double cast_f = 0, cast_b = 0, cast_b_input = 0, cast_b_weight = 0;
  if (tr.precision == Precision::FP8) {
    const double cb = hw.gpu.compute.fp8_cast_bytes_per_element;
    double in_f = 0, in_b = 0, in_bi = 0, in_bw = 0;
    for (const GemmShape& g : lw.gemms) {
      const double M = static_cast<double>(g.m), N = static_cast<double>(g.n), K = static_cast<double>(g.k);
      const bool routed_fc1 = fused_mlp && g.kind == GemmKind::RoutedExpert && std::strcmp(g.name, "expert_fc1") == 0;
      const bool routed_fc2 = fused_mlp && g.kind == GemmKind::RoutedExpert && !routed_fc1;
      in_f += cb * ((routed_fc2 ? 0.0 : M * K) + K * N);
      in_b += (routed_fc1 ? 0.0 : cb * M * N) + 2.0 * (M * K + K * N + M * N);
      in_bi += (routed_fc1 ? 0.0 : cb * M * N) + 2.0 * K * N;
      in_bw += 2.0 * (M * K + M * N);
    }
    const int gemms = other_gemms + routed_groups, fused_casts = fused_mlp ? 1 : 0;
    cast_f = memory_bound_time_s(hw, in_f, 2 * gemms - fused_casts);
    cast_b = memory_bound_time_s(hw, in_b, 4 * gemms - fused_casts);
    cast_b_input = memory_bound_time_s(hw, in_bi, 2 * gemms - fused_casts);
    cast_b_weight = memory_bound_time_s(hw, in_bw, 2 * gemms);
  }
  const double overhead = hw.gpu.compute.layer_overhead_s;

  // TP: without SP, 2 all-reduces of A per layer forward and 2 backward (Shoeybi 2019 §3, f/g operators).
  // With SP, each all-reduce becomes an all-gather + reduce-scatter of the same A (Korthikanti 2022 §4.2.2), and the
  // backward re-gathers the two layer inputs for the weight gradients (MCore), overlapped with the dgrad GEMMs.
  // An MoE layer with SP (Megatron-Core moe_layer.py): the MLP half takes the SP shard as it is — the routed tokens
  // are gathered by the dispatcher over the expert groups instead (below, on the ep axis) — so only the attention
  // half and, when the model has them, the shared experts (a TP-split MLP) all-gather and reduce-scatter.
  double tp_f = 0, tp_b = 0, tp_regather = 0;
  if (t > 1) {
    const double halves = tp_halves(sc, kind).total();
    if (tr.sp) {
      tp_f = halves * (group_collective_s(c, Collective::AllGather, A, c.tp_group) +
                       group_collective_s(c, Collective::ReduceScatter, A, c.tp_group));
      tp_b = tp_f;
      tp_regather = halves * group_collective_s(c, Collective::AllGather, A, c.tp_group);
    } else {
      tp_f = halves * group_collective_s(c, Collective::AllReduce, A, c.tp_group);
      tp_b = tp_f;
    }
  }
  // CP: ring exchange of the local K‖V chunk, c−1 steps per layer, each overlapped with one step of attention
  // (TE AttnFuncWithCPAndKVP2P); backward circulates K/V and dK/dV (≈ 2× the bytes). domain-notes §6.
  double cp_step_f = 0, cp_step_b = 0;
  if (cp > 1) {
    const double kv_heads_local = std::max(1.0, static_cast<double>(m.kv_heads) / t);
    const double kv_bytes = 2.0 * tokens_local * kv_heads_local * static_cast<double>(m.head_dim) * act_bytes;
    cp_step_f = group_collective_s(c, Collective::SendRecv, kv_bytes, c.cp_group);
    cp_step_b = group_collective_s(c, Collective::SendRecv, 2 * kv_bytes, c.cp_group);
  }
  const MoeComm ep = moe ? moe_comm(c, lw, split) : MoeComm{};

  PassCosts out;
  PassCost& fwd = out.fwd;
  fwd.compute_s = gemm_f + attn_f + elem_f + own_mem_f + cast_f + amp_w_f + overhead;
  // TE userbuffer overlap hides TP communication behind the GEMMs of the TP-split linears: all of them in a dense
  // layer, the attention and shared-expert GEMMs in an MoE layer (the routed experts carry no TP communication).
  add_tp_comm(c, fwd, tp_f, moe ? dense.f + shared.f : gemm_f);
  if (cp > 1) {
    fwd.cp_s = (cp - 1) * cp_step_f;
    fwd.cp_exposed_s = (cp - 1) * std::max(0.0, cp_step_f - attn_f / cp);
  }
  // The compute a token exchange can hide behind with --moe-a2a-overlap: one layer's pass in the other direction.
  const double fwd_compute = gemm_f + attn_f + elem_f + own_mem_f + cast_f + amp_w_f;
  const double bwd_compute = gemm_dgrad + gemm_wgrad + attn_b + elem_b + own_mem_b + cast_b + amp_w_b;
  add_ep_comm(c, fwd, ep.fwd_s, ep.a2a_fwd_s, shared.f, bwd_compute);
  auto add_cp_bwd = [&](PassCost& p) {
    if (cp <= 1) return;
    p.cp_s = (cp - 1) * cp_step_b;
    p.cp_exposed_s = (cp - 1) * std::max(0.0, cp_step_b - attn_b / cp);
  };
  // Recompute (Korthikanti 2022 §5): full reruns the whole layer forward — TP/CP/EP communication included — before
  // its backward; selective reruns the modules of --recompute-modules (default core_attn: the attention core, QKᵀ,
  // softmax, ·V). It precedes the input gradient.
  PassCost selective;
  if (tr.recompute == Recompute::Selective) selective = selective_recompute(c, kind, lw, attn_f, tp_f, ep);
  // torchtitan's per-op checkpointing (--recompute op; plans/validate.cpp admits the dense layers of the PyTorch
  // stack): the backward re-runs the block's forward less what the policy saved (models/activations.cpp) — the 2nd,
  // 4th and 6th matmuls of the block in issue order (wk: the KV columns of the QKV GEMM; wo; w3, half of the gated
  // FC1, or a plain FFN's fc2), timed by shape as the forward times them, with their fp8 input casts; every
  // element-wise kernel of the forward (norms, RoPE, the activation, residual adds: elem_f); and with TP the two
  // all-gathers of the SP-sharded norm outputs (the reduce-scatters' outputs are saved). Not the attention core
  // (its output is saved) nor the 1st, 3rd, 5th and 7th matmuls.
  PassCost op_recompute;
  if (tr.recompute == Recompute::Op) {
    RerunGemms r{hw, tr.precision};
    std::int64_t q_cols = 0;  // a/t·d: the output projection's input width
    for (const GemmShape& gs : lw.gemms)
      if (std::strcmp(gs.name, "out_proj") == 0) q_cols = gs.k;
    for (const GemmShape& gs : lw.gemms) {
      if (std::strcmp(gs.name, "qkv") == 0) r.gemm(gs.m, (gs.n - q_cols) / 2, gs.k);  // wk: (a + 2·kv)·d − a·d, halved
      else if (std::strcmp(gs.name, "out_proj") == 0) r.gemm(gs.m, gs.n, gs.k);
      else if (std::strcmp(gs.name, "ffn_in") == 0 && m.gated()) r.gemm(gs.m, gs.n / 2, gs.k);  // w3
      else if (std::strcmp(gs.name, "ffn_out") == 0 && !m.gated()) r.gemm(gs.m, gs.n, gs.k);   // fc2
    }
    op_recompute.compute_s = r.time + elem_f + r.cast_time();
    if (t > 1 && tr.sp)
      add_tp_comm(c, op_recompute, 2 * group_collective_s(c, Collective::AllGather, A, c.tp_group), r.time,
                  TpPass::Backward);
  }
  // Full recompute on the PyTorch-native stack is torch.utils.checkpoint in its non-reentrant form — what the FSDP
  // activation-checkpoint wrappers run: torchtitan's ptd_checkpoint_wrapper, llm-foundry/Composer with
  // activation_checkpointing_reentrant: false (every benchmark yaml of scripts/train/yamls/pretrain/mpt-*.yaml), and
  // checkpoint_wrapper's default since PyTorch 2.2 (pytorch/pytorch#108435). Since PyTorch 2.1 that form stops the
  // recomputation as soon as the last tensor the backward needs has been saved again ("early stop", on by default:
  // pytorch/pytorch#96866; torch/utils/checkpoint.py set_checkpoint_early_stop, _StopRecomputationError). The last
  // tensors a dense block saves are the inputs of its FFN down-projection (aten mm saves its operands before it
  // runs: the autograd wrapper stores them, then dispatches the kernel), so the recompute ends before that GEMM and
  // before its output's TP reduction and the residual add: it re-runs the forward less the last GEMM. A GEMM inside
  // a custom autograd Function — the fp8 linears of torchao Float8Linear and Transformer Engine — packs its saved
  // tensors only after its forward has run, so fp8 layers save no GEMM; Megatron's own reentrant CheckpointFunction
  // (and DeepSpeed's) re-runs everything; MoE layers keep the whole forward (their last saved tensors sit in the
  // token combine). Not modelled: the residual add's few bytes. --reentrant-checkpoint (use_reentrant=True: Hugging
  // Face Trainer's gradient checkpointing, DeepSpeed's) re-runs the whole forward. Under --compile the checkpointed
  // block is traced whole (Dynamo's checkpoint higher-order op) and AOTAutograd's partitioner recomputes only what
  // the backward reads — again not the last GEMM's output — and it sees through custom autograd Functions, so an fp8
  // block (torchao Float8Linear) skips that GEMM too.
  PassCost recompute_full = fwd;
  if (tr.stack == Stack::PyTorch && !tr.reentrant_checkpoint && !moe &&
      (tr.precision != Precision::FP8 || tr.compile) && last_ffn_f > 0) {
    recompute_full.compute_s -= last_ffn_f;
    if (t > 1 && fwd.tp_s > 0) {
      // The down-projection's output collective: the reduce-scatter of A with SP, the all-reduce of A without.
      const double after = tr.sp ? group_collective_s(c, Collective::ReduceScatter, A, c.tp_group)
                                 : group_collective_s(c, Collective::AllReduce, A, c.tp_group);
      const double share = std::min(1.0, after / fwd.tp_s);
      recompute_full.tp_s -= share * fwd.tp_s;
      recompute_full.tp_exposed_s -= share * fwd.tp_exposed_s;
    }
  }
  auto add_recompute = [&](PassCost& p) {
    if (tr.recompute == Recompute::Full) p += recompute_full;
    else if (tr.recompute == Recompute::Selective) p += selective;
    else if (tr.recompute == Recompute::Op) p += op_recompute;
  };

  PassCost& bwd = out.bwd;
  bwd.compute_s = gemm_dgrad + gemm_wgrad + attn_b + elem_b + own_mem_b + cast_b + amp_w_b + overhead;
  add_tp_comm(c, bwd, tp_b, moe ? dense.dgrad + dense.wgrad + shared.dgrad + shared.wgrad : gemm_dgrad + gemm_wgrad,
              TpPass::Backward);
  if (tp_regather > 0) {
    bwd.tp_s += tp_regather;
    bwd.tp_exposed_s += std::max(0.0, tp_regather - gemm_dgrad);
  }
  add_cp_bwd(bwd);
  add_ep_comm(c, bwd, ep.bwd_s, ep.a2a_bwd_s, shared.dgrad + shared.wgrad, fwd_compute);
  const double bwd_before_recompute = bwd.compute_s;
  add_recompute(bwd);
  // The parts of the two passes' compute (PassParts); `other` is what the lines above add beyond the priced kernels
  // (the per-layer overhead, the SM share of overlapped communication), the recompute what add_recompute added. A
  // residual below 1e-12 s is the rounding of the sum, not work.
  auto with_other = [](PassParts q, double compute_s) {
    const double rest = compute_s - q.sum();
    q.other_s = std::fabs(rest) < 1e-12 ? 0.0 : rest;
    return q;
  };
  if (fwd_parts)
    *fwd_parts = with_other({gemm_f, attn_f, elem_f + own_mem_f + amp_w_f, cast_f, 0, 0}, fwd.compute_s);
  if (bwd_parts)
    *bwd_parts = with_other({gemm_dgrad + gemm_wgrad, attn_b, elem_b + own_mem_b + amp_w_b, cast_b,
                             bwd.compute_s - bwd_before_recompute, 0},
                            bwd.compute_s);

  // The halves: B holds everything on the path to the previous layer's gradient (dgrad GEMMs, attention and
  // elementwise backward, the TP reduction of dX, the CP ring, the MoE combine/dispatch gradients' exchanges,
  // recompute); W the weight-gradient GEMMs, their fp8 transposes and, with SP, the re-gather of the layer inputs
  // they need. Each half is its own kernel sequence.
  PassCost& bi = out.bwd_input;
  bi.compute_s = gemm_dgrad + attn_b + elem_b + own_mem_b + cast_b_input + overhead;
  add_tp_comm(c, bi, tp_b, moe ? dense.dgrad + shared.dgrad : gemm_dgrad, TpPass::Backward);
  add_cp_bwd(bi);
  add_ep_comm(c, bi, ep.bwd_s, ep.a2a_bwd_s, shared.dgrad, fwd_compute);
  add_recompute(bi);
  PassCost& bw = out.bwd_weight;
  bw.compute_s = gemm_wgrad + cast_b_weight + amp_w_b + overhead;
  if (tp_regather > 0) {
    bw.tp_s += tp_regather;
    bw.tp_exposed_s += std::max(0.0, tp_regather - gemm_wgrad);
  }
  return out;
}

}  // namespace parsim
