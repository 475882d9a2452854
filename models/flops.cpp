// parsim models/ — FLOPs (domain-notes §2; multiply-add = 2 FLOPs) and the per-rank work of one layer.
#include "models/model.hpp"
#include "sim/core/error.hpp"

namespace parsim {
namespace {

std::int64_t ceil_div(std::int64_t x, std::int64_t y) { return (x + y - 1) / y; }

void require_split(std::int64_t b, std::int64_t s, int tp, int cp) {
  require(b >= 1, "micro-batch size must be at least 1, got " + std::to_string(b));
  require(s >= 1, "sequence length must be at least 1, got " + std::to_string(s));
  require(tp >= 1, "tensor-parallel degree must be at least 1, got " + std::to_string(tp));
  require(cp >= 1, "context-parallel degree must be at least 1, got " + std::to_string(cp));
  require(s % cp == 0, "sequence length " + std::to_string(s) + " is not divisible by the context-parallel degree " +
                           std::to_string(cp));
}

}  // namespace

// FlashAttention's benchmark count (Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py):
// forward = 4·b·s_q·s_kv·heads·d (QKᵀ and P·V, 2 FLOPs per multiply-add each), halved when causal because the
// kernels skip fully masked tiles.
double AttentionShape::forward_flops() const {
  const double f = 4.0 * static_cast<double>(batch) * static_cast<double>(seq_q) * static_cast<double>(seq_kv) *
                   static_cast<double>(heads) * static_cast<double>(head_dim);
  return causal ? 0.5 * f : f;
}

// Forward FLOPs per layer (domain-notes §2; Narayanan et al. 2021 App., generalised to GQA and gated FFNs), for
// T = b·s tokens: QKV 2·T·h·(a+2g)·d, scores QKᵀ 2·T·a·d·s, attention×V 2·T·a·d·s (full s², no causal halving:
// Megatron-LM ≤ core v0.11 `num_floating_point_operations` and PaLM App. B), O 2·T·a·d·h, FFN 6·T·h·f gated /
// 4·T·h·f plain. Bias adds, norms and softmax are not counted (as in all these conventions).
LayerFlops layer_forward_flops(const ModelSpec& m, std::int64_t b, std::int64_t s) {
  const double T = static_cast<double>(b) * static_cast<double>(s);
  const double h = static_cast<double>(m.hidden), a = m.heads, g = static_cast<double>(m.g());
  const double d = static_cast<double>(m.d()), f = static_cast<double>(m.ffn_hidden);
  LayerFlops x;
  x.qkv = 2 * T * h * (a + 2 * g) * d;
  x.scores = 2 * T * a * d * static_cast<double>(s);
  x.attn_v = 2 * T * a * d * static_cast<double>(s);
  x.out_proj = 2 * T * a * d * h;
  x.ffn = (m.gated() ? 6 : 4) * T * h * f;
  return x;
}

// LM head: 2·h·V per token (real vocabulary, Megatron's `V/(2Lh)` term).
double lm_head_forward_flops(const ModelSpec& m, std::int64_t b, std::int64_t s) {
  return 2.0 * static_cast<double>(b) * static_cast<double>(s) * static_cast<double>(m.hidden) *
         static_cast<double>(m.vocab);
}

// Training = 3 × forward (backward = dgrad + wgrad = 2 × forward; Narayanan et al. 2021, Megatron training.py).
// Equals Megatron ≤ v0.11: 12·B·s·L·h²·[(1 + g/a + s/h)(a·d/h) + (f/h)(1.5 if gated) + V/(2Lh)].
double model_flops(const ModelSpec& m, std::int64_t sequences, std::int64_t s) {
  return 3.0 * (m.layers * layer_forward_flops(m, sequences, s).total() + lm_head_forward_flops(m, sequences, s));
}

// What the GPUs execute: full recompute reruns every layer's forward once more (Narayanan Eq. 3: 96 instead of 72
// for the layer terms, LM head unchanged); selective recompute reruns the attention core only (QKᵀ, softmax,
// P·V; Korthikanti et al. 2022 §5 / App. A) — here exactly one more forward of the scores and attention×V GEMMs,
// 4·B·s²·h per layer for a·d = h, i.e. 72·B·s·L·h²·(1 + 2s/(9h) + V/(12Lh)) [D]. (Korthikanti App. A, as quoted in
// domain-notes §2, prints s/(3h) for the middle term: 12·B·s²·h more per layer, a whole extra forward + backward
// of the core rather than one forward.)
double hardware_flops(const ModelSpec& m, std::int64_t sequences, std::int64_t s, Recompute r) {
  const LayerFlops fwd = layer_forward_flops(m, sequences, s);
  double extra = 0;
  if (r == Recompute::Full) extra = m.layers * fwd.total();
  if (r == Recompute::Selective) extra = m.layers * (fwd.scores + fwd.attn_v);
  return model_flops(m, sequences, s) + extra;
}

// One TP×CP rank's forward work for a micro-batch of b sequences of length s (Megatron-LM partitioning,
// Shoeybi et al. 2019 §3; CP splits tokens, Megatron context_parallel.md). Token dimension m = b·s/c.
//   qkv      [m × (a/t + 2·kv_r)·d] = [m × h]·W   column-parallel; kv_r = KV heads per rank = ⌈g/t⌉, i.e. g/t, or 1
//                                                 when t > g (each KV head replicated t/g times, see params.cpp)
//   out_proj [m × h] = [m × a·d/t]·W              row-parallel
//   ffn_in   [m × (2f or f)/t] = [m × h]·W        column-parallel; gate and up fused as in Megatron's linear_fc1
//   ffn_out  [m × h] = [m × f/t]·W                row-parallel
// Heads and f are rounded up when t does not divide them (plans reject such degrees; this keeps shapes non-zero).
//
// elementwise_bytes_fwd — an ESTIMATE of the HBM bytes the memory-bound kernels move in the forward pass, with e =
// bytes per activation element. Per token with a hidden-sized tensor (÷t under SP, where these kernels run on the
// token shard):
//   norms        read h + write h each              norm_layers · 2h·e
//   residual add read 2h + write h, twice           6h·e
//   dropout      1-byte mask per hidden dropout      2h  (only when m.dropout; O and FFN-out biases are fused into
//                                                        Megatron's bias-dropout-add, so they add nothing)
// Per token on the rank's head/FFN shard (never ÷t by SP: already split by TP):
//   rotary       read + write Q and K               2·(a/t + kv_r)·d·e   (RoPE only)
//   activation   gated: read gate, up, write out    3·(f/t)·e; plain: read, write 2·(f/t)·e (FFN-in bias fused)
// Not counted: softmax, masking and attention dropout (inside the flash kernel), QKV bias (GEMM epilogue), fp8
// casts.
LayerWork layer_work(const ModelSpec& m, std::int64_t b, std::int64_t s, int tp, int cp, bool sp, Precision p) {
  require_split(b, s, tp, cp);
  const std::int64_t t = tp, h = m.hidden, d = m.d(), tokens = b * (s / cp);
  const std::int64_t a_r = ceil_div(m.heads, t), kv_r = ceil_div(m.g(), t), f_r = ceil_div(m.ffn_hidden, t);
  LayerWork w;
  w.gemms = {
      {"qkv", tokens, (a_r + 2 * kv_r) * d, h},
      {"out_proj", tokens, h, a_r * d},
      {"ffn_in", tokens, (m.gated() ? 2 : 1) * f_r, h},
      {"ffn_out", tokens, h, f_r},
  };
  w.attention = AttentionShape{b, a_r, s / cp, s, d, true};

  const double e = activation_element_bytes(p), hd = static_cast<double>(h);
  const double hidden_tokens = static_cast<double>(tokens) / (sp ? tp : 1);
  double per_hidden_token = (2.0 * m.norm_layers + 6.0) * hd * e + (m.dropout ? 2.0 * hd : 0.0);
  double per_token = (m.gated() ? 3.0 : 2.0) * static_cast<double>(f_r) * e;
  if (m.position == PositionKind::RoPE) per_token += 2.0 * static_cast<double>((a_r + kv_r) * d) * e;
  w.elementwise_bytes_fwd = hidden_tokens * per_hidden_token + static_cast<double>(tokens) * per_token;
  return w;
}

// Output layer GEMM: column-parallel over Megatron's padded vocabulary (padded_vocab(V, t) / t columns per rank).
GemmShape lm_head_gemm(const ModelSpec& m, std::int64_t b, std::int64_t s, int tp, int cp) {
  require_split(b, s, tp, cp);
  return GemmShape{"lm_head", b * (s / cp), padded_vocab(m.vocab, tp) / tp, m.hidden};
}

}  // namespace parsim
