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
#include <utility>
#include <vector>

namespace parsim {

enum class FfnActivation { SwiGLU, GeLU, ReLU2 };  // SwiGLU = gated FFN (3 weight matrices); others 2 matrices
enum class NormKind { RMSNorm, LayerNorm };
enum class PositionKind { RoPE, Learned, ALiBi, None };  // None: no positional encoding (NoPE; Nemotron-H attention)

// What one transformer layer is (issue 10: layers are no longer uniform — DeepSeek's first dense layers, Qwen-MoE's
// sparse step and mlp_only_layers, GPT-OSS's and Gemma 2's alternating sliding-window attention).
//   Full     multi-head / grouped-query attention over every earlier key (causal)
//   Sliding  the same projections, each query attending to at most `sliding_window` keys (Beltagy et al. 2020;
//            Mistral 7B, Jiang et al. 2023 §2)
//   Chunked  the same projections, each query attending causally within its `attention_chunk`-token chunk only
//            (Llama 4's chunked attention: transformers Llama4TextModel's chunked causal mask, the RoPE layers)
//   MLA      DeepSeek's multi-head latent attention (DeepSeek-AI 2024, arXiv 2405.04434 §2.1): low-rank
//            compressed Q and KV, decoupled RoPE key
//   Mamba    a Mamba-2 mixer in place of attention (Dao & Gu 2024, arXiv 2405.21060 §7: in_proj, causal conv1d, the
//            chunked state-space-dual scan, gated RMSNorm, out_proj)
//   None     no token mixer: the layer is an MLP or MoE block alone
// Hybrid models (Nemotron-H, Nemotron 3: Megatron-Core's hybrid_layer_pattern, one character per layer) are stacks
// of single blocks — each layer is one pre-norm, ONE sub-block and one residual add: M = {Mamba, None},
// * = {Full, None}, - = {None, Dense}, E = {None, MoE}. A layer has at least one of the two.
enum class AttentionKind { Full, Sliding, Chunked, MLA, Mamba, None };
enum class FfnKind { Dense, MoE, None };  // MoE: router + routed experts (+ shared experts); None: no FFN
struct LayerKind {
  AttentionKind attention = AttentionKind::Full;
  FfnKind ffn = FfnKind::Dense;
  bool operator==(const LayerKind&) const = default;
  // The layer has softmax attention (full, sliding or latent): an attention core, QKV and output projections.
  bool has_attention() const {
    return attention == AttentionKind::Full || attention == AttentionKind::Sliding ||
           attention == AttentionKind::Chunked || attention == AttentionKind::MLA;
  }
  bool has_mixer() const { return attention != AttentionKind::None; }  // attention or a Mamba mixer
  bool has_ffn() const { return ffn != FfnKind::None; }
  // Sub-blocks (mixer, FFN): 2 in a transformer layer, 1 in a hybrid model's layer — one pre-norm and one residual
  // add each.
  int blocks() const { return (has_mixer() ? 1 : 0) + (has_ffn() ? 1 : 0); }
};
std::string to_string(AttentionKind k);
std::string to_string(FfnKind k);

// Normalisation of queries and keys before RoPE: Qwen3 per head (RMSNorm of size d, shared by the heads), OLMo 2 and
// OLMoE over the whole projection (RMSNorm of size a·d for Q, g·d for K).
enum class QkNorm { None, PerHead, Full };

struct ModelSpec {
  std::string name;
  int layers = 0;
  std::int64_t hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  std::int64_t ffn_hidden = 0;  // inner size of a DENSE FFN layer (MoE layers use expert_ffn_hidden)
  std::int64_t vocab = 0;       // real (unpadded) vocabulary
  std::int64_t seq_len = 0;     // default training sequence length (also the learned-position table size)
  FfnActivation activation = FfnActivation::SwiGLU;
  std::int64_t head_dim = 0;    // resolved: explicit head_dim or hidden / heads (MLA: qk_nope + qk_rope)
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
  int norm_layers = 2;  // norm layers per transformer layer: 2 (pre-attention, pre-FFN); Gemma 2 has 4; Falcon-7B 1

