// parsim models/ — transformer architecture, parameter, FLOP and activation-memory formulas.
// Pure math: nothing here knows about GPUs, time or the network. TP/CP/SP degrees enter only as the divisors that
// split a layer's tensors (Megatron-LM's partitioning), never as placement.
//
// Symbols (see docs/domain-notes.md and the README): b micro-batch, s sequence, h hidden, L layers, a query
// heads, g KV heads, d head dim, f FFN inner, V vocabulary, t TP, c CP.
#pragma once
#include "sim/core/types.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace parsim {

enum class FfnActivation { SwiGLU, GeLU, ReLU2 };  // SwiGLU = gated FFN (3 weight matrices); others 2 matrices
enum class NormKind { RMSNorm, LayerNorm };
enum class PositionKind { RoPE, Learned, ALiBi };

struct ModelSpec {
  std::string name;
  int layers = 0;
  std::int64_t hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  std::int64_t ffn_hidden = 0;
  std::int64_t vocab = 0;       // real (unpadded) vocabulary
  std::int64_t seq_len = 0;     // default training sequence length (also the learned-position table size)
  FfnActivation activation = FfnActivation::SwiGLU;
  std::int64_t head_dim = 0;    // resolved: explicit head_dim or hidden / heads
  bool tied_embeddings = false;
  bool bias = false;
  NormKind norm = NormKind::RMSNorm;
  PositionKind position = PositionKind::RoPE;

  // ---- additions (models engineer) ----
  // Partial biases, for checkpoints that have some linear biases but not all. `bias` above means every linear layer
  // (QKV, O, FFN in and out) has one and implies all three. Qwen2: qkv_bias only; Llama `attention_bias`: QKV + O.
  bool qkv_bias = false;
  bool out_bias = false;
  bool ffn_bias = false;
  // Training applies dropout (attention-probability and hidden dropout, GPT-2/3 and Megatron's 0.1 defaults). Only
  // activation memory depends on it (1-byte masks, Korthikanti 2022 §4.1); Llama-family training uses none.
  bool dropout = false;
  int norm_layers = 2;  // norm layers per transformer layer: 2 (pre-attention, pre-FFN); Gemma 2 has 4

  // ---- mixture of experts (issue 10; the models engineer extends this block) ----
  // experts == 0 for dense models. Names follow the parsim model JSON keys of issue 10.
  int experts = 0;                      // routed experts per MoE layer
  int experts_per_token = 0;            // top-k routed experts per token
  std::int64_t expert_ffn_hidden = 0;   // FFN inner size of one routed expert
  int shared_experts = 0;               // always-active shared experts per MoE layer
  bool is_moe() const { return experts > 0; }

  // Gated FFN (3 weight matrices): SwiGLU, and also the GeGLU of Gemma, which has the same shapes and FLOPs.
  bool gated() const { return activation == FfnActivation::SwiGLU; }
  // head_dim / kv_heads as the formulas use them: the stored value, or the default when a hand-built spec left 0.
  std::int64_t d() const { return head_dim > 0 ? head_dim : (heads > 0 ? hidden / heads : 0); }
  std::int64_t g() const { return kv_heads > 0 ? kv_heads : heads; }
  bool has_qkv_bias() const { return bias || qkv_bias; }
  bool has_out_bias() const { return bias || out_bias; }
  bool has_ffn_bias() const { return bias || ffn_bias; }
};

// ---- loading (model_io.cpp) ----
// A built-in preset name (case-insensitive, aliases allowed), a parsim model JSON file, or a Hugging Face
// config.json (recognised by its keys). Throws InputError for every bad input class listed in the README.
// Policies (details in model_io.cpp): parsim JSON `kv_heads` is optional (default `heads`), `"bias"` also accepts
// "qkv", optional `"dropout"` (default false). HF configs: families llama, mistral, qwen2, gemma, gemma2, gpt2;
// shape keys read, known shape-neutral keys ignored, any other key is an error; RoPE models get
// seq_len = min(max_position_embeddings, 8192), learned-position models n_positions. The returned spec is validated
// and has head_dim resolved.
ModelSpec resolve_model(const std::string& name_or_path);
std::vector<std::string> model_preset_names();
// Checks sizes are positive, heads divide hidden unless head_dim is given, kv_heads divides heads.
void validate_model(const ModelSpec& m);

// ---- parameters (params.cpp) ----
// Megatron pads the vocabulary to a multiple of divisible_by × tp (megatron/training/vocab_utils.py).
std::int64_t padded_vocab(std::int64_t vocab, int tp, int divisible_by = 128);

struct ParamCounts {
  std::int64_t attention_per_layer = 0;  // Q, K, V, O weights (+ biases)
  std::int64_t mlp_per_layer = 0;        // FFN weights (+ biases)
  std::int64_t norms_per_layer = 0;      // the layer's two norms
  std::int64_t per_layer = 0;            // sum of the three above
  std::int64_t embedding = 0;            // V·h (real vocabulary)
  std::int64_t positions = 0;            // learned position table, else 0
  std::int64_t lm_head = 0;              // V·h when untied, else 0
  std::int64_t final_norm = 0;
  std::int64_t total = 0;                // exact total, embeddings included, tied matrix once
};
ParamCounts count_params(const ModelSpec& m);

