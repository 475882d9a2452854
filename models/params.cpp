// parsim models/ — parameter counts (domain-notes §1) and their Megatron-LM tensor/expert-parallel split.
#include "models/model.hpp"
#include "sim/core/error.hpp"

#include <algorithm>

namespace parsim {
namespace {

std::int64_t norm_params(const ModelSpec& m) {
  return m.norm_tensors() * m.hidden;  // LayerNorm: weight + bias; RMSNorm: weight
}

void require_tp(int tp) {
  if (tp < 1) fail("tensor-parallel degree must be at least 1, got " + std::to_string(tp));
}

// Weights (+ biases) of one FFN with inner size f: gated 3·h·f (gate, up, down), plain 2·h·f; biases gated 2f + h,
// plain f + h.
std::int64_t ffn_params(const ModelSpec& m, std::int64_t f, bool biases, std::int64_t width) {
  return (m.gated() ? 3 : 2) * width * f + (biases ? (m.gated() ? 2 * f : f) + width : 0);
}
std::int64_t ffn_params(const ModelSpec& m, std::int64_t f, bool biases) { return ffn_params(m, f, biases, m.hidden); }

// LatentMoE's two projections h → ℓ and ℓ → h (Megatron-Core moe_layer.py, transformers NemotronHMoE: Linear layers
// with bias only under mlp_bias).
std::int64_t latent_params(const ModelSpec& m) {
  if (m.moe_latent <= 0) return 0;
  return 2 * m.hidden * m.moe_latent + (m.has_ffn_bias() ? m.moe_latent + m.hidden : 0);
}

// Q/K normalisation weights: Qwen3 one RMSNorm of size d for Q and one for K (shared by the heads); OLMo 2 / OLMoE
// one over the whole Q projection (a·d) and one over K (g·d). A LayerNorm model's q/k norms are LayerNorms with a
// bias each (Megatron --qk-layernorm: TENorm of the config's normalization over the head dimension): twice that.
std::int64_t qk_norm_params(const ModelSpec& m) {
  const std::int64_t per_weight = m.norm_tensors();
  switch (m.qk_norm) {
    case QkNorm::None: return 0;
    case QkNorm::PerHead: return per_weight * 2 * m.d();
    case QkNorm::Full: return per_weight * (m.heads + m.g()) * m.d();
  }
  return 0;
}

// Mamba-2 mixer (transformers NemotronHMamba2Mixer and Megatron-Core megatron/core/ssm/mamba_mixer.py MambaMixer hold
// the same tensors): in_proj h·W with W = 2·d_in + 2·G·N + H (z, x, B, C, dt), the depthwise causal conv1d over the
// C = d_in + 2·G·N channels of x, B and C (C·K weights + C biases with use_conv_bias), dt_bias, A_log and D (H each),
// the gated RMSNorm's weight (d_in), out_proj d_in·h; mamba_proj_bias adds W + h biases. Nemotron-3-Nano (h 2688,
// H 64, P 64, N 128, G 8, K 4): 27,697,152 + 24,576 + 6,144 + 192 + 4,096 + 11,010,048 = 38,742,208.
std::int64_t mamba_params(const ModelSpec& m) {
  const std::int64_t h = m.hidden, w = m.mamba_in_proj(), c = m.mamba_conv_channels(), d_in = m.mamba_inner();
  return h * w + c * m.mamba_conv_kernel + (m.mamba_conv_bias ? c : 0) + 3 * m.mamba_heads + d_in + d_in * h +
         (m.mamba_proj_bias ? w + h : 0);
}

}  // namespace

// Megatron-LM megatron/training/vocab_utils.py: the vocabulary is padded up to a multiple of
// make_vocab_size_divisible_by (default 128) × tensor-model-parallel size.
std::int64_t padded_vocab(std::int64_t vocab, int tp, int divisible_by) {
  require_tp(tp);
  if (divisible_by < 1)
    fail("vocabulary padding multiple must be at least 1, got " + std::to_string(divisible_by));
  const std::int64_t multiple = static_cast<std::int64_t>(divisible_by) * tp;
  return (vocab + multiple - 1) / multiple * multiple;
}

// One layer, by kind.
// Attention (domain-notes §1): Q h·a·d, K and V h·g·d each, O a·d·h; biases QKV (a+2g)·d, O h; q/k norms; GPT-OSS
// sinks a. MLA (DeepSeek-V2 §2.1, transformers DeepseekV3Attention): q_a_proj h·q_r + q_a_layernorm q_r + q_b_proj
// q_r·a·(n+r) (without q_lora_rank: q_proj h·a·(n+r)), kv_a_proj_with_mqa h·(kv_r + r) + kv_a_layernorm kv_r,
// kv_b_proj kv_r·a·(n+v), o_proj a·v·h; attention_bias adds biases to q_a, kv_a and o.
// MoE (transformers MixtralSparseMoeBlock, Qwen2MoeSparseMoeBlock, DeepseekV3MoE, GptOssMLP): router E·h (+E bias),
// E routed experts of ffn_params(f_e), shared experts of ffn_params(f_s) each (DeepSeek's n_shared experts of
// moe_intermediate_size are one MLP of n·f_e: the same count), Qwen2-MoE's shared-expert gate h.
// The DeepSeek-V3 routing-bias buffer (e_score_correction_bias, E per layer) is updated outside the optimizer
// (auxiliary-loss-free balancing, arXiv 2412.19437 §2.1.2) and is not counted.
LayerParams layer_params(const ModelSpec& m, LayerKind k) {
  const std::int64_t h = m.hidden, a = m.heads, g = m.g(), d = m.d();
  LayerParams p;
  if (k.attention == AttentionKind::Mamba) {
    p.attention = mamba_params(m);
  } else if (k.attention == AttentionKind::None) {
    p.attention = 0;
  } else if (k.attention == AttentionKind::MLA) {
    const std::int64_t qr = m.q_lora_rank, kvr = m.kv_lora_rank, n = m.qk_nope_head_dim, r = m.qk_rope_head_dim,
                       v = m.v_head_dim;
    p.attention = (qr > 0 ? h * qr + qr + qr * a * (n + r) : h * a * (n + r)) + h * (kvr + r) + kvr +
                  kvr * a * (n + v) + a * v * h;
    if (m.has_qkv_bias()) p.attention += (qr > 0 ? qr : 0) + kvr + r;
    if (m.has_out_bias()) p.attention += h;
  } else {
    p.attention = h * a * d + 2 * h * g * d + a * d * h + (m.has_qkv_bias() ? (a + 2 * g) * d : 0) +
                  (m.has_out_bias() ? h : 0) + qk_norm_params(m) + (m.attention_sinks ? a : 0);
  }
  if (k.ffn == FfnKind::MoE) {
    p.expert = ffn_params(m, m.expert_ffn_hidden, m.expert_bias || m.has_ffn_bias(), m.expert_width());
    p.ffn = m.experts * p.expert;
    p.latent = latent_params(m);
    p.shared = m.shared_experts * ffn_params(m, m.shared_ffn(), m.has_ffn_bias()) + (m.shared_expert_gate ? h : 0);
    p.router = m.experts * h + (m.router_bias ? m.experts : 0);
  } else if (k.ffn == FfnKind::Dense) {
    p.ffn = ffn_params(m, m.ffn_hidden, m.has_ffn_bias());
  }
  // Norms: RMSNorm h, LayerNorm 2h; two per layer (Gemma 2: four; Falcon-7B and a hybrid model's single blocks: one).
  p.norms = m.norm_layers * norm_params(m);
  return p;
}

ParamCounts count_params(const ModelSpec& m) {
  const std::int64_t h = m.hidden, V = m.vocab;
  ParamCounts c;
  const LayerParams first = layer_params(m, m.layers > 0 ? m.layer(0) : m.uniform_kind());
  c.attention_per_layer = first.attention;
  c.mlp_per_layer = first.ffn + first.shared + first.router;
  c.norms_per_layer = first.norms;
  c.per_layer = first.total();
  std::int64_t active_layers = 0;
  for (const auto& [kind, n] : m.layer_kind_counts()) {
    const LayerParams p = layer_params(m, kind);
    c.layers += n * p.total();
    active_layers += n * p.active(m.experts_per_token);
    if (kind.ffn == FfnKind::MoE) c.routed_experts += n * p.ffn;
  }
  c.embedding = V * h;
  c.positions = m.position == PositionKind::Learned ? m.seq_len * h : 0;
  c.lm_head = m.tied_embeddings ? 0 : V * h;  // a tied LM head reuses the embedding matrix: counted once
  c.final_norm = norm_params(m);
  const std::int64_t outside = c.embedding + c.positions + c.lm_head + c.final_norm;
  c.total = c.layers + outside;
  c.active = active_layers + outside;
  if (m.mtp_layers > 0) {
    // DeepSeek-V3 README_WEIGHTS.md: each MTP module = enorm, hnorm, eh_proj (2h → h) and one transformer layer of
    // the main model's structure; embedding and output head shared. The module's final norm (shared_head.norm,
    // Megatron's MTP final layernorm) is its own: 3 norms in all, as Megatron's `3 * hidden_size` MTP term. A hybrid
    // model's module holds its pattern's blocks (Nemotron 3 Super "*E": an attention and an MoE block, each with its
    // pre-norm); with mtp_repeated one module serves every depth, counted once.
    std::int64_t total = 0, active = 0;
    for (const LayerKind& k : m.mtp_module_kinds()) {
      const LayerParams p = layer_params(m, k);
      total += p.total();
      active += p.active(m.experts_per_token);
    }
    const std::int64_t extra = 2 * h * h + 3 * norm_params(m);
    const int modules = m.mtp_repeated ? 1 : m.mtp_layers;
    c.mtp = modules * (total + extra);
    c.mtp_active = modules * (active + extra);
  }
  return c;
}

// Megatron-LM partitioning (Shoeybi et al. 2019 §3): QKV and FFN-in are column-parallel (weights and biases ÷t),
// O and FFN-out row-parallel (weights ÷t, bias added after the reduction so it is replicated), norms replicated.
// GQA: each rank holds g/t KV heads. Megatron-Core itself requires g % t == 0 (TransformerConfig raises
// "num_query_groups must be a multiple of tensor_model_parallel_size"); for t > g parsim models the usual
// replication instead (each KV head copied t/g times, one K and one V head per rank): kv heads per rank =
// max(g/t, 1). Whether such a plan is allowed is plans/' decision.
// MLA (Megatron-Core multi_latent_attention.py): linear_q_down_proj and linear_kv_down_proj are "duplicated"
// (whole on every TP rank), as are q_layernorm and kv_layernorm; linear_q_up_proj / linear_kv_up_proj are
// column-parallel over heads, linear_proj row-parallel.
// MoE (Megatron-Core moe_layer.py, experts.py, shared_experts.py; MoE parallel folding, arXiv 2504.14960): the router
// is replicated, shared experts are split over TP like a dense MLP, each rank holds experts/ep routed experts and each
// of those is split over etp (fc1 column-, fc2 row-parallel, fc2 bias replicated).
RankParams layer_params_per_rank(const ModelSpec& m, LayerKind k, int tp, int ep, int etp) {
  require_tp(tp);
  if (ep < 1) fail("expert-parallel degree must be at least 1, got " + std::to_string(ep));
  if (etp < 0) fail("expert tensor-parallel degree must be at least 1, got " + std::to_string(etp));
  const double t = tp, h = static_cast<double>(m.hidden), d = static_cast<double>(m.d());
  const double a_r = m.heads / t, kv_r = std::max(static_cast<double>(m.g()) / t, 1.0);
  RankParams out;
  double& p = out.dense;
  if (k.attention == AttentionKind::Mamba) {
    // MambaMixer (megatron/core/ssm/mamba_mixer.py): in_proj column-parallel and out_proj row-parallel over the heads
    // and groups, conv1d, dt_bias, A_log, D and the gated norm split with them (nheads / ngroups per rank); an
    // out_proj bias is replicated.
    p += static_cast<double>(mamba_params(m) - (m.mamba_proj_bias ? m.hidden : 0)) / t +
         (m.mamba_proj_bias ? h : 0.0);
  } else if (k.attention == AttentionKind::None) {
  } else if (k.attention == AttentionKind::MLA) {
    const double qr = static_cast<double>(m.q_lora_rank), kvr = static_cast<double>(m.kv_lora_rank);
    const double n = static_cast<double>(m.qk_nope_head_dim), r = static_cast<double>(m.qk_rope_head_dim);
    const double v = static_cast<double>(m.v_head_dim);
    p += (qr > 0 ? h * qr + qr + qr * a_r * (n + r) : h * a_r * (n + r)) + h * (kvr + r) + kvr +
         kvr * a_r * (n + v) + a_r * v * h;
    if (m.has_qkv_bias()) p += (qr > 0 ? qr : 0) + kvr + r;
    if (m.has_out_bias()) p += h;
  } else {
    p += h * d * (a_r + 2 * kv_r) + a_r * d * h;
    if (m.has_qkv_bias()) p += (a_r + 2 * kv_r) * d;
    if (m.has_out_bias()) p += h;
    const double qk_per_weight = m.norm_tensors();  // LayerNorm q/k norms carry a bias
    if (m.qk_norm == QkNorm::PerHead) p += qk_per_weight * 2 * d;
    if (m.qk_norm == QkNorm::Full) p += qk_per_weight * (a_r + kv_r) * d;
    if (m.attention_sinks) p += a_r;
  }
  const double mult = m.gated() ? 3 : 2;
  auto split_ffn = [&](double f, double ways, bool biases, double width) {
    return mult * width * f / ways + (biases ? (m.gated() ? 2 * f : f) / ways + width : 0.0);
  };
  if (k.ffn == FfnKind::MoE) {
    const double e_t = etp > 0 ? etp : t;
    p += static_cast<double>(m.experts) * h + (m.router_bias ? m.experts : 0);
    p += m.shared_experts * split_ffn(static_cast<double>(m.shared_ffn()), t, m.has_ffn_bias(), h) +
         (m.shared_expert_gate ? h : 0.0);
    // LatentMoE's projections are "duplicated" TE linears (moe_layer.py parallel_mode="duplicated"): whole on every
    // TP rank.
    p += static_cast<double>(latent_params(m));
    out.expert = static_cast<double>(m.experts) / ep *
                 split_ffn(static_cast<double>(m.expert_ffn_hidden), e_t, m.expert_bias || m.has_ffn_bias(),
                           static_cast<double>(m.expert_width()));
  } else if (k.ffn == FfnKind::Dense) {
    p += split_ffn(static_cast<double>(m.ffn_hidden), t, m.has_ffn_bias(), h);
  }
  p += static_cast<double>(m.norm_layers * norm_params(m));
  return out;
}

double layer_params_per_tp_rank(const ModelSpec& m, int tp) {
  require_tp(tp);
  return layer_params_per_rank(m, representative_kind(m), tp, 1, tp).total();
}

// VocabParallelEmbedding: padded V rows split over t; learned position table replicated on every rank.
double embedding_params_per_tp_rank(const ModelSpec& m, int tp) {
  const double rows = static_cast<double>(padded_vocab(m.vocab, tp)) / tp;
  const double pos = m.position == PositionKind::Learned ? static_cast<double>(m.seq_len * m.hidden) : 0.0;
  return rows * static_cast<double>(m.hidden) + pos;
}

// Output layer: column-parallel over the padded vocabulary, plus the (replicated) final norm. Always includes the
// matrix: with tied embeddings and pp = 1 the caller must not count it twice.
double lm_head_params_per_tp_rank(const ModelSpec& m, int tp) {
  const double rows = static_cast<double>(padded_vocab(m.vocab, tp)) / tp;
  return rows * static_cast<double>(m.hidden) + static_cast<double>(norm_params(m));
}

}  // namespace parsim
