// parsim models/ — parameter counts (domain-notes §1) and their Megatron-LM tensor-parallel split.
#include "models/model.hpp"
#include "sim/core/error.hpp"

#include <algorithm>

namespace parsim {
namespace {

std::int64_t norm_params(const ModelSpec& m) {
  return m.norm == NormKind::LayerNorm ? 2 * m.hidden : m.hidden;  // LayerNorm: weight + bias; RMSNorm: weight
}

void require_tp(int tp) { require(tp >= 1, "tensor-parallel degree must be at least 1, got " + std::to_string(tp)); }

}  // namespace

// Megatron-LM megatron/training/vocab_utils.py: the vocabulary is padded up to a multiple of
// make_vocab_size_divisible_by (default 128) × tensor-model-parallel size.
std::int64_t padded_vocab(std::int64_t vocab, int tp, int divisible_by) {
  require_tp(tp);
  require(divisible_by >= 1, "vocabulary padding multiple must be at least 1, got " + std::to_string(divisible_by));
  const std::int64_t multiple = static_cast<std::int64_t>(divisible_by) * tp;
  return (vocab + multiple - 1) / multiple * multiple;
}

ParamCounts count_params(const ModelSpec& m) {
  const std::int64_t h = m.hidden, a = m.heads, g = m.g(), d = m.d(), f = m.ffn_hidden, V = m.vocab;
  ParamCounts c;
  // Attention (domain-notes §1): Q h·a·d, K and V h·g·d each, O a·d·h; biases QKV (a+2g)·d, O h.
  c.attention_per_layer = h * a * d + 2 * h * g * d + a * d * h + (m.has_qkv_bias() ? (a + 2 * g) * d : 0) +
                          (m.has_out_bias() ? h : 0);
  // FFN: gated 3·h·f (gate, up, down), plain 2·h·f; biases gated 2f + h, plain f + h.
  c.mlp_per_layer = (m.gated() ? 3 : 2) * h * f + (m.has_ffn_bias() ? (m.gated() ? 2 * f : f) + h : 0);
  // Norms: RMSNorm h, LayerNorm 2h, two per layer (Gemma 2: four).
  c.norms_per_layer = m.norm_layers * norm_params(m);
  c.per_layer = c.attention_per_layer + c.mlp_per_layer + c.norms_per_layer;
  c.embedding = V * h;
  c.positions = m.position == PositionKind::Learned ? m.seq_len * h : 0;
  c.lm_head = m.tied_embeddings ? 0 : V * h;  // a tied LM head reuses the embedding matrix: counted once
  c.final_norm = norm_params(m);
  c.total = m.layers * c.per_layer + c.embedding + c.positions + c.lm_head + c.final_norm;
  return c;
}

// Megatron-LM partitioning (Shoeybi et al. 2019 §3): QKV and FFN-in are column-parallel (weights and biases ÷t),
// O and FFN-out row-parallel (weights ÷t, bias added after the reduction so it is replicated), norms replicated.
// GQA: each rank holds g/t KV heads. Megatron-Core itself requires g % t == 0 (TransformerConfig raises
// "num_query_groups must be a multiple of tensor_model_parallel_size"); for t > g parsim models the usual
// replication instead (each KV head copied t/g times, one K and one V head per rank): kv heads per rank =
// max(g/t, 1). Whether such a plan is allowed is plans/' decision.
double layer_params_per_tp_rank(const ModelSpec& m, int tp) {
  require_tp(tp);
  const double t = tp, h = static_cast<double>(m.hidden), d = static_cast<double>(m.d());
  const double f = static_cast<double>(m.ffn_hidden);
  const double a_r = m.heads / t, kv_r = std::max(static_cast<double>(m.g()) / t, 1.0);
  double p = h * d * (a_r + 2 * kv_r) + a_r * d * h;
  if (m.has_qkv_bias()) p += (a_r + 2 * kv_r) * d;
  if (m.has_out_bias()) p += h;
  p += (m.gated() ? 3 : 2) * h * f / t;
  if (m.has_ffn_bias()) p += (m.gated() ? 2 * f : f) / t + h;
  p += static_cast<double>(m.norm_layers * norm_params(m));
  return p;
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
