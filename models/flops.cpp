// parsim models/ — FLOPs (domain-notes §2; multiply-add = 2 FLOPs) and the per-rank work of one layer.
#include "models/model.hpp"
#include "sim/core/error.hpp"

#include <algorithm>
#include <cmath>

namespace parsim {
namespace {

std::int64_t ceil_div(std::int64_t x, std::int64_t y) { return (x + y - 1) / y; }

void require_split(std::int64_t b, std::int64_t s, int tp, int cp) {
  // Called for every layer cost of every candidate plan: the messages are built only on failure.
  if (b < 1) fail("micro-batch size must be at least 1, got " + std::to_string(b));
  if (s < 1) fail("sequence length must be at least 1, got " + std::to_string(s));
  if (tp < 1) fail("tensor-parallel degree must be at least 1, got " + std::to_string(tp));
  if (cp < 1) fail("context-parallel degree must be at least 1, got " + std::to_string(cp));
  if (s % cp != 0)
    fail("sequence length " + std::to_string(s) + " is not divisible by the context-parallel degree " +
         std::to_string(cp));
}

void require_experts(const ModelSpec& m, const ExpertSplit& x) {
  if (!m.is_moe()) fail("model '" + m.name + "' has no experts: it has no mixture-of-experts layer");
  if (x.ep < 1) fail("expert-parallel degree must be at least 1, got " + std::to_string(x.ep));
  if (x.etp < 0) fail("expert tensor-parallel degree must be at least 1, got " + std::to_string(x.etp));
  if (!(x.imbalance >= 1.0))
    fail("MoE routing imbalance (busiest rank over the mean) must be at least 1, got " + std::to_string(x.imbalance));
}

// Keys each query attends to in the full-s² convention: s, or the window for a Sliding layer, or the chunk for a
// Chunked one.
double keys_per_query(const ModelSpec& m, LayerKind k, std::int64_t s) {
  if (k.attention == AttentionKind::Sliding && m.sliding_window > 0)
    return static_cast<double>(std::min(m.sliding_window, s));
  if (k.attention == AttentionKind::Chunked && m.attention_chunk > 0)
    return static_cast<double>(std::min(m.attention_chunk, s));
  return static_cast<double>(s);
}

// Causal (query, key) pairs of chunked attention over s tokens in chunks of c: s = n·c + r tokens make n whole chunks
// and a remainder, each causal on its own: (n·c² + r²)/2 in the kernels' half-square count (the causal convention
// of AttentionShape::forward_flops, s²/2 for one chunk).
double chunked_causal_pairs(std::int64_t s, std::int64_t c) {
  const double n = static_cast<double>(s / c), r = static_cast<double>(s % c), cc = static_cast<double>(c);
  return (n * cc * cc + r * r) / 2.0;
}

}  // namespace

// FlashAttention's benchmark count (Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py):
// forward = 2·b·s_q·s_kv·heads·(d + d_v) (QKᵀ and P·V, 2 FLOPs per multiply-add each; 4·…·d when d_v = d), halved
// when causal because the kernels skip fully masked tiles. With a sliding window w < s_kv every query sees at most w
// keys: over the whole sequence Σᵢ min(i, w) ≈ s·w − w²/2 pairs instead of s²/2 [D, continuous approximation], and a
// CP rank holding s_q = s/c load-balanced queries computes s_q·(w − w²/(2·s_kv)) of them.
double AttentionShape::forward_flops() const {
  const double sq = static_cast<double>(seq_q), skv = static_cast<double>(seq_kv);
  const double dims = v_head_dim > 0 ? static_cast<double>(head_dim + v_head_dim) : 2.0 * static_cast<double>(head_dim);
  if (causal && window > 0 && window < seq_kv) {
    const double w = static_cast<double>(window);
    return 2.0 * static_cast<double>(batch) * static_cast<double>(heads) * dims * sq * (w - w * w / (2.0 * skv));
  }
  // Chunked: the whole sequence's chunked pairs, scaled to this rank's s_q of the s_kv queries.
  if (causal && chunk > 0 && chunk < seq_kv)
    return 2.0 * static_cast<double>(batch) * static_cast<double>(heads) * dims * chunked_causal_pairs(seq_kv, chunk) *
           (sq / skv);
  // d_v = d: 4·b·s_q·s_kv·heads·d, evaluated in this order (as before issue 10, so dense results keep every bit).
  const double f = v_head_dim > 0 ? 2.0 * static_cast<double>(batch) * sq * skv * static_cast<double>(heads) * dims
                                  : 4.0 * static_cast<double>(batch) * sq * skv * static_cast<double>(heads) *
                                        static_cast<double>(head_dim);
  return causal ? 0.5 * f : f;
}

// The state-space-dual scan of a Mamba-2 mixer, forward (Dao & Gu 2024, arXiv 2405.21060 §6 and Listing 1
// ssd_minimal_discrete; the chunked kernels of mamba_ssm/ops/triton/ssd_combined.py compute the same products), per
// token with Q-token chunks, H heads of P channels, G groups of state size N:
//   C·Bᵀ within each chunk, per group (bmm_chunk: Q×N by N×Q per chunk)          2·Q·N·G
//   (L ∘ C·Bᵀ)·X within each chunk, per head (chunk_scan's diagonal block)      2·Q·P·H
//   chunk states Bᵀ·X, per head (chunk_state: N×Q by Q×P per chunk)             2·N·P·H
//   outputs from the carried states C·h, per head (chunk_scan's off-diagonal)   2·N·P·H
// The within-chunk products are counted over the whole Q×Q block, as the kernels compute it (the causal mask zeroes
// half of it); the inter-chunk state passing is elementwise (H·N·P per chunk) and, like norms, not counted.
// Nemotron-3-Nano (Q 128, N 128, G 8, P 64, H 64): 262,144 + 1,048,576 + 2 × 1,048,576 = 3,407,872 per token.
double SsmShape::forward_flops() const {
  const double q = static_cast<double>(chunk), n = static_cast<double>(state), p = static_cast<double>(head_dim);
  const double hh = static_cast<double>(heads), g = static_cast<double>(groups);
  return static_cast<double>(tokens) * (2.0 * q * n * g + 2.0 * q * p * hh + 4.0 * n * p * hh);
}

// Forward FLOPs per layer (domain-notes §2; Narayanan et al. 2021 App., generalised to GQA and gated FFNs), for
// T = b·s tokens: QKV 2·T·h·(a+2g)·d, scores QKᵀ 2·T·a·d·s, attention×V 2·T·a·d·s (full s², no causal halving:
// Megatron-LM ≤ core v0.11 `num_floating_point_operations` and PaLM App. B; a Sliding layer's queries see min(w, s)
// keys instead of s), O 2·T·a·d·h, FFN 6·T·h·f gated / 4·T·h·f plain. Bias adds, norms and softmax are not counted
// (as in all these conventions).
// MLA (Megatron-LM training.py `num_floating_point_operations`, multi_latent_attention branch, read at d98e8a64):
// projections 2·T·[h·q_r + q_r·a·(n+r) + h·(kv_r + r) + kv_r·a·(n+v)] (q_proj h·a·(n+r) without q_lora_rank),
// scores 2·T·a·(n+r)·s, attention×V 2·T·a·v·s, O 2·T·a·v·h. (Megatron also counts the two latent norms as
// q_r + kv_r FLOPs per token, 10⁻⁵ of a DeepSeek-V3 layer; parsim counts no norms.)
// LatentMoE (Megatron-Bridge flop_utils.py moe_layer_flops with moe_latent_size): the routed experts at the latent
// width ℓ, k·(6 or 4)·T·ℓ·f_e, and the two projections 2·2·T·h·ℓ.
// MoE (same function, moe_layer_flops / routed-experts terms): routed experts k·(6 or 4)·T·h·f_e, shared experts
// (6 or 4)·T·h·(n_shared·f_s) — ACTIVE experts only, which is what makes MFU "from active FLOPs". The router GEMM
// 2·T·h·E (and Qwen2-MoE's shared-expert gate 2·T·h) is executed work but not in Megatron's count: it is in
// LayerFlops::router, in hardware FLOPs, not in model FLOPs.
// Mamba-2 mixer: in_proj 2·T·h·(2·d_in + 2·G·N + H), out_proj 2·T·d_in·h, and the scan (SsmShape::forward_flops) —
// the GEMMs of the layer as they run, where Megatron-LM's hybrid count (training.py mamba_layer_flops) assumes
// d_in = 2h whatever mamba_num_heads says and 7·T·d_in·N for the scan (its note: "should be updated based on new SSD
// kernels"); so parsim's MFU of a hybrid model is from its real shapes, not Megatron's (README). A layer without a
// mixer or without an FFN (hybrid models) has no terms for it.
LayerFlops layer_forward_flops(const ModelSpec& m, LayerKind k, std::int64_t b, std::int64_t s) {
  const double T = static_cast<double>(b) * static_cast<double>(s);
  const double h = static_cast<double>(m.hidden), a = m.heads, g = static_cast<double>(m.g());
  const double d = static_cast<double>(m.d());
  LayerFlops x;
  if (k.attention == AttentionKind::Mamba) {
    const double d_in = static_cast<double>(m.mamba_inner());
    x.mamba_proj = 2 * T * h * static_cast<double>(m.mamba_in_proj()) + 2 * T * d_in * h;
    SsmShape ss;
    ss.tokens = b * s;
    ss.heads = m.mamba_heads, ss.head_dim = m.mamba_head_dim, ss.state = m.mamba_state;
    ss.groups = m.mamba_groups, ss.chunk = m.mamba_chunk;
    x.ssm = ss.forward_flops();
  } else if (k.attention == AttentionKind::None) {
  } else if (k.attention == AttentionKind::MLA) {
    const double qr = static_cast<double>(m.q_lora_rank), kvr = static_cast<double>(m.kv_lora_rank);
    const double n = static_cast<double>(m.qk_nope_head_dim), r = static_cast<double>(m.qk_rope_head_dim);
    const double v = static_cast<double>(m.v_head_dim);
    x.qkv = 2 * T * ((qr > 0 ? h * qr + qr * a * (n + r) : h * a * (n + r)) + h * (kvr + r) + kvr * a * (n + v));
    x.scores = 2 * T * a * (n + r) * static_cast<double>(s);
    x.attn_v = 2 * T * a * v * static_cast<double>(s);
    x.out_proj = 2 * T * a * v * h;
  } else {
    const double keys = keys_per_query(m, k, s);
    x.qkv = 2 * T * h * (a + 2 * g) * d;
    x.scores = 2 * T * a * d * keys;
    x.attn_v = 2 * T * a * d * keys;
    x.out_proj = 2 * T * a * d * h;
  }
  const double ffn_mult = m.gated() ? 6 : 4;
  if (k.ffn == FfnKind::MoE) {
    x.experts = ffn_mult * T * static_cast<double>(m.expert_width()) * static_cast<double>(m.expert_ffn_hidden) *
                m.experts_per_token;
    x.latent = m.moe_latent > 0 ? 2 * 2 * T * h * static_cast<double>(m.moe_latent) : 0.0;
    x.shared = ffn_mult * T * h * static_cast<double>(m.shared_ffn()) * m.shared_experts;
    x.router = 2 * T * h * m.experts + (m.shared_expert_gate ? 2 * T * h : 0.0);
  } else if (k.ffn == FfnKind::Dense) {
    x.ffn = ffn_mult * T * h * static_cast<double>(m.ffn_hidden);
  }
  return x;
}

LayerFlops layer_forward_flops(const ModelSpec& m, std::int64_t b, std::int64_t s) {
  return layer_forward_flops(m, representative_kind(m), b, s);
}

// LM head: 2·h·V per token (real vocabulary, Megatron's `V/(2Lh)` term).
double lm_head_forward_flops(const ModelSpec& m, std::int64_t b, std::int64_t s) {
  return 2.0 * static_cast<double>(b) * static_cast<double>(s) * static_cast<double>(m.hidden) *
         static_cast<double>(m.vocab);
}

// Training = 3 × forward (backward = dgrad + wgrad = 2 × forward; Narayanan et al. 2021, Megatron training.py).
// Dense: equals Megatron ≤ v0.11: 12·B·s·L·h²·[(1 + g/a + s/h)(a·d/h) + (f/h)(1.5 if gated) + V/(2Lh)].
// MoE / MLA / mixed layers: Megatron-LM megatron/training/training.py `num_floating_point_operations`
// (transformer_flops, commit d98e8a64): dense FFN layers and MoE layers counted separately (moe_layer_freq /
// first_k_dense_replace pattern), routed experts × num_experts_routed_to (top-k), shared experts, MLA projections —
// here layer by layer, so any placement is exact. Differences, both documented: attention over the full s² (parsim's
// ≤ v0.11 convention; Megatron ≥ v0.12 halves it), the real rather than the padded vocabulary in the LM head.
double model_flops(const ModelSpec& m, std::int64_t sequences, std::int64_t s) {
  double layers = 0;
  for (const auto& [kind, n] : m.layer_kind_counts()) layers += n * layer_forward_flops(m, kind, sequences, s).model();
  return 3.0 * (layers + lm_head_forward_flops(m, sequences, s));
}

namespace {
// The share of the full-s² attention core a causal mask leaves (AttentionCount::Causal): 1/2, or with a sliding
// window w < s, (w − w²/(2s))/w — the same pair counts as AttentionShape::forward_flops.
double causal_share(const ModelSpec& m, LayerKind k, std::int64_t s) {
  if (k.attention == AttentionKind::Sliding && m.sliding_window > 0 && m.sliding_window < s) {
    const double w = static_cast<double>(m.sliding_window);
    return (w - w * w / (2.0 * static_cast<double>(s))) / w;
  }
  // Chunked over c < s: the chunked pairs over the full-s² convention's s·c (keys_per_query).
  if (k.attention == AttentionKind::Chunked && m.attention_chunk > 0 && m.attention_chunk < s)
    return chunked_causal_pairs(s, m.attention_chunk) /
           (static_cast<double>(s) * static_cast<double>(m.attention_chunk));
  return 0.5;
}
// One layer's forward with the attention core counted as `count` says.
LayerFlops counted_layer_flops(const ModelSpec& m, LayerKind k, std::int64_t b, std::int64_t s, AttentionCount count) {
  LayerFlops f = layer_forward_flops(m, k, b, s);
  if (count == AttentionCount::Causal) {
    const double share = causal_share(m, k, s);
    f.scores *= share;
    f.attn_v *= share;
  }
  return f;
}
}  // namespace

double model_flops(const ModelSpec& m, std::int64_t sequences, std::int64_t s, AttentionCount count) {
  if (count == AttentionCount::Full) return model_flops(m, sequences, s);
  double layers = 0;
  for (const auto& [kind, n] : m.layer_kind_counts())
    layers += n * counted_layer_flops(m, kind, sequences, s, count).model();
  return 3.0 * (layers + lm_head_forward_flops(m, sequences, s));
}

// What the GPUs execute: full recompute reruns every layer's forward once more (Narayanan Eq. 3: 96 instead of 72
// for the layer terms, LM head unchanged); selective recompute reruns the attention core only (QKᵀ, softmax,
// P·V; Korthikanti et al. 2022 §5 / App. A) — here exactly one more forward of the scores and attention×V GEMMs,
// 4·B·s²·h per layer for a·d = h, i.e. 72·B·s·L·h²·(1 + 2s/(9h) + V/(12Lh)) [D]. (Korthikanti App. A, as quoted in
// domain-notes §2, prints s/(3h) for the middle term: 12·B·s²·h more per layer, a whole extra forward + backward
// of the core rather than one forward.) The MoE router GEMMs (fwd + dgrad + wgrad) are executed but not model FLOPs.
double hardware_flops(const ModelSpec& m, std::int64_t sequences, std::int64_t s, Recompute r) {
  double extra = 0, router = 0;
  for (const auto& [kind, n] : m.layer_kind_counts()) {
    const LayerFlops fwd = layer_forward_flops(m, kind, sequences, s);
    router += n * fwd.router;
    if (r == Recompute::Full) extra += n * fwd.total();
    if (r == Recompute::Selective) extra += n * (fwd.scores + fwd.attn_v);
    if (r == Recompute::Op) extra += n * op_recompute_flops(m, fwd);
  }
  return model_flops(m, sequences, s) + 3.0 * router + extra;
}

// torchtitan's per-op selective checkpointing (--recompute op): of a block's matmuls in issue order — wq, wk, wv, wo,
// then w1, w3, w2 (gated) or fc1, fc2 — every second one is recomputed (parallelize_llama.py _custom_policy: an mm
// whose per-block count is even is not saved): wk (the KV share of the QKV FLOPs: kv·d of a·d + 2·kv·d columns), wo,
// and w3 (a third of a gated FFN's FLOPs) or fc2 (half of a plain FFN's). The attention core's output is saved.
double op_recompute_flops(const ModelSpec& m, const LayerFlops& fwd) {
  const double a = static_cast<double>(m.heads), g = static_cast<double>(m.g());
  return fwd.qkv * g / (a + 2 * g) + fwd.out_proj + fwd.ffn / (m.gated() ? 3.0 : 2.0);
}

// Selective recompute by module (Megatron-Core --recompute-modules; what each module re-runs is documented in
// sim/step/costs/layer.cpp): the forward GEMM FLOPs of the recomputed modules, per layer of the kind they act on —
// core_attn the scores and attention×V, mlp a dense layer's FFN, moe an MoE layer's router, routed and shared experts,
// shared_experts the shared experts, mla_up_proj the q and kv up-projections (2·T·a·((n + r)·q_r + (n + v)·kv_r),
// q_r = h when the model has no q LoRA: then the q projection is inside the recomputed function). layernorm and
// moe_act re-run elementwise kernels only: no GEMM FLOPs.
double selective_recompute_flops(const ModelSpec& m, LayerKind kind, const LayerFlops& fwd, std::int64_t sequences,
                                 std::int64_t s, RecomputeModules mods) {
  double extra = 0;
  if (mods.has(RecomputeModule::CoreAttn)) extra += fwd.scores + fwd.attn_v;
  if (kind.ffn == FfnKind::Dense && mods.has(RecomputeModule::Mlp)) extra += fwd.ffn;
  if (kind.ffn == FfnKind::MoE) {
    if (mods.has(RecomputeModule::Moe)) extra += fwd.experts + fwd.shared + fwd.router;
    else if (mods.has(RecomputeModule::SharedExperts)) extra += fwd.shared;
  }
  if (kind.attention == AttentionKind::MLA && mods.has(RecomputeModule::MlaUpProj)) {
    const double T = static_cast<double>(sequences) * static_cast<double>(s), a = static_cast<double>(m.heads);
    const double n = static_cast<double>(m.qk_nope_head_dim), r = static_cast<double>(m.qk_rope_head_dim);
    const double qr = m.q_lora_rank > 0 ? static_cast<double>(m.q_lora_rank) : static_cast<double>(m.hidden);
    extra += 2.0 * T * a * ((n + r) * qr + (n + static_cast<double>(m.v_head_dim)) * static_cast<double>(m.kv_lora_rank));
  }
  return extra;
}

double hardware_flops(const ModelSpec& m, std::int64_t sequences, std::int64_t s, Recompute r, AttentionCount count) {
  return hardware_flops(m, sequences, s, r, count, RecomputeModules{});
}

double hardware_flops(const ModelSpec& m, std::int64_t sequences, std::int64_t s, Recompute r, AttentionCount count,
                      RecomputeModules mods) {
  if (count == AttentionCount::Full && mods == RecomputeModules{}) return hardware_flops(m, sequences, s, r);
  double extra = 0, router = 0;
  for (const auto& [kind, n] : m.layer_kind_counts()) {
    const LayerFlops fwd = count == AttentionCount::Full ? layer_forward_flops(m, kind, sequences, s)
                                                         : counted_layer_flops(m, kind, sequences, s, count);
    router += n * fwd.router;
    if (r == Recompute::Full) extra += n * fwd.total();
    if (r == Recompute::Selective) extra += n * selective_recompute_flops(m, kind, fwd, sequences, s, mods);
    if (r == Recompute::Op) extra += n * op_recompute_flops(m, fwd);
  }
  return model_flops(m, sequences, s, count) + 3.0 * router + extra;
}

// Megatron training.py: MTP adds, per module, `2·h·h` (eh_proj) and `3·h` (norms) per token ×6, one more layer of the
// last layer's kind, and one more logits GEMM; here the norms are left out as everywhere in parsim.
double mtp_flops(const ModelSpec& m, std::int64_t sequences, std::int64_t s) {
  if (m.mtp_layers <= 0) return 0.0;
  const double T = static_cast<double>(sequences) * static_cast<double>(s), h = static_cast<double>(m.hidden);
  double fwd = 2.0 * T * 2.0 * h * h + lm_head_forward_flops(m, sequences, s);
  for (const LayerKind& k : m.mtp_module_kinds()) fwd += layer_forward_flops(m, k, sequences, s).model();
  return 3.0 * m.mtp_layers * fwd;
}

double moe_routed_tokens(const ModelSpec& m, std::int64_t b, std::int64_t s, int tp, int cp, bool sp,
                         const ExpertSplit& x) {
  require_split(b, s, tp, cp);
  require_experts(m, x);
  const double tokens = static_cast<double>(b) * static_cast<double>(s / cp);
  const double etp = x.etp > 0 ? x.etp : tp;
  // Megatron-Core MoE token dispatchers: the layer input is the rank's SP shard (b·s/(c·t) tokens; with tp = 1 every
  // rank's tokens are its own); the ETP group all-gathers its members' routed tokens so each expert rank computes its
  // slice f/etp for all of them. Without SP (tp > 1) the TP peers hold the same tokens and the ETP group (= the TP
  // group) adds none.
  const double distinct = sp || tp == 1 ? tokens / tp * etp : tokens;
  return static_cast<double>(m.experts_per_token) * distinct * x.imbalance;
}

std::vector<GemmShape> routed_expert_gemms(const ModelSpec& m, const std::vector<std::int64_t>& tokens_per_expert,
                                           int etp) {
  if (etp < 1) fail("expert tensor-parallel degree must be at least 1, got " + std::to_string(etp));
  if (!m.is_moe()) fail("model '" + m.name + "' has no experts: it has no mixture-of-experts layer");
  const std::int64_t f_r = ceil_div(m.expert_ffn_hidden, etp);
  std::vector<GemmShape> out;
  out.reserve(2 * tokens_per_expert.size());
  for (const std::int64_t n : tokens_per_expert) {
    if (n < 0) fail("tokens per expert must not be negative, got " + std::to_string(n));
    if (n == 0) continue;
    out.push_back({"expert_fc1", n, (m.gated() ? 2 : 1) * f_r, m.expert_width(), GemmKind::RoutedExpert});
    out.push_back({"expert_fc2", n, m.expert_width(), f_r, GemmKind::RoutedExpert});
  }
  return out;
}

// One rank's forward work for a micro-batch of b sequences of length s (Megatron-LM partitioning,
// Shoeybi et al. 2019 §3; CP splits tokens, Megatron context_parallel.md). Token dimension m = b·s/c.
//   qkv      [m × (a/t + 2·kv_r)·d] = [m × h]·W   column-parallel; kv_r = KV heads per rank = ⌈g/t⌉, i.e. g/t, or 1
//                                                 when t > g (each KV head replicated t/g times, see params.cpp)
//   out_proj [m × h] = [m × a·d/t]·W              row-parallel
//   ffn_in   [m × (2f or f)/t] = [m × h]·W        column-parallel; gate and up fused as in Megatron's linear_fc1
//   ffn_out  [m × h] = [m × f/t]·W                row-parallel
// MLA (Megatron-Core multi_latent_attention.py): q_down [m_sp × q_r] and kv_down [m_sp × (kv_r + r)] are duplicated
// linears on the rank's SP shard (m_sp = m/t with SP, m without), then the latents are gathered: q_up
// [m × a/t·(n+r)] (or q_proj from h without q_lora_rank), kv_up [m × a/t·(n+v)], out_proj [m × h] from a/t·v.
// MoE layer (Megatron-Core MoELayer): router [m_sp × E] on the SP shard, replicated weight; shared experts as a dense
// MLP of n_shared·f_s split over t (Qwen2-MoE's gate [m × 1]); routed experts: the local experts (E/ep) share the
// rank's routed pairs R = moe_routed_tokens (imbalance included) equally, ⌈R/(E/ep)⌉ tokens each, as grouped GEMMs
// of f_e/etp (routed_expert_gemms). LatentMoE: latent_down [m_sp × ℓ] = [m_sp × h]·W before the dispatch and
// latent_up [m_sp × h] after the combine, duplicated (whole weight on every TP rank); the routed experts' fc1 reads
// and fc2 writes ℓ instead of h.
// Heads and f are rounded up when t does not divide them (plans reject such degrees; this keeps shapes non-zero).
//
// elementwise_bytes_fwd — an ESTIMATE of the HBM bytes the memory-bound kernels move in the forward pass, with e =
// bytes per activation element. Per token with a hidden-sized tensor (÷t under SP, where these kernels run on the
// token shard):
//   norms        read h + write h each              norm_layers · 2h·e
//   residual add read 2h + write h, per sub-block   6h·e (parallel attention: one add of three, read 3h write h:
//                                                    4h·e; a hybrid model's single-block layer: 3h·e)
//   dropout      1-byte mask per hidden dropout      2h, per sub-block (only when m.dropout; O and FFN-out biases
//                                                        are fused into Megatron's bias-dropout-add, so they add
//                                                        nothing)
//   MLA latent norms  read + write q_r and kv_r      2·(q_r + kv_r)·e
//   MoE router   read logits, write fp32 scores     (e + 4)·E; permute + unpermute read + write k·h each: 4·k·h·e
//                                                    (LatentMoE: k·ℓ)
// Per token on the rank's head/FFN shard (never ÷t by SP: already split by TP):
//   rotary       read + write Q and K               2·(a/t + kv_r)·d·e·rotary_fraction (RoPE only; MLA: the rope
//                                                    parts 2·(a/t + 1)·r·e)
//   q/k norms    read + write Q and K               2·(a/t + kv_r)·d·e
//   activation   gated: read gate, up, write out    3·(f/t)·e; plain: read, write 2·(f/t)·e (FFN-in bias fused);
//                                                   MoE: the shared experts' n·f_s/t per token, and 3·(f_e/etp)·e
//                                                   per routed pair R
// Not counted: softmax, masking and attention dropout (inside the flash kernel), QKV bias (GEMM epilogue), fp8
// casts, the ETP all-gather copies.
LayerWork layer_work(const ModelSpec& m, LayerKind k, std::int64_t b, std::int64_t s, int tp, int cp, bool sp,
                     Precision p, const ExpertSplit& x) {
  require_split(b, s, tp, cp);
  const std::int64_t t = tp, h = m.hidden, d = m.d(), tokens = b * (s / cp);
  const std::int64_t sp_tokens = sp ? ceil_div(tokens, t) : tokens;
  const std::int64_t a_r = ceil_div(m.heads, t), kv_r = ceil_div(m.g(), t);
  const double e = activation_element_bytes(p), hd = static_cast<double>(h);
  const double hidden_tokens = static_cast<double>(tokens) / (sp ? tp : 1);
  LayerWork w;
  w.gemms.reserve(k.ffn == FfnKind::MoE ? 10 + 2 * static_cast<std::size_t>(m.experts) : 7);
  // One residual add (read 2h, write h) and one hidden dropout per sub-block: two in a transformer layer, one in a
  // hybrid model's single-block layer.
  const double blocks = k.blocks();
  double per_hidden_token = (2.0 * m.norm_layers + (m.parallel_attention ? 4.0 : 3.0 * blocks)) * hd * e +
                            (m.dropout ? blocks * hd : 0.0);
  double per_token = 0;

  if (k.attention == AttentionKind::Mamba) {
    // Megatron-Core MambaMixer: in_proj (column-parallel, with the pre-norm fused: TELayerNormColumnParallelLinear) on
    // the gathered tokens, the scan over H/t heads and G/t groups, out_proj (row-parallel). The conv1d, the scan's
    // kernels and the gated norm are memory-bound work with their own traffic, priced from `ssm`
    // (sim/step/costs/layer.cpp mamba_work), not in elementwise_bytes_fwd.
    w.gemms.push_back({"in_proj", tokens, ceil_div(m.mamba_in_proj(), t), h, GemmKind::Attention});
    w.gemms.push_back({"out_proj", tokens, h, ceil_div(m.mamba_inner(), t), GemmKind::Attention});
    w.ssm = SsmShape{tokens, ceil_div(m.mamba_heads, t), m.mamba_head_dim, m.mamba_state,
                     ceil_div(m.mamba_groups, t), m.mamba_chunk, ceil_div(m.mamba_conv_channels(), t),
                     m.mamba_conv_kernel};
  } else if (k.attention == AttentionKind::None) {
  } else if (k.attention == AttentionKind::MLA) {
    const std::int64_t qr = m.q_lora_rank, kvr = m.kv_lora_rank, n = m.qk_nope_head_dim, r = m.qk_rope_head_dim,
                       v = m.v_head_dim;
    if (qr > 0) {
      w.gemms.push_back({"q_down", sp_tokens, qr, h, GemmKind::Attention});
      w.gemms.push_back({"q_up", tokens, a_r * (n + r), qr, GemmKind::Attention});
    } else {
      w.gemms.push_back({"q_proj", tokens, a_r * (n + r), h, GemmKind::Attention});
    }
    w.gemms.push_back({"kv_down", sp_tokens, kvr + r, h, GemmKind::Attention});
    w.gemms.push_back({"kv_up", tokens, a_r * (n + v), kvr, GemmKind::Attention});
    w.gemms.push_back({"out_proj", tokens, h, a_r * v, GemmKind::Attention});
    w.attention = AttentionShape{b, a_r, s / cp, s, n + r, true, 0, v};
    per_hidden_token += 2.0 * static_cast<double>(qr + kvr) * e;
    if (m.position == PositionKind::RoPE) per_token += 2.0 * static_cast<double>((a_r + 1) * r) * e;
  } else {
    w.gemms.push_back({"qkv", tokens, (a_r + 2 * kv_r) * d, h, GemmKind::Attention});
    w.gemms.push_back({"out_proj", tokens, h, a_r * d, GemmKind::Attention});
    const std::int64_t window = k.attention == AttentionKind::Sliding ? m.sliding_window : 0;
    w.attention = AttentionShape{b, a_r, s / cp, s, d, true, window, 0};
    if (k.attention == AttentionKind::Chunked) w.attention.chunk = m.attention_chunk;
    if (m.position == PositionKind::RoPE) {
      const double rot = 2.0 * static_cast<double>((a_r + kv_r) * d) * e;
      per_token += m.rotary_fraction == 1.0 ? rot : rot * m.rotary_fraction;
    }
    if (m.qk_norm != QkNorm::None) per_token += 2.0 * static_cast<double>((a_r + kv_r) * d) * e;
  }

  const double act_reads = m.gated() ? 3.0 : 2.0;
  if (k.ffn == FfnKind::MoE) {
    const ExpertSplit split{x.ep, x.etp > 0 ? x.etp : tp, x.imbalance};
    require_experts(m, split);
    const std::int64_t router_tokens = sp_tokens;
    w.gemms.push_back({"router", router_tokens, m.experts, h, GemmKind::Router});
    if (m.shared_experts > 0) {
      const std::int64_t fs_r = ceil_div(m.shared_experts * m.shared_ffn(), t);
      w.gemms.push_back({"shared_in", tokens, (m.gated() ? 2 : 1) * fs_r, h, GemmKind::SharedExpert});
      w.gemms.push_back({"shared_out", tokens, h, fs_r, GemmKind::SharedExpert});
      if (m.shared_expert_gate) w.gemms.push_back({"shared_gate", tokens, 1, h, GemmKind::SharedExpert});
      per_token += act_reads * static_cast<double>(fs_r) * e;
    }
    if (m.moe_latent > 0) {
      // LatentMoE (Megatron-Core moe_layer.py preprocess / postprocess): fc1_latent_proj after the router on the
      // rank's tokens, fc2_latent_proj after the combine; "duplicated" linears, not split over TP.
      w.gemms.push_back({"latent_down", router_tokens, m.moe_latent, h, GemmKind::MoeLatent});
      w.gemms.push_back({"latent_up", router_tokens, h, m.moe_latent, GemmKind::MoeLatent});
    }
    const double received = moe_routed_tokens(m, b, s, tp, cp, sp, split);
    const int local = std::max(1, m.experts / split.ep);
    const auto per_expert = static_cast<std::int64_t>(std::ceil(received / local - 1e-9));
    const auto routed = routed_expert_gemms(m, std::vector<std::int64_t>(static_cast<std::size_t>(local), per_expert),
                                            split.etp);
    w.gemms.insert(w.gemms.end(), routed.begin(), routed.end());
    w.routed_tokens_sent = static_cast<double>(m.experts_per_token) * static_cast<double>(router_tokens);
    w.routed_tokens_received = received;
    const double fe_r = static_cast<double>(ceil_div(m.expert_ffn_hidden, split.etp));
    const double elementwise_moe =
        static_cast<double>(router_tokens) * (e + 4.0) * m.experts +
        4.0 * w.routed_tokens_sent * static_cast<double>(m.expert_width()) * e +
        received * act_reads * fe_r * e;
    w.elementwise_bytes_fwd = elementwise_moe;
  } else if (k.ffn == FfnKind::Dense) {
    const std::int64_t f_r = ceil_div(m.ffn_hidden, t);
    w.gemms.push_back({"ffn_in", tokens, (m.gated() ? 2 : 1) * f_r, h, GemmKind::Ffn});
    w.gemms.push_back({"ffn_out", tokens, h, f_r, GemmKind::Ffn});
    per_token += act_reads * static_cast<double>(f_r) * e;
  }
  w.elementwise_bytes_fwd += hidden_tokens * per_hidden_token + static_cast<double>(tokens) * per_token;
  return w;
}

LayerWork layer_work(const ModelSpec& m, std::int64_t b, std::int64_t s, int tp, int cp, bool sp, Precision p) {
  return layer_work(m, representative_kind(m), b, s, tp, cp, sp, p, ExpertSplit{1, tp, 1.0});
}

// Output layer GEMM: column-parallel over Megatron's padded vocabulary (padded_vocab(V, t) / t columns per rank).
GemmShape lm_head_gemm(const ModelSpec& m, std::int64_t b, std::int64_t s, int tp, int cp) {
  require_split(b, s, tp, cp);
  return GemmShape{"lm_head", b * (s / cp), padded_vocab(m.vocab, tp) / tp, m.hidden, GemmKind::Ffn};
}

}  // namespace parsim