  // ---- attention variants (issue 10) ----
  QkNorm qk_norm = QkNorm::None;
  // Attention and FFN read the same layer input and their outputs are added to it together (GPT-J; GPT-NeoX
  // use_parallel_residual; Falcon parallel_attn). Same parameters and FLOPs; fewer stored activations.
  bool parallel_attention = false;
  double rotary_fraction = 1.0;      // share of each head's dimensions that RoPE rotates (GPT-NeoX rotary_pct 0.25)
  std::int64_t sliding_window = 0;   // keys a Sliding layer attends to (0: no sliding-window layers)
  // Llama 4's chunked attention (Llama4TextConfig attention_chunk_size): its RoPE layers (kind Chunked) attend only
  // within chunks of this many tokens — causal attention over each chunk, as a packed batch of chunk-long sequences
  // runs it (AttentionShape::chunk); up to one chunk that is plain causal attention. 0: none.
  std::int64_t attention_chunk = 0;
  bool attention_sinks = false;      // GPT-OSS: one learned sink logit per head and layer (a parameters per layer)
  // Multi-head latent attention (attention == MLA on every layer; DeepSeek-V2/V3 config names). kv_heads = heads.
  bool mla = false;
  std::int64_t q_lora_rank = 0;      // 0: queries projected directly from the hidden state (DeepSeek-V2-Lite)
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;

  // ---- mixture of experts (issue 10) ----
  // experts == 0 for dense models. Names follow the parsim model JSON keys of issue 10.
  int experts = 0;                      // routed experts per MoE layer
  int experts_per_token = 0;            // top-k routed experts per token
  std::int64_t expert_ffn_hidden = 0;   // FFN inner size of one routed expert
  int shared_experts = 0;               // always-active shared experts per MoE layer
  std::int64_t shared_expert_ffn_hidden = 0;  // FFN inner size of ONE shared expert (0: expert_ffn_hidden)
  bool shared_expert_gate = false;      // Qwen2-MoE: sigmoid gate Linear(h, 1) on the shared expert's output
  bool router_bias = false;             // GPT-OSS: the router Linear has a bias (E parameters)
  bool expert_bias = false;             // GPT-OSS: every expert's gate/up and down projections have biases
  // The gated activation's inputs clamped before it (GPT-OSS swiglu_limit 7.0: gate to ≤ limit, up to ±limit;
  // Megatron-Core activation_func_clamp_value). 0: no clamp. Shape- and FLOP-neutral; it costs memory-bound passes
  // on the routed experts' TEGroupedMLP path (sim/step/costs/layer.cpp expert_clamp_work).
  double activation_clamp = 0;
  // Whether the routed experts clamp their gated activation's inputs in eager PyTorch before the fused activation —
  // extra passes and a kept concatenation (layer.cpp expert_clamp_work, host.cpp moe_inventory, activations.cpp) —
  // which is the TEGroupedMLP path; the fused grouped MLP (fused_grouped_mlp) clamps in FC1's epilogue.
  bool eager_activation_clamp(bool fused_grouped_mlp) const {
    return activation_clamp > 0 && gated() && !fused_grouped_mlp;
  }
  // Group-limited routing (DeepSeek-V3 n_group / topk_group: the experts form `expert_groups` groups and a token
  // picks its experts from at most `expert_groups_per_token` groups — with one group per node this bounds how many
  // nodes a token's dispatch reaches, DeepSeek-AI 2024 arXiv 2412.19437 §2.1.2). 0 when the model does not limit it.
  int expert_groups = 0;
  int expert_groups_per_token = 0;
  // LatentMoE (Nemotron 3 Super; Megatron-Core moe_layer.py fc1_latent_proj / fc2_latent_proj, HF moe_latent_size):
  // after the router, each token is projected h → moe_latent before the dispatch and the routed experts work at that
  // width (fc1 ℓ → f_e, fc2 f_e → ℓ); after the combine ℓ → h. Router and shared experts see the hidden width. 0: none.
  std::int64_t moe_latent = 0;
  // The width of a routed token: what the dispatch moves and the routed experts' input and output.
  std::int64_t expert_width() const { return moe_latent > 0 ? moe_latent : hidden; }
  // Multi-token-prediction modules (DeepSeek-V3 num_nextn_predict_layers): one extra transformer layer each, with
  // its own norms and a 2h→h projection, sharing the embedding and the output head. Counted SEPARATELY (ParamCounts
  // .mtp, mtp_forward_flops), never in the main model's totals.
  int mtp_layers = 0;
  // The layers of one MTP module: empty = one layer of the main model's last layer kind (DeepSeek-V3); a hybrid model's
  // mtp_hybrid_override_pattern (Nemotron 3 Super "*E": an attention and an MoE block) lists its single-block kinds.
  std::vector<LayerKind> mtp_kinds;
  // One set of MTP weights applied at every depth (Megatron-Core mtp_use_repeated_layer, Megatron-Bridge's Nemotron 3
  // Super recipe: mtp_num_layers 2 over one module): the parameters counted once, the compute mtp_layers times.
  bool mtp_repeated = false;
  std::vector<LayerKind> mtp_module_kinds() const;  // mtp_kinds, or {layer(layers − 1)}