// Parameters one TP rank holds (Megatron partitioning: QKV/FFN-in column-parallel, O/FFN-out row-parallel, norms
// and row-parallel biases replicated; vocabulary padded for tp).
double layer_params_per_tp_rank(const ModelSpec& m, int tp);
double embedding_params_per_tp_rank(const ModelSpec& m, int tp);  // padded V·h/t (+ learned positions, replicated)
double lm_head_params_per_tp_rank(const ModelSpec& m, int tp);    // padded V·h/t + final norm; with tied embeddings
                                                                  // and pp > 1 Megatron keeps a copy on the last stage,
                                                                  // so callers decide whether to count it.

// ---- work per layer (flops.cpp) ----
// One matrix multiply C[m×n] = A[m×k]·B[k×n] as one TP rank runs it in the forward pass; m is the token dimension.
struct GemmShape {
  const char* name;
  std::int64_t m, n, k;
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};
// The attention core (QKᵀ, softmax, ·V) as one TP×CP rank runs it: heads = a/t, seq_q = s/c (local queries),
// seq_kv = s (all keys, visited over the CP ring), causal.
struct AttentionShape {
  std::int64_t batch = 0, heads = 0, seq_q = 0, seq_kv = 0, head_dim = 0;
  bool causal = true;
  // FLOPs of QKᵀ and AV in the forward pass, skipping masked tiles when causal (FlashAttention's count).
  double forward_flops() const;
};
struct LayerWork {
  std::vector<GemmShape> gemms;       // forward GEMMs of one layer on one TP×CP rank: qkv, out_proj, ffn_in(s), ffn_out
  AttentionShape attention;
  double elementwise_bytes_fwd = 0;   // HBM bytes moved by norms, activation function, residual adds, rotary, dropout
};
LayerWork layer_work(const ModelSpec& m, std::int64_t b, std::int64_t s, int tp, int cp, bool sp, Precision p);
GemmShape lm_head_gemm(const ModelSpec& m, std::int64_t b, std::int64_t s, int tp, int cp);  // padded vocab / t

// Whole-model FLOP counts (no parallel split), used for MFU/HFU. Multiply-add = 2 FLOPs.
struct LayerFlops {
  double qkv = 0, scores = 0, attn_v = 0, out_proj = 0, ffn = 0;
  double total() const { return qkv + scores + attn_v + out_proj + ffn; }
};
// Forward FLOPs of one layer for b sequences of length s, attention counted over the full s² (Megatron-LM ≤ core
// v0.11 `num_floating_point_operations`, PaLM App. B) — the convention behind parsim's MFU.
LayerFlops layer_forward_flops(const ModelSpec& m, std::int64_t b, std::int64_t s);
double lm_head_forward_flops(const ModelSpec& m, std::int64_t b, std::int64_t s);  // 2·b·s·h·V (real V)
// Model FLOPs of one optimizer step over `sequences` sequences: 3 × forward (fwd + dgrad + wgrad).
double model_flops(const ModelSpec& m, std::int64_t sequences, std::int64_t s);
// Hardware FLOPs: model FLOPs + what recompute re-executes (full: one more forward of every layer; selective: the
// attention core's forward, Korthikanti 2022 App. A).
double hardware_flops(const ModelSpec& m, std::int64_t sequences, std::int64_t s, Recompute r);

// ---- activation memory (activations.cpp) — Korthikanti et al. 2022 §4, Table 2, with GQA/SwiGLU/flash
// adjustments from domain-notes §3. All values in bytes, for ONE micro-batch on ONE rank.
struct ActivationOptions {
  int tp = 1;
  int cp = 1;
  bool sp = false;
  Recompute recompute = Recompute::None;
  bool flash_attention = true;  // flash kernels never store the s² score/softmax tensors
  Precision precision = Precision::BF16;
};
// Bytes kept from a layer's forward until its backward.
double activation_bytes_per_layer(const ModelSpec& m, std::int64_t b, std::int64_t s, const ActivationOptions& o);
// Extra bytes alive transiently while one layer runs its backward (with full recompute the layer's activations are
// regenerated: the no-recompute footprint of one layer).
double activation_working_bytes(const ModelSpec& m, std::int64_t b, std::int64_t s, const ActivationOptions& o);
// First stage: embedding output / dropout mask kept per micro-batch (Korthikanti §4.3).
double embedding_activation_bytes(const ModelSpec& m, std::int64_t b, std::int64_t s, const ActivationOptions& o);
// Last stage: logits and loss buffers alive during the output layer's forward/backward (fp32 logits, padded V / t).
double output_activation_bytes(const ModelSpec& m, std::int64_t b, std::int64_t s, const ActivationOptions& o);

}  // namespace parsim