  // ---- Mamba-2 mixers (hybrid models; HF NemotronHConfig / Megatron-Core MambaMixer names) ----
  // mamba_heads == 0: the model has no Mamba layer. d_inner = heads · head_dim (NemotronH: mamba_num_heads ·
  // mamba_head_dim; Megatron-Core: the same when mamba_num_heads is given).
  std::int64_t mamba_heads = 0;       // H: SSM heads (each with its own scalar decay A, dt and D)
  std::int64_t mamba_head_dim = 0;    // P: channels per head
  std::int64_t mamba_state = 0;       // N: state size (ssm_state_size / mamba_state_dim)
  std::int64_t mamba_groups = 0;      // G: groups sharing B and C (n_groups / mamba_num_groups)
  std::int64_t mamba_conv_kernel = 4; // K: causal depthwise conv1d width
  std::int64_t mamba_chunk = 128;     // Q: chunk length of the SSD scan (chunk_size)
  bool mamba_conv_bias = true;        // conv1d bias (use_conv_bias)
  bool mamba_proj_bias = false;       // in_proj / out_proj biases (mamba_proj_bias)
  bool has_mamba() const { return mamba_heads > 0; }
  std::int64_t mamba_inner() const { return mamba_heads * mamba_head_dim; }                     // d_inner
  std::int64_t mamba_conv_channels() const { return mamba_inner() + 2 * mamba_groups * mamba_state; }  // x, B, C
  // in_proj output width: z (d_inner), x (d_inner), B and C (G·N each), dt (H).
  std::int64_t mamba_in_proj() const { return 2 * mamba_inner() + 2 * mamba_groups * mamba_state + mamba_heads; }

  // Per-layer kinds when layers differ; empty when every layer is uniform_kind(). Size `layers` otherwise.
  std::vector<LayerKind> layer_kinds;
  // A hybrid pattern's pipeline segments (Megatron-Core hybrid_layer_pattern with '|' separators: the layers of each
  // pipeline chunk, chunk index v·pp + p as Megatron-Core's select_pipeline_segment picks them); empty without '|'.
  std::vector<int> pipeline_segments;

  bool is_moe() const { return experts > 0; }
  // Gated FFN (3 weight matrices): SwiGLU, and also the GeGLU of Gemma, which has the same shapes and FLOPs.
  bool gated() const { return activation == FfnActivation::SwiGLU; }
  // head_dim / kv_heads as the formulas use them: the stored value, or the default when a hand-built spec left 0.
  std::int64_t d() const { return head_dim > 0 ? head_dim : (heads > 0 ? hidden / heads : 0); }
  std::int64_t g() const { return kv_heads > 0 ? kv_heads : heads; }
  bool has_qkv_bias() const { return bias || qkv_bias; }
  bool has_out_bias() const { return bias || out_bias; }
  bool has_ffn_bias() const { return bias || ffn_bias; }
  // Parameter tensors per norm (the layer norms and the q/k norms alike): LayerNorm a weight and a bias, RMSNorm a weight.
  int norm_tensors() const { return norm == NormKind::LayerNorm ? 2 : 1; }
  std::int64_t shared_ffn() const { return shared_expert_ffn_hidden > 0 ? shared_expert_ffn_hidden : expert_ffn_hidden; }
  // The kind every layer has when layer_kinds is empty: MLA if mla, Sliding if a window is set, else Full; MoE if
  // the model has experts.
  LayerKind uniform_kind() const;
  // "What is layer i" (0-based, i < layers).
  LayerKind layer(int i) const;
  bool uniform_layers() const;
  // Layers of layers [first, last) that have kind k.
  int count_layers(LayerKind k, int first = 0, int last = -1) const;
  // The distinct kinds of layers [first, last) with how many layers have each, in order of first appearance.
  std::vector<std::pair<LayerKind, int>> layer_kind_counts(int first = 0, int last = -1) const;
};

// A hybrid model's layers by block (hybrid: some layer is a single block — Nemotron-H's hybrid_layer_pattern): Mamba-2
// mixers, attention blocks, MLP blocks, MoE blocks. All zero and hybrid false for a transformer.
struct HybridCounts {
  bool hybrid = false;
  int mamba = 0, attention = 0, mlp = 0, moe = 0;
};
HybridCounts hybrid_counts(const ModelSpec& m);

// ---- loading (model_io.cpp) ----
// A built-in preset name (case-insensitive, aliases allowed), a parsim model JSON file, a Hugging Face config.json
// (recognised by its keys), or a directory holding a config.json (`--model ./Llama-3.1-8B/`). Throws InputError for
// every bad input class listed in the README.
// Policies (details in model_io.cpp): parsim JSON `kv_heads` is optional (default `heads`), `"bias"` also accepts
// "qkv", optional `"dropout"` (default false), MoE / MLA / sliding-window keys (docs/cli.md). HF configs: families
// llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, gpt2, phi3, olmo2, olmoe, falcon,
// gpt_neox, deepseek_v2, deepseek_v3, gpt_oss, nemotron_h (hybrid Mamba-2, LatentMoE, hybrid MTP); shape keys read,
// known shape-neutral keys ignored, any other key is an error; RoPE models get seq_len = min(max_position_embeddings,
// 8192), learned-position models n_positions. The
// returned spec is validated and has head_dim resolved.
ModelSpec resolve_model(const std::string& name_or_path);
std::vector<std::string> model_preset_names();
// Checks sizes are positive, heads divide hidden unless head_dim is given, kv_heads divides heads, and the MoE / MLA /
// window / layer-kind fields agree with each other.
void validate_model(const ModelSpec& m);

// ---- parameters (params.cpp) ----
// Megatron pads the vocabulary to a multiple of divisible_by × tp (megatron/training/vocab_utils.py).
std::int64_t padded_vocab(std::int64_t vocab, int tp, int divisible_by = 128);

// Exact parameters of one layer of kind k.
struct LayerParams {
  std::int64_t attention = 0;  // projections (+ biases, q/k norms, MLA's two latent norms, attention sinks)
  std::int64_t ffn = 0;        // dense FFN; for an MoE layer every routed expert (experts × expert)
  std::int64_t expert = 0;     // one routed expert (0 in a dense layer)
  std::int64_t shared = 0;     // shared experts (+ their gate)
  std::int64_t router = 0;     // router weight (+ bias)
  std::int64_t latent = 0;     // LatentMoE's projections h → ℓ and ℓ → h (0 without moe_latent)
  std::int64_t norms = 0;      // the layer's norms (pre/post attention and FFN)
  std::int64_t total() const { return attention + ffn + shared + router + latent + norms; }
  // What one token uses: everything but the routed experts it is not sent to (= total in a dense layer).
  std::int64_t active(int experts_per_token) const {
    return attention + (expert > 0 ? experts_per_token * expert : ffn) + shared + router + latent + norms;
  }
};
LayerParams layer_params(const ModelSpec& m, LayerKind k);

struct ParamCounts {
  // Layer 0's breakdown (for uniform models: every layer's); non-uniform models: layer_params(m, m.layer(i)).
  std::int64_t attention_per_layer = 0;  // Q, K, V, O weights (+ biases)
  std::int64_t mlp_per_layer = 0;        // FFN weights (+ biases); MoE: routed + shared experts + router
  std::int64_t norms_per_layer = 0;      // the layer's norms
  std::int64_t per_layer = 0;            // sum of the three above
  std::int64_t layers = 0;               // all transformer layers together
  std::int64_t routed_experts = 0;       // all routed-expert parameters (what expert parallelism shards)
  std::int64_t embedding = 0;            // V·h (real vocabulary)
  std::int64_t positions = 0;            // learned position table, else 0
  std::int64_t lm_head = 0;              // V·h when untied, else 0
  std::int64_t final_norm = 0;
  std::int64_t total = 0;                // exact total, embeddings included, tied matrix once, MTP excluded
  // What one token uses: total minus the routed experts it is not sent to (Mixtral's 12.9 B of 46.7 B). Embedding
  // and LM head included, as Mistral counts; DeepSeek and OpenAI quote active counts without the input embedding
  // (active − embedding). Equals total for dense models.
  std::int64_t active = 0;
  // Multi-token-prediction modules (not in total): per module one layer of the last layer's kind + enorm, hnorm and
  // the final norm (3h) + the 2h→h projection; the embedding and output head are shared with the main model.
  std::int64_t mtp = 0;
  std::int64_t mtp_active = 0;
};
ParamCounts count_params(const ModelSpec& m);

// Parameters one rank holds of one layer of kind k, under Megatron-Core's partitioning: attention and dense FFN /
// shared experts split by TP (column-parallel in, row-parallel out, row biases and norms replicated), MLA's two
// down-projections and latent norms replicated ("duplicated" linear), router replicated; routed experts: experts/ep
// local experts, each split by etp (expert tensor parallel; 0 means etp = tp). `dense` is reduced over the
// data-parallel group, `expert` over the expert-data-parallel group.
struct RankParams {
  double dense = 0;
  double expert = 0;
  double total() const { return dense + expert; }
  RankParams& operator+=(const RankParams& o) {
    dense += o.dense, expert += o.expert;
    return *this;
  }
  RankParams scaled(double n) const { return {dense * n, expert * n}; }  // n layers (or modules) of these
};
RankParams layer_params_per_rank(const ModelSpec& m, LayerKind k, int tp, int ep = 1, int etp = 0);
// The same for the representative layer (see representative_kind below) with ep = 1, etp = tp.
double layer_params_per_tp_rank(const ModelSpec& m, int tp);
double embedding_params_per_tp_rank(const ModelSpec& m, int tp);  // padded V·h/t (+ learned positions, replicated)
double lm_head_params_per_tp_rank(const ModelSpec& m, int tp);    // padded V·h/t + final norm; with tied embeddings
                                                                  // and pp > 1 Megatron keeps a copy on the last stage,
                                                                  // so callers decide whether to count it.

// The kind the kind-less functions below (layer_work, layer_forward_flops, activation_bytes_per_layer,
// layer_params_per_tp_rank without a LayerKind) use: the kind of every layer when layers are uniform; when only the
// attention differs between Full and Sliding layers, Full (attention counted over all keys, the conservative
// pre-issue-10 behaviour). Throws InputError when layers mix dense and MoE FFNs (DeepSeek, Qwen-MoE with
// mlp_only_layers): a single per-layer figure would be wrong for every pipeline stage — use the LayerKind overloads.
LayerKind representative_kind(const ModelSpec& m);

// ---- work per layer (flops.cpp) ----
// What a GEMM belongs to, for callers that schedule or overlap parts of a layer separately.
// MoeLatent: LatentMoE's h → ℓ / ℓ → h projections (part of the MoE module, whole on every TP rank).
enum class GemmKind { Attention, Ffn, Router, SharedExpert, RoutedExpert, MoeLatent };
// One matrix multiply C[m×n] = A[m×k]·B[k×n] as one rank runs it in the forward pass; m is the token dimension.
struct GemmShape {
  const char* name;
  std::int64_t m, n, k;
  GemmKind kind = GemmKind::Attention;
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};
// The attention core (QKᵀ, softmax, ·V) as one TP×CP rank runs it: heads = a/t, seq_q = s/c (local queries),
// seq_kv = s (all keys, visited over the CP ring), causal; window > 0 limits every query to its last `window` keys;
// v_head_dim (0: head_dim) differs from head_dim under MLA.
struct AttentionShape {
  std::int64_t batch = 0, heads = 0, seq_q = 0, seq_kv = 0, head_dim = 0;
  bool causal = true;
  std::int64_t window = 0;
  std::int64_t v_head_dim = 0;
  // Chunked attention (Llama 4): causal within consecutive chunks of this many keys, nothing across them; 0 or ≥
  // seq_kv: plain causal. Not combined with a window.
  std::int64_t chunk = 0;
  // FLOPs of QKᵀ and AV in the forward pass over the (query, key) pairs the kernel computes (FlashAttention's count:
  // masked tiles skipped when causal or windowed).
  double forward_flops() const;
};
// Expert placement for per-rank work: ep ranks share the routed experts (experts/ep each), each expert split over
// etp ranks (0: etp = tp); imbalance = tokens routed to the busiest expert rank over the mean (1 = balanced).
struct ExpertSplit {
  int ep = 1;
  int etp = 0;
  double imbalance = 1.0;
};
// A Mamba-2 mixer's scan as one TP rank runs it (Megatron-Core MambaMixer splits heads and groups over TP): tokens =
// b·s local tokens, heads = H/t, groups = G/t, conv_channels = (d_inner + 2GN)/t; 0 tokens when the layer has none.
struct SsmShape {
  std::int64_t tokens = 0;
  std::int64_t heads = 0, head_dim = 0, state = 0, groups = 0, chunk = 0;
  std::int64_t conv_channels = 0, conv_kernel = 0;
  // The SSD algorithm's matmul FLOPs in the forward (Dao & Gu 2024 §6, flops.cpp ssd_forward_flops).
  double forward_flops() const;
};
struct LayerWork {
  // Forward GEMMs of one layer on one rank, in execution order: attention projections (MLA: q_down, q_up or q_proj,
  // kv_down, kv_up, out_proj; Mamba: in_proj, out_proj), then the dense FFN or the MoE block (router, shared experts,
  // routed experts of the local experts at their token counts) when the layer has one. GemmShape::kind tells them
  // apart (a Mamba mixer's projections are GemmKind::Attention: the layer's token-mixer half).
  std::vector<GemmShape> gemms;
  AttentionShape attention;  // zero (batch 0) when the layer has no softmax attention
  SsmShape ssm;              // a Mamba layer's scan; zero otherwise
  double elementwise_bytes_fwd = 0;   // HBM bytes moved by norms, activation function, residual adds, rotary, dropout,
                                      // MoE permutation
  // MoE layers: (token, expert) pairs this rank's tokens send to the dispatch (k × tokens entering the layer) and
  // the pairs its local experts receive (busiest rank); 0 for dense layers.
  double routed_tokens_sent = 0;
  double routed_tokens_received = 0;
};
LayerWork layer_work(const ModelSpec& m, LayerKind k, std::int64_t b, std::int64_t s, int tp, int cp, bool sp,
                     Precision p, const ExpertSplit& x = {});
// Representative layer (representative_kind), ep = 1, etp = tp, balanced routing.
LayerWork layer_work(const ModelSpec& m, std::int64_t b, std::int64_t s, int tp, int cp, bool sp, Precision p);
GemmShape lm_head_gemm(const ModelSpec& m, std::int64_t b, std::int64_t s, int tp, int cp);  // padded vocab / t

// The routed experts' grouped GEMM as a list: for each local expert e with tokens_per_expert[e] tokens, fc1
// [tokens × (2 if gated else 1)·f_e/etp × h] then fc2 [tokens × h × f_e/etp] (Megatron GroupedMLP / TEGroupedMLP
// linear_fc1, linear_fc2). Experts that receive no token contribute no GEMM.
std::vector<GemmShape> routed_expert_gemms(const ModelSpec& m, const std::vector<std::int64_t>& tokens_per_expert,
                                           int etp);
// (token, expert) pairs one expert rank processes for one micro-batch: k · T · imbalance with T the distinct
// tokens the rank's ETP group brings (b·s/c, or its SP shard b·s/(c·t)·etp when SP splits tokens over TP) — under
// balanced routing independent of ep (each of ep ranks sends k·T pairs and owns experts/ep of the experts).
double moe_routed_tokens(const ModelSpec& m, std::int64_t b, std::int64_t s, int tp, int cp, bool sp,
                         const ExpertSplit& x);

// Whole-model FLOP counts (no parallel split), used for MFU/HFU. Multiply-add = 2 FLOPs.
struct LayerFlops {
  double qkv = 0, scores = 0, attn_v = 0, out_proj = 0;
  double ffn = 0;      // dense FFN
  double experts = 0;  // MoE: the k routed experts each token visits
  double shared = 0;   // MoE: shared experts
  double router = 0;   // MoE: the router GEMM 2·h·E per token
  double mamba_proj = 0;  // Mamba: in_proj 2·T·h·(2·d_in + 2GN + H) + out_proj 2·T·d_in·h
  double ssm = 0;         // Mamba: the SSD scan's matmuls (flops.cpp layer_forward_flops)
  double latent = 0;      // LatentMoE: the projections h → ℓ and ℓ → h, 2·2·T·h·ℓ
  // Everything executed.
  double total() const {
    return qkv + scores + attn_v + out_proj + ffn + experts + shared + router + mamba_proj + ssm + latent;
  }
  // Megatron-Core's model FLOPs: the router GEMM is not counted (num_floating_point_operations).
  double model() const { return total() - router; }
};
// Forward FLOPs of one layer of kind k for b sequences of length s, attention counted over the full s² — over
// min(window, s) keys per query for Sliding layers — (Megatron-LM ≤ core v0.11 `num_floating_point_operations`, PaLM
// App. B) — the convention behind parsim's MFU.
LayerFlops layer_forward_flops(const ModelSpec& m, LayerKind k, std::int64_t b, std::int64_t s);
LayerFlops layer_forward_flops(const ModelSpec& m, std::int64_t b, std::int64_t s);  // representative_kind
double lm_head_forward_flops(const ModelSpec& m, std::int64_t b, std::int64_t s);  // 2·b·s·h·V (real V)
// Model FLOPs of one optimizer step over `sequences` sequences: 3 × forward (fwd + dgrad + wgrad), summed over every
// layer's kind, ACTIVE experts only (Megatron-Core's MoE/MLA throughput formula), MTP modules excluded.
double model_flops(const ModelSpec& m, std::int64_t sequences, std::int64_t s);
// How model FLOPs count the attention core of a causal model (domain-notes §2): Full = every query against every key
// (Megatron-LM ≤ core v0.11, PaLM App. B, nanoGPT); Causal = only the unmasked half, s·(s+1)/2 ≈ s²/2 pairs —
// Megatron-Core ≥ v0.12 (commit 8873b55d6a, 2025-03: `s/h` → `s/(2h)` in num_floating_point_operations) and what
// flash kernels execute; a sliding window w < s counts w − w²/(2s) keys per query (AttentionShape::forward_flops).
enum class AttentionCount { Full, Causal };
double model_flops(const ModelSpec& m, std::int64_t sequences, std::int64_t s, AttentionCount count);
// Hardware FLOPs: model FLOPs + the router GEMMs + what recompute re-executes (full: one more forward of every layer;
// selective: the attention core's forward, Korthikanti 2022 App. A).
double hardware_flops(const ModelSpec& m, std::int64_t sequences, std::int64_t s, Recompute r);
double hardware_flops(const ModelSpec& m, std::int64_t sequences, std::int64_t s, Recompute r, AttentionCount count);
// With selective recompute by module (Megatron-Core --recompute-modules): the recomputed modules' forward GEMM FLOPs.
double hardware_flops(const ModelSpec& m, std::int64_t sequences, std::int64_t s, Recompute r, AttentionCount count,
                      RecomputeModules mods);
// Forward GEMM FLOPs that selective recompute of `mods` re-runs in one layer of kind `kind` (fwd: its forward FLOPs).
double selective_recompute_flops(const ModelSpec& m, LayerKind kind, const LayerFlops& fwd, std::int64_t sequences,
                                 std::int64_t s, RecomputeModules mods);
// Forward GEMM FLOPs that torchtitan's per-op checkpointing (--recompute op) re-runs in one dense layer: wk, wo and
// w3 (gated) or fc2 (plain), every second matmul of the block.
double op_recompute_flops(const ModelSpec& m, const LayerFlops& fwd);
// Training FLOPs (3 × forward) of the MTP modules when they are trained (Megatron --mtp-num-layers): per module the
// 2h→h projection, one layer of the last layer's kind and its own LM head; 0 when the model has none.
double mtp_flops(const ModelSpec& m, std::int64_t sequences, std::int64_t s);

// ---- activation memory (activations.cpp) — Korthikanti et al. 2022 §4, Table 2, with GQA/SwiGLU/flash
// adjustments from domain-notes §3 and the MoE / MLA terms documented in activations.cpp. All values in bytes, for ONE
// micro-batch on ONE rank.
struct ActivationOptions {
  int tp = 1;
  int cp = 1;
  bool sp = false;
  Recompute recompute = Recompute::None;
  RecomputeModules recompute_modules;  // with recompute Selective: Megatron-Core's --recompute-modules
  bool flash_attention = true;  // flash kernels never store the s² score/softmax tensors
  // Unfused attention whose softmax ran eager fp32 ops (sim/step/costs.hpp SoftmaxPath, Megatron's
  // FusedScaleMaskSoftmax fallback): bytes per score kept beyond the fused kernel's 16-bit softmax output.
  double softmax_saved_extra = 0;
  Precision precision = Precision::BF16;
  ExpertSplit experts;          // MoE layers: etp (0 = tp) and routing imbalance; ep does not change activations
  // The loss upcasts 16-bit logits to a separate fp32 tensor while the 16-bit ones stay alive (Megatron's
  // vocab-parallel cross entropy): 2 + 4 B per logit instead of Korthikanti's 4 (output_activation_bytes).
  bool loss_upcasts_logits = false;
  // A fused classifier (llm.c fused_classifier, flash-attn's cross entropy: --cross-entropy-fusion) keeps only the
  // 16-bit logits and writes their gradient in place: e B per logit (output_activation_bytes).
  bool fused_cross_entropy = false;
  // An eager PyTorch loss over fp32-upcast logits (torchtitan's cross_entropy_loss: F.cross_entropy(pred.float(), …);
  // Hugging Face's ForCausalLMLoss: logits.float(); autocast's fp32 cross entropy): while log_softmax runs, the 16-bit
  // logits, their fp32 copy and the fp32 log-probabilities it saves coexist, 2 + 4 + 4 B per logit
  // (output_activation_bytes). A compiled loss (torch.compile fuses the upcast into the softmax reductions) keeps 4.
  bool eager_fp32_loss = false;
  // With --precision fp8, Transformer Engine's Linear / LayerNormLinear modules keep their GEMM input for the weight
  // gradient as the fp8 cast (1 B per element), not the 16-bit tensor (activations.cpp). Set for the Megatron stack.
  bool fp8_gemm_inputs = false;
  // The routed experts' MLP as Transformer Engine's fused grouped kernels (TrainingConfig::moe_fused_grouped_mlp): the
  // activation runs in FC1's epilogue, so a clamped activation's eager clamps keep nothing (activations.cpp).
  bool moe_fused_grouped_mlp = false;
};
// Bytes kept from a layer's forward until its backward.
double activation_bytes_per_layer(const ModelSpec& m, LayerKind k, std::int64_t b, std::int64_t s,
                                  const ActivationOptions& o);
double activation_bytes_per_layer(const ModelSpec& m, std::int64_t b, std::int64_t s, const ActivationOptions& o);
// Extra bytes alive transiently while one layer runs its backward (with full recompute the layer's activations are
// regenerated: the no-recompute footprint of one layer). MoE layers add their dispatch buffers.
double activation_working_bytes(const ModelSpec& m, LayerKind k, std::int64_t b, std::int64_t s,
                                const ActivationOptions& o);
double activation_working_bytes(const ModelSpec& m, std::int64_t b, std::int64_t s, const ActivationOptions& o);
// MoE token dispatch: the permuted send buffer (k · tokens entering the layer × h) and the receive buffer (routed
// pairs × h) alive while an all-to-all runs (0 for dense layers).
double moe_dispatch_buffer_bytes(const ModelSpec& m, std::int64_t b, std::int64_t s, const ActivationOptions& o);
// First stage: embedding output / dropout mask kept per micro-batch (Korthikanti §4.3).
double embedding_activation_bytes(const ModelSpec& m, std::int64_t b, std::int64_t s, const ActivationOptions& o);
// Last stage: logits and loss buffers alive during the output layer's forward/backward (padded V / t logits: 4 B
// each, Korthikanti's fp32 logits; with loss_upcasts_logits the 16-bit output plus the fp32 upcast, 6 B; with
// fused_cross_entropy the 16-bit logits alone, e B).
double output_activation_bytes(const ModelSpec& m, std::int64_t b, std::int64_t s, const ActivationOptions& o);

}  // namespace parsim
