// parsim models/ — where a ModelSpec comes from: built-in presets, parsim's model JSON, Hugging Face config.json.
//
// Policies (also summarised next to resolve_model in model.hpp):
// * Presets are compiled in; names are case-insensitive; each cites the published shape it copies.
// * parsim JSON (schema in docs/cli.md): every key is checked, unknown keys are errors. `kv_heads` is OPTIONAL and
//   defaults to `heads` (plain multi-head attention, as in the original Transformer / GPT). Two optional extensions:
//   `"bias": "qkv"` (biases on the QKV projection only, as Qwen2) besides true/false, and `"dropout": true|false`
//   (default false; only activation memory depends on it).
// * parsim JSON, issue 10 (docs/cli.md): MoE `experts`, `experts_per_token`, `expert_ffn_hidden` (default
//   ffn_hidden), `shared_experts`, `shared_expert_ffn_hidden`, dense-layer placement `first_dense_layers` /
//   `dense_layers`, `expert_groups` / `expert_groups_per_token`, `mtp_layers`; `attention: "gqa" | "mla"` with the
//   MLA ranks `q_lora_rank` (0 or null: no query compression), `kv_lora_rank`, `qk_nope_head_dim`,
//   `qk_rope_head_dim`, `v_head_dim`; `sliding_window` with `sliding_layers` ("all", "even", "odd" or a list of layer
//   indices); `qk_norm` ("none", "head", "full"), `parallel_attention`, `rotary_fraction`, `attention_sinks`,
//   `router_bias` (with `"bias": true` every linear layer, experts included, has a bias: GPT-OSS). MoE or MLA detail keys
//   without `experts` / `attention: "mla"` are errors.
// * Hugging Face config.json is recognised by its keys (`model_type`, `architectures`, `num_hidden_layers` or
//   `n_layer`), or found in a checkpoint directory. Families: llama, mistral, qwen2, qwen3, gemma, gemma2,
//   gemma3_text, phi3, olmo2 (gated FFN, RMSNorm, RoPE), the MoE families mixtral, qwen2_moe, qwen3_moe, olmoe,
//   gpt_oss, llama4_text (chunked attention on its RoPE layers: ModelSpec::attention_chunk), the MLA + MoE families
//   deepseek_v2, deepseek_v3 and kimi_k2 (DeepSeek-V3's code under its own model_type), the GQA + MoE family
//   glm4_moe (GLM-4.5: DeepSeek-V3's expert layout with grouped-query attention), the hybrid Mamba-2 family
//   nemotron_h (Nemotron-H, Nemotron 3: Mamba-2 / attention / MLP / MoE single-block layers), and gpt2, falcon and
//   gpt_neox (plain FFN, LayerNorm; see each reader).
//   Keys fall in three groups: shape keys, which the family's reader reads; keys that do not change shapes or FLOPs
//   (token ids, dtype, eps, RoPE base/scaling, soft-capping and routing-score knobs, quantisation of the stored
//   weights, bookkeeping), which are accepted and ignored (kHfHarmless below); everything else — an MoE key in a
//   dense family's config, a key of an architecture parsim does not model — is an error, because silently ignoring
//   it could change the model's size. Current transformers re-saves every config with all its class attributes
//   (`layer_types`, `dtype`, `rope_parameters`, …): those are read or ignored like the rest.
//   Sliding-window attention is modelled where the family applies it (transformers' per-layer `layer_types`, or the
//   family's rule when the key is absent): Mistral/Mixtral/Phi-3 every layer when `sliding_window` is set, Gemma 2 and
//   GPT-OSS every even layer, Qwen2/Qwen3(-MoE) layers from max_window_layers on when use_sliding_window is true.
//   `max_position_embeddings` is the inference context limit, often after long-context extension (Llama 3.1: 131,072
//   against 8,192 in pre-training, Dubey et al. 2024 §3.4; Mistral 7B: 32,768 against context_len 8,192, Jiang et
//   al. 2023 Table 1), so for RoPE models seq_len = min(max_position_embeddings, 8192); `--seq` overrides it. Learned
//   position tables (GPT-2) are not capped: n_positions is both the table size and the trained length.
//   A multimodal wrapper is read through its `text_config` (parse_hf); an unknown model_type with a known
//   `architectures` class is read as that class's family (hf_kind).
#include "models/model.hpp"
#include "sim/core/checked.hpp"
#include "sim/core/embedded.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_strict.hpp"
#include "sim/core/text.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>
#include <functional>
#include <set>

namespace parsim::detail {
// models/presets/<name>.json, compiled in by hardware/embed_presets.cmake (models/CMakeLists.txt).
extern const EmbeddedPreset kEmbeddedModels[];
extern const std::size_t kEmbeddedModelCount;
}  // namespace parsim::detail

namespace parsim {
namespace {

constexpr std::int64_t kHfSeqLenCap = 8192;  // see the policy above

ModelSpec gated_rope(const char* name, int layers, std::int64_t h, int a, int g, std::int64_t f, std::int64_t v,
                     std::int64_t seq) {
  ModelSpec m;
  m.name = name;
  m.layers = layers;
  m.hidden = h;
  m.heads = a;
  m.kv_heads = g;
  m.ffn_hidden = f;
  m.vocab = v;
  m.seq_len = seq;
  m.head_dim = h / a;
  return m;  // SwiGLU, RMSNorm, RoPE, no biases, untied: the defaults
}

struct Preset {
  const char* name;
  const char* alias;  // nullptr when none
  ModelSpec (*make)();
};

// Shapes: layers, hidden, heads, kv_heads, ffn_hidden, vocab, default seq_len.
const Preset kPresets[] = {
    // Llama 2 — HF meta-llama/Llama-2-{7b,13b,70b}-hf config.json; 4k context (Touvron et al. 2023, Table 1).
    {"llama2-7b", "llama7b", [] { return gated_rope("llama2-7b", 32, 4096, 32, 32, 11008, 32000, 4096); }},
    {"llama2-13b", nullptr, [] { return gated_rope("llama2-13b", 40, 5120, 40, 40, 13824, 32000, 4096); }},
    {"llama2-70b", nullptr, [] { return gated_rope("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096); }},
    // Llama 3 / 3.1 — HF meta-llama/Meta-Llama-3-8B, Meta-Llama-3-70B, Llama-3.1-405B config.json (vocab 128,256);
    // Dubey et al. 2024, Table 3; pre-training sequences of 8,192 tokens (§3.4.1). Llama 3.1 8B and 70B have the same
    // shapes (Table 3 lists one 8B / 70B / 405B family; the 3.1 configs differ in rope_scaling and
    // max_position_embeddings 131,072 only, the long-context extension of §3.4.2), hence the llama3.1-* aliases; there
    // is no Llama 3 405B, so llama3-405b is Llama 3.1 405B.
    {"llama3-8b", "llama3.1-8b", [] { return gated_rope("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192); }},
    {"llama3-70b", "llama3.1-70b", [] { return gated_rope("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192); }},
    {"llama3-405b", "llama3.1-405b",
     [] { return gated_rope("llama3-405b", 126, 16384, 128, 8, 53248, 128256, 8192); }},
    // Mistral 7B — HF mistralai/Mistral-7B-v0.1 config.json; context_len 8192 and a 4096-token sliding window on
    // every layer (Jiang et al. 2023, Table 1 and §2).
    {"mistral-7b", nullptr,
     [] {
       ModelSpec m = gated_rope("mistral-7b", 32, 4096, 32, 8, 14336, 32000, 8192);
       m.sliding_window = 4096;
       return m;
     }},
    // GPT-3 175B — Brown et al. 2020, Table 2.1 (96 layers, d_model 12288, 96 heads of 128) and §2.1 (n_ctx 2048,
    // d_ff = 4·d_model); GPT-2 BPE vocabulary of 50,257 (Radford et al. 2019); GPT-2 architecture: learned positions,
    // biases, LayerNorm, GeLU, tied embeddings; dropout 0.1 as in Megatron-LM's defaults and Korthikanti 2022 §4.
    {"gpt3-175b", nullptr,
     [] {
       ModelSpec m = gated_rope("gpt3-175b", 96, 12288, 96, 96, 4 * 12288, 50257, 2048);
       m.activation = FfnActivation::GeLU;
       m.tied_embeddings = true;
       m.bias = true;
       m.norm = NormKind::LayerNorm;
       m.position = PositionKind::Learned;
       m.dropout = true;
       return m;
     }},
};

std::string preset_list() {
  std::string out;
  for (const auto& p : kPresets) {
    if (!out.empty()) out += ", ";
    out += p.name;
    if (p.alias) out += std::string(" (alias ") + p.alias + ")";
  }
  for (std::size_t i = 0; i < detail::kEmbeddedModelCount; ++i)
    out += std::string(", ") + detail::kEmbeddedModels[i].name;
  return out;
}

int narrow_int(std::int64_t v, const std::string& ctx, const char* key) {
  if (v > INT_MAX || v < INT_MIN) throw InputError(ctx + ": key '" + key + "' = " + std::to_string(v) + " is out of range");
  return static_cast<int>(v);
}

FfnActivation parse_activation(const std::string& s, const std::string& ctx) {
  const std::string l = to_lower(s);
  if (l == "swiglu") return FfnActivation::SwiGLU;
  if (l == "gelu") return FfnActivation::GeLU;
  if (l == "relu2") return FfnActivation::ReLU2;
  throw InputError(ctx + ": activation '" + s + "' is not valid (choose swiglu, gelu or relu2)");
}

// ---- layer placement helpers (both formats) ----

// A JSON array of non-negative layer indices, each < layers.
std::vector<int> layer_index_list(const nlohmann::json& v, int layers, const std::string& ctx, const char* key) {
  if (!v.is_array())
    throw InputError(ctx + ": key '" + key + "' must be a list of layer indices, got " + describe_json(v));
  std::vector<int> out;
  for (const auto& e : v) {
    if (!e.is_number_integer() || e.get<std::int64_t>() < 0 || e.get<std::int64_t>() >= layers)
      throw InputError(ctx + ": key '" + key + "' holds " + describe_json(e) + ", not a layer index in 0.." +
                       std::to_string(layers - 1));
    out.push_back(static_cast<int>(e.get<std::int64_t>()));
  }
  return out;
}

// Stores per-layer kinds, or leaves layer_kinds empty when every layer equals the model's uniform kind.
void set_layer_kinds(ModelSpec& m, std::vector<LayerKind> kinds) {
  bool all_uniform = true;
  for (const LayerKind& k : kinds) all_uniform = all_uniform && k == m.uniform_kind();
  if (all_uniform) kinds.clear();
  m.layer_kinds = std::move(kinds);
}

// Per-layer vectors are allocated only for a sane layer count (a typo like 10^9 layers must be an InputError, not
// gigabytes of layer kinds); validate_model bounds the parameters.
constexpr int kMaxLayers = 100000;
void require_layer_count(int layers, const std::string& ctx) {
  if (layers > kMaxLayers)
    throw InputError(ctx + ": " + std::to_string(layers) + " layers is beyond what parsim models (at most " +
                     std::to_string(kMaxLayers) + ")");
}

// The per-layer kinds from an FFN placement (is_moe[i]) and an attention placement (sliding[i]).
void place_layers(ModelSpec& m, const std::vector<bool>& moe, const std::vector<bool>& sliding) {
  std::vector<LayerKind> kinds(static_cast<std::size_t>(m.layers));
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    kinds[i].ffn = moe[i] ? FfnKind::MoE : FfnKind::Dense;
    kinds[i].attention = m.mla ? AttentionKind::MLA : (sliding[i] ? AttentionKind::Sliding : AttentionKind::Full);
  }
  set_layer_kinds(m, std::move(kinds));
}

// A hybrid model's layers (Megatron-Core hybrid_layer_pattern, HF NemotronH hybrid_override_pattern; one character
// per layer): M a Mamba-2 mixer, * an attention block, - an MLP block, E an MoE block, each a whole layer with one
// pre-norm and one residual add (megatron/core/models/hybrid: Symbols MAMBA 'M', ATTENTION '*', MLP '-', MOE 'E').
// `segments` (when given) receives the layer count of each '|'-separated pipeline segment (Megatron-Core
// hybrid_layer_allocation.py Symbols.PIPE); without it a '|' is an error.
std::vector<LayerKind> hybrid_pattern_kinds(const std::string& pattern, const std::string& ctx, const char* key,
                                            std::vector<int>* segments = nullptr) {
  std::vector<LayerKind> out;
  out.reserve(pattern.size());
  int in_segment = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '|' && segments) {
      segments->push_back(in_segment);
      in_segment = 0;
      continue;
    }
    ++in_segment;
    switch (pattern[i]) {
      case 'M': out.push_back({AttentionKind::Mamba, FfnKind::None}); break;
      case '*': out.push_back({AttentionKind::Full, FfnKind::None}); break;
      case '-': out.push_back({AttentionKind::None, FfnKind::Dense}); break;
      case 'E': out.push_back({AttentionKind::None, FfnKind::MoE}); break;
      default:
        throw InputError(ctx + ": key '" + key + "' has '" + utf8_sanitize(pattern.substr(i, 1)) + "' at position " +
                         std::to_string(i) + " (valid: M Mamba, * attention, - MLP, E mixture of experts" +
                         (segments ? ", | a pipeline stage boundary)" : ")"));
    }
  }
  if (segments && !segments->empty()) segments->push_back(in_segment);
  return out;
}

// A hybrid model: every layer a single block, one norm each (Megatron-Core MambaLayer / TransformerLayer with only
// a mixer or only an MLP; transformers NemotronHBlock: norm, mixer, residual).
void set_hybrid_layers(ModelSpec& m, std::vector<LayerKind> kinds, const std::string& ctx) {
  if (kinds.empty()) throw InputError(ctx + ": the layer pattern is empty (one character per layer)");
  require_layer_count(static_cast<int>(std::min<std::size_t>(kinds.size(), INT_MAX)), ctx);
  m.layers = static_cast<int>(kinds.size());
  m.norm_layers = 1;
  m.layer_kinds = std::move(kinds);
}

// The Mamba-2 keys of parsim's schema (mamba_heads, mamba_head_dim, mamba_state, mamba_groups, mamba_conv_kernel,
// mamba_chunk, mamba_conv_bias, mamba_proj_bias); errors without Mamba layers.
void parse_parsim_mamba(StrictObject& o, ModelSpec& m, bool mamba_layers, const std::string& ctx) {
  static const char* kKeys[] = {"mamba_heads", "mamba_head_dim", "mamba_state", "mamba_groups", "mamba_conv_kernel",
                                "mamba_chunk", "mamba_conv_bias", "mamba_proj_bias"};
  if (!mamba_layers) {
    for (const char* k : kKeys)
      if (o.has(k)) throw InputError(ctx + ": key '" + k + "' needs Mamba layers ('M' in layer_pattern)");
    return;
  }
  m.mamba_heads = o.req_int("mamba_heads");
  m.mamba_head_dim = o.req_int("mamba_head_dim");
  m.mamba_state = o.req_int("mamba_state");
  m.mamba_groups = o.opt_int("mamba_groups", 1);
  m.mamba_conv_kernel = o.opt_int("mamba_conv_kernel", 4);
  m.mamba_chunk = o.opt_int("mamba_chunk", 128);
  m.mamba_conv_bias = o.opt_bool("mamba_conv_bias", true);
  m.mamba_proj_bias = o.opt_bool("mamba_proj_bias", false);
}

// ---- parsim's own schema ----
// Issue-10 keys: attention variants, MoE, layer placement (docs/cli.md "Model JSON schema").
void parse_parsim_issue10(const nlohmann::json& j, StrictObject& o, ModelSpec& m, const std::string& ctx) {
  // q/k norms, parallel attention, partial rotary.
  const std::string qk = to_lower(o.opt_str("qk_norm", "none"));
  if (qk == "none") m.qk_norm = QkNorm::None;
  else if (qk == "head") m.qk_norm = QkNorm::PerHead;
  else if (qk == "full") m.qk_norm = QkNorm::Full;
  else throw InputError(ctx + ": qk_norm '" + qk + "' is not valid (choose none, head or full)");
  m.parallel_attention = o.opt_bool("parallel_attention", false);
  m.attention_sinks = o.opt_bool("attention_sinks", false);
  m.rotary_fraction = o.opt_num("rotary_fraction", 1.0);
  if (!(m.rotary_fraction > 0.0 && m.rotary_fraction <= 1.0))
    throw InputError(ctx + ": rotary_fraction " + fmt_num(m.rotary_fraction, 3) + " is not valid (a fraction in (0, 1])");

  // Attention: "gqa" (MHA/GQA, the default) or "mla" with its ranks.
  const std::string attention = to_lower(o.opt_str("attention", "gqa"));
  static const char* kMlaKeys[] = {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"};
  if (attention == "mla") {
    m.mla = true;
    m.q_lora_rank = o.opt_int("q_lora_rank", 0);
    m.kv_lora_rank = o.req_int("kv_lora_rank");
    m.qk_nope_head_dim = o.req_int("qk_nope_head_dim");
    m.qk_rope_head_dim = o.req_int("qk_rope_head_dim");
    m.v_head_dim = o.req_int("v_head_dim");
    if (o.has("kv_heads") && j.at("kv_heads") != j.at("heads"))
      throw InputError(ctx + ": attention \"mla\" gives every head its own K and V: kv_heads must equal heads or be "
                             "left out");
    m.kv_heads = m.heads;
    if (o.has("head_dim")) throw InputError(ctx + ": attention \"mla\" takes qk_nope_head_dim + qk_rope_head_dim and "
                                                  "v_head_dim, not head_dim");
    m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  } else if (attention == "gqa") {
    for (const char* k : kMlaKeys)
      if (o.has(k)) throw InputError(ctx + ": key '" + k + "' needs \"attention\": \"mla\"");
  } else {
    throw InputError(ctx + ": attention '" + attention + "' is not valid (choose gqa or mla)");
  }

  // Mixture of experts.
  static const char* kMoeKeys[] = {"experts_per_token", "expert_ffn_hidden", "shared_experts",
                                   "shared_expert_ffn_hidden", "first_dense_layers", "dense_layers", "expert_groups",
                                   "expert_groups_per_token", "router_bias", "activation_clamp"};
  if (o.has("experts")) {
    m.experts = narrow_int(o.req_int("experts"), ctx, "experts");
    m.experts_per_token = narrow_int(o.req_int("experts_per_token"), ctx, "experts_per_token");
    m.expert_ffn_hidden = o.opt_int("expert_ffn_hidden", m.ffn_hidden);
    m.shared_experts = narrow_int(o.opt_int("shared_experts", 0), ctx, "shared_experts");
    m.shared_expert_ffn_hidden = o.opt_int("shared_expert_ffn_hidden", 0);
    m.expert_groups = narrow_int(o.opt_int("expert_groups", 0), ctx, "expert_groups");
    m.expert_groups_per_token = narrow_int(o.opt_int("expert_groups_per_token", 0), ctx, "expert_groups_per_token");
    m.router_bias = o.opt_bool("router_bias", false);
    m.activation_clamp = o.opt_num("activation_clamp", 0.0);
    if (!(m.activation_clamp >= 0.0 && std::isfinite(m.activation_clamp)))
      throw InputError(ctx + ": activation_clamp " + fmt_num(m.activation_clamp, 3) +
                       " is not valid (the clamp limit of the experts' gated activation, > 0, or 0 for none)");
  } else {
    for (const char* k : kMoeKeys)
      if (o.has(k)) throw InputError(ctx + ": key '" + k + "' needs 'experts' (the routed experts per MoE layer)");
  }
  m.mtp_layers = narrow_int(o.opt_int("mtp_layers", 0), ctx, "mtp_layers");
  // LatentMoE: the routed experts on a projected latent (HF / Megatron-Core moe_latent_size).
  if (o.has("moe_latent_size")) {
    if (m.experts <= 0) throw InputError(ctx + ": key 'moe_latent_size' needs 'experts' (the routed experts per MoE layer)");
    m.moe_latent = o.req_int("moe_latent_size");
  }
  // MTP details: one module's blocks (a hybrid model's MTP pattern) and one module repeated at every depth.
  for (const char* k : {"mtp_pattern", "mtp_repeated"})
    if (o.has(k) && m.mtp_layers <= 0) throw InputError(ctx + ": key '" + std::string(k) + "' needs 'mtp_layers' > 0");
  m.mtp_repeated = o.opt_bool("mtp_repeated", false);
  if (o.has("mtp_pattern")) {
    if (!o.has("layer_pattern"))
      throw InputError(ctx + ": key 'mtp_pattern' needs 'layer_pattern' (it names a hybrid model's MTP blocks)");
    m.mtp_kinds = hybrid_pattern_kinds(o.req_str("mtp_pattern"), ctx, "mtp_pattern");
    if (m.mtp_kinds.empty()) throw InputError(ctx + ": mtp_pattern is empty (one character per MTP block)");
  }
  // A hybrid model: layer_pattern gives every layer's block (hybrid_pattern_kinds); the placement keys below do not
  // apply to it.
  if (o.has("layer_pattern")) {
    const std::string pattern = o.req_str("layer_pattern");
    for (const char* k : {"first_dense_layers", "dense_layers", "sliding_window", "sliding_layers"})
      if (o.has(k)) throw InputError(ctx + ": key '" + k + "' does not combine with 'layer_pattern' (the pattern places "
                                           "every layer)");
    if (m.mla) throw InputError(ctx + ": attention \"mla\" is not modelled in a layer_pattern (hybrid) model");
    std::vector<int> segments;
    std::vector<LayerKind> kinds = hybrid_pattern_kinds(pattern, ctx, "layer_pattern", &segments);
    if (static_cast<std::int64_t>(kinds.size()) != m.layers)
      throw InputError(ctx + ": layer_pattern has " + std::to_string(kinds.size()) + " layers but 'layers' is " +
                       std::to_string(m.layers) + " (one character per layer; '|' separates pipeline stages)");
    m.pipeline_segments = std::move(segments);
    bool mamba = false;
    for (const LayerKind& k : kinds) mamba = mamba || k.attention == AttentionKind::Mamba;
    parse_parsim_mamba(o, m, mamba, ctx);
    set_hybrid_layers(m, std::move(kinds), ctx);
    return;
  }
  parse_parsim_mamba(o, m, false, ctx);
  if (m.layers < 1) return;  // validate_model reports it
  require_layer_count(m.layers, ctx);
  std::vector<bool> moe(static_cast<std::size_t>(m.layers), m.experts > 0);
  const std::int64_t first_dense = o.opt_int("first_dense_layers", 0);
  if (first_dense < 0 || first_dense > m.layers)
    throw InputError(ctx + ": first_dense_layers " + std::to_string(first_dense) + " is not valid (0.." +
                     std::to_string(m.layers) + ")");
  for (std::int64_t i = 0; i < first_dense; ++i) moe[static_cast<std::size_t>(i)] = false;
  if (o.has("dense_layers"))
    for (int i : layer_index_list(j.at("dense_layers"), m.layers, ctx, "dense_layers")) moe[static_cast<std::size_t>(i)] = false;
  o.ignore("dense_layers");

  // Sliding windows: every layer by default, or the layers `sliding_layers` names.
  m.sliding_window = o.opt_int("sliding_window", 0);
  if (m.sliding_window < 0)
    throw InputError(ctx + ": sliding_window must be a positive integer, got " + std::to_string(m.sliding_window));
  std::vector<bool> sliding(static_cast<std::size_t>(m.layers), m.sliding_window > 0);
  if (o.has("sliding_layers")) {
    if (m.sliding_window <= 0) throw InputError(ctx + ": key 'sliding_layers' needs a positive 'sliding_window'");
    const auto& v = j.at("sliding_layers");
    if (v.is_string()) {
      const std::string pat = to_lower(v.get<std::string>());
      if (pat != "all" && pat != "even" && pat != "odd")
        throw InputError(ctx + ": sliding_layers '" + pat + "' is not valid (all, even, odd or a list of layer indices)");
      for (int i = 0; i < m.layers; ++i)
        sliding[static_cast<std::size_t>(i)] = pat == "all" || (pat == "even") == (i % 2 == 0);
    } else {
      std::fill(sliding.begin(), sliding.end(), false);
      for (int i : layer_index_list(v, m.layers, ctx, "sliding_layers")) sliding[static_cast<std::size_t>(i)] = true;
    }
  }
  o.ignore("sliding_layers");
  if (m.mla && m.sliding_window > 0)
    throw InputError(ctx + ": sliding_window is not modelled with attention \"mla\"");
  place_layers(m, moe, sliding);
}


ModelSpec parse_parsim(const nlohmann::json& j, const std::string& ctx) {
  StrictObject o(j, ctx);
  ModelSpec m;
  m.name = o.req_str("name");
  m.layers = narrow_int(o.req_int("layers"), ctx, "layers");
  m.hidden = o.req_int("hidden");
  m.heads = narrow_int(o.req_int("heads"), ctx, "heads");
  m.kv_heads = narrow_int(o.opt_int("kv_heads", m.heads), ctx, "kv_heads");  // optional: default = heads (MHA)
  m.ffn_hidden = o.req_int("ffn_hidden");
  m.vocab = o.req_int("vocab");
  m.seq_len = o.req_int("seq_len");
  m.activation = parse_activation(o.req_str("activation"), ctx);
  if (o.has("head_dim")) {
    m.head_dim = o.req_int("head_dim");
    if (m.head_dim <= 0) throw InputError(ctx + ": head_dim must be a positive integer, got " + std::to_string(m.head_dim));
  }
  o.ignore("head_dim");
  m.tied_embeddings = o.opt_bool("tied_embeddings", false);
  if (o.has("bias") && j.at("bias").is_string()) {
    o.ignore("bias");
    if (to_lower(j.at("bias").get<std::string>()) != "qkv")
      throw InputError(ctx + ": bias '" + j.at("bias").get<std::string>() + "' is not valid (use true, false or \"qkv\")");
    m.qkv_bias = true;
  } else if (o.has("bias") && !j.at("bias").is_boolean()) {
    throw InputError(ctx + ": bias must be true, false or \"qkv\", got " + describe_json(j.at("bias")));
  } else {
    m.bias = o.opt_bool("bias", false);
  }
  const std::string norm = to_lower(o.opt_str("norm", "rmsnorm"));
  if (norm == "rmsnorm") m.norm = NormKind::RMSNorm;
  else if (norm == "layernorm") m.norm = NormKind::LayerNorm;
  else throw InputError(ctx + ": norm '" + norm + "' is not valid (choose rmsnorm or layernorm)");
  const std::string pos = to_lower(o.opt_str("position", "rope"));
  if (pos == "rope") m.position = PositionKind::RoPE;
  else if (pos == "learned") m.position = PositionKind::Learned;
  else if (pos == "alibi") m.position = PositionKind::ALiBi;
  else if (pos == "none") m.position = PositionKind::None;
  else throw InputError(ctx + ": position '" + pos + "' is not valid (choose rope, learned, alibi or none)");
  m.dropout = o.opt_bool("dropout", false);
  parse_parsim_issue10(j, o, m, ctx);
  o.finish();
  return m;
}

// ---- Hugging Face config.json ----
// Accepted and ignored: these keys change neither weight shapes nor the FLOPs parsim counts.
const std::set<std::string> kHfHarmless = {
    // bookkeeping and tokenizer ids
    "_name_or_path", "architectures", "transformers_version", "torch_dtype", "dtype", "bos_token_id", "eos_token_id",
    "pad_token_id", "use_cache", "cache_implementation", "initializer_range", "tokenizer_class", "auto_map",
    "_attn_implementation", "_attn_implementation_autoset",
    // storage format of the released weights (fp8 blocks, MXFP4, GPTQ): the trained shapes are the same
    "quantization_config",
    // norm epsilons (the norm kind itself follows from the family)
    "rms_norm_eps", "layer_norm_epsilon", "layer_norm_eps",
    // RoPE frequency base and context-extension scaling: no parameters, same FLOPs (a partial rotary factor inside
    // rope_parameters is read separately)
    "rope_theta", "rope_scaling", "rope_parameters", "use_mrope", "rotary_emb_base", "rope_interleave",
    "original_max_position_embeddings", "initial_context_length",
    // attention knobs without shapes: soft-capping, score scaling, QKV clipping; sliding-window keys of families
    // that do not apply them (the families that do read them)
    "sliding_window", "sliding_window_size", "use_sliding_window", "max_window_layers", "attn_logit_softcapping",
    "final_logit_softcapping", "query_pre_attn_scalar", "clip_qkv", "rope_local_base_freq",
    // Llama: TP degree used by Meta's pre-training (shapes unchanged)
    "pretraining_tp",
    // MoE routing-score and load-balancing knobs: how experts are picked, not how many or how large
    "output_router_logits", "router_aux_loss_coef", "router_jitter_noise", "norm_topk_prob", "routed_scaling_factor",
    "scoring_func", "topk_method", "aux_loss_alpha", "seq_aux", "ep_size", "swiglu_limit",
    // GPT-NeoX: dropout keys its modelling code never read (attention_dropout / hidden_dropout are read);
    // Falcon: where the residual is taken from
    "attention_probs_dropout_prob", "hidden_dropout_prob", "classifier_dropout",
    "apply_residual_connection_post_layernorm",
    // GPT-2: n_ctx duplicates n_positions; attention scaling flags; sequence-summary head used only by GPT2DoubleHeads
    "n_ctx", "scale_attn_weights", "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn", "summary_activation",
    "summary_first_dropout", "summary_proj_to_labels", "summary_type", "summary_use_proj", "task_specific_params",
    "output_past", "n_special", "predict_special_tokens"};

enum class HfFamily {
  Llama, Mistral, Mixtral, Qwen2, Qwen2Moe, Qwen3, Qwen3Moe, Gemma, Gemma2, Gemma3, Phi3, Olmo2, Olmoe, DeepseekV2,
  DeepseekV3, Glm4Moe, GptOss, Llama4, Gpt2, Falcon, GptNeox, NemotronH
};

struct HfKind {
  const char* model_type;
  const char* architecture;
  HfFamily family;
  std::int64_t default_max_positions;  // the HF config class's default for max_position_embeddings / n_positions
};
const HfKind kHfKinds[] = {
    {"llama", "LlamaForCausalLM", HfFamily::Llama, 2048},              // LlamaConfig
    {"mistral", "MistralForCausalLM", HfFamily::Mistral, 131072},       // MistralConfig: 4096 * 32
    {"mixtral", "MixtralForCausalLM", HfFamily::Mixtral, 131072},       // MixtralConfig: 4096 * 32
    {"qwen2", "Qwen2ForCausalLM", HfFamily::Qwen2, 32768},              // Qwen2Config
    {"qwen2_moe", "Qwen2MoeForCausalLM", HfFamily::Qwen2Moe, 32768},    // Qwen2MoeConfig
    {"qwen3", "Qwen3ForCausalLM", HfFamily::Qwen3, 32768},              // Qwen3Config
    {"qwen3_moe", "Qwen3MoeForCausalLM", HfFamily::Qwen3Moe, 32768},    // Qwen3MoeConfig
    {"gemma", "GemmaForCausalLM", HfFamily::Gemma, 8192},               // GemmaConfig
    {"gemma2", "Gemma2ForCausalLM", HfFamily::Gemma2, 8192},            // Gemma2Config
    {"gemma3_text", "Gemma3ForCausalLM", HfFamily::Gemma3, 131072},     // Gemma3TextConfig
    {"phi3", "Phi3ForCausalLM", HfFamily::Phi3, 4096},                  // Phi3Config
    {"olmo2", "Olmo2ForCausalLM", HfFamily::Olmo2, 2048},               // Olmo2Config
    {"olmoe", "OlmoeForCausalLM", HfFamily::Olmoe, 4096},               // OlmoeConfig
    {"deepseek_v2", "DeepseekV2ForCausalLM", HfFamily::DeepseekV2, 2048},  // DeepseekV2Config
    {"deepseek_v3", "DeepseekV3ForCausalLM", HfFamily::DeepseekV3, 4096},  // DeepseekV3Config
    // Kimi K2: "Kimi-K2 reuses the DeepSeekV3CausalLM architecture … we set model_type kimi_k2 in config.json" so that
    // engines can tell it apart (Moonshot AI, github.com/MoonshotAI/Kimi-K2 docs/deploy_guidance.md); the same shapes.
    {"kimi_k2", "DeepseekV3ForCausalLM", HfFamily::DeepseekV3, 4096},
    {"glm4_moe", "Glm4MoeForCausalLM", HfFamily::Glm4Moe, 131072},     // Glm4MoeConfig
    {"gpt_oss", "GptOssForCausalLM", HfFamily::GptOss, 131072},         // GptOssConfig
    {"llama4_text", "Llama4ForCausalLM", HfFamily::Llama4, 131072},     // Llama4TextConfig: 4096 * 32
    {"gpt2", "GPT2LMHeadModel", HfFamily::Gpt2, 1024},                  // GPT2Config
    {"falcon", "FalconForCausalLM", HfFamily::Falcon, 2048},            // FalconConfig
    {"gpt_neox", "GPTNeoXForCausalLM", HfFamily::GptNeox, 2048},        // GPTNeoXConfig
    {"nemotron_h", "NemotronHForCausalLM", HfFamily::NemotronH, 4096},  // NemotronHConfig
};

std::string hf_supported() {
  std::string out;
  for (const auto& k : kHfKinds) out += (out.empty() ? "" : ", ") + std::string(k.model_type);
  return out;
}

// The kind of a model_type (exact match), or null.
const HfKind* kind_of_type(const std::string& type) {
  for (const auto& k : kHfKinds)
    if (type == k.model_type) return &k;
  return nullptr;
}

const HfKind& hf_kind(const nlohmann::json& j, StrictObject& o) {
  std::string arch;
  if (o.has("architectures")) {
    const auto& a = j.at("architectures");
    if (!a.is_array() || a.empty() || !a[0].is_string())
      throw InputError(o.context() + ": key 'architectures' must be a list of class names, got " + describe_json(a));
    arch = a[0].get<std::string>();
  }
  const std::string type = o.opt_str("model_type", "");
  if (const HfKind* k = type.empty() ? nullptr : kind_of_type(type)) return *k;
  // A model_type parsim does not know with an architecture class it does: a checkpoint that reuses a family's
  // modelling code under its own name (the model_type only tells inference engines apart) has that family's shapes.
  for (const auto& k : kHfKinds) {
    if (!arch.empty() && arch == k.architecture) return k;
  }
  if (!type.empty())
    throw InputError(o.context() + ": model_type '" + type + "' is not supported (supported: " + hf_supported() + ")");
  if (!arch.empty())
    throw InputError(o.context() + ": architecture '" + arch + "' is not supported (supported model types: " +
                     hf_supported() + ")");
  // Neither key: infer from the key style (GPT-2's n_layer, else the Llama-style num_hidden_layers).
  const HfFamily guess = j.contains("n_layer") ? HfFamily::Gpt2 : HfFamily::Llama;
  for (const auto& k : kHfKinds) {
    if (k.family == guess) return k;
  }
  return kHfKinds[0];
}

FfnActivation hf_gated_activation(const std::string& act, const std::string& ctx) {
  const std::string l = to_lower(act);
  if (l == "silu" || l == "swish") return FfnActivation::SwiGLU;
  // GeGLU (Gemma): same three matrices and FLOPs as SwiGLU, so the same gated kind.
  if (l == "gelu" || l == "gelu_pytorch_tanh" || l == "gelu_new" || l == "gelu_fast")
    return FfnActivation::SwiGLU;
  throw InputError(ctx + ": hidden_act '" + act + "' is not supported (silu, swish, gelu, gelu_pytorch_tanh, gelu_new)");
}

// Plain (two-matrix) FFN activations: GPT-2 activation_function, Falcon activation, GPT-NeoX hidden_act.
FfnActivation hf_plain_activation(const std::string& act, const std::string& ctx, const char* key) {
  const std::string l = to_lower(act);
  if (l == "relu2") return FfnActivation::ReLU2;
  if (l.rfind("gelu", 0) == 0) return FfnActivation::GeLU;
  throw InputError(ctx + ": " + key + " '" + act + "' is not supported (gelu, gelu_new, gelu_fast, relu2)");
}

std::string hf_name(StrictObject& o, const std::string& path) {
  std::string name = o.opt_str("_name_or_path", "");
  if (!name.empty()) return name;
  const std::filesystem::path p(path);
  if (p.filename() == "config.json" && p.has_parent_path() && !p.parent_path().filename().empty())
    return utf8_sanitize(p.parent_path().filename().string());  // a path may hold any bytes; the name goes to JSON
  return utf8_sanitize(p.stem().string());
}

// The rotary share of each head: `partial_rotary_factor` (Phi-3, transformers ≥ 4.4x; also inside rope_parameters
// in transformers 5) or GPT-NeoX's `rotary_pct`.
double hf_rotary_fraction(const nlohmann::json& j, StrictObject& o, double fallback) {
  double f = fallback;
  if (j.contains("rope_parameters") && j.at("rope_parameters").is_object() &&
      j.at("rope_parameters").contains("partial_rotary_factor") &&
      j.at("rope_parameters").at("partial_rotary_factor").is_number())
    f = j.at("rope_parameters").at("partial_rotary_factor").get<double>();
  f = o.opt_num("rotary_pct", f);
  f = o.opt_num("partial_rotary_factor", f);
  if (!(f > 0.0 && f <= 1.0))
    throw InputError(o.context() + ": partial rotary factor " + fmt_num(f, 3) + " is not valid (a fraction in (0, 1])");
  return f;
}

// Per-layer sliding flags from transformers' `layer_types` (written by current transformers for the families that
// have per-layer attention types), or from the family's rule (`rule(i)`) when the key is absent.
template <class Rule>
std::vector<bool> hf_sliding_layers(const nlohmann::json& j, StrictObject& o, const ModelSpec& m, Rule rule) {
  std::vector<bool> out(static_cast<std::size_t>(m.layers), false);
  if (o.has("layer_types")) {
    o.ignore("layer_types");
    const auto& v = j.at("layer_types");
    if (!v.is_array() || v.size() != static_cast<std::size_t>(m.layers))
      throw InputError(o.context() + ": key 'layer_types' must list one type per layer (" + std::to_string(m.layers) +
                       "), got " + describe_json(v));
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string t = v[i].is_string() ? v[i].get<std::string>() : describe_json(v[i]);
      if (t == "sliding_attention") out[i] = true;
      else if (t != "full_attention")
        throw InputError(o.context() + ": layer type '" + t + "' of layer " + std::to_string(i) +
                         " is not supported (full_attention or sliding_attention)");
    }
  } else {
    o.ignore("layer_types");
    for (int i = 0; i < m.layers; ++i) out[static_cast<std::size_t>(i)] = rule(i);
  }
  bool any = false;
  for (bool b : out) any = any || b;
  if (any && m.sliding_window <= 0)
    throw InputError(o.context() + ": sliding_attention layers need a positive 'sliding_window'");
  return out;
}

// GPT-2 family (transformers GPT2Config / modeling_gpt2.py): Conv1D layers with biases, LayerNorm, learned positions,
// tied head.
void read_gpt2(const nlohmann::json&, StrictObject& o, const HfKind& kind, ModelSpec& m, const std::string& ctx) {
  m.layers = narrow_int(o.req_int("n_layer"), ctx, "n_layer");
  m.hidden = o.req_int("n_embd");
  m.heads = narrow_int(o.req_int("n_head"), ctx, "n_head");
  m.kv_heads = m.heads;
  m.ffn_hidden = o.opt_int("n_inner", checked_mul(4, m.hidden).value_or(INT64_MAX));  // null or absent: 4·n_embd
  m.vocab = o.req_int("vocab_size");
  m.seq_len = o.opt_int("n_positions", kind.default_max_positions);
  m.activation = hf_plain_activation(o.opt_str("activation_function", "gelu_new"), ctx, "activation_function");
  m.tied_embeddings = o.opt_bool("tie_word_embeddings", true);
  m.bias = true;
  m.norm = NormKind::LayerNorm;
  m.position = PositionKind::Learned;
  // GPT2Config defaults: 0.1 for all three dropouts.
  const double resid = o.opt_num("resid_pdrop", 0.1), attn = o.opt_num("attn_pdrop", 0.1);
  const double embd = o.opt_num("embd_pdrop", 0.1);
  m.dropout = resid > 0 || attn > 0 || embd > 0;
}

// Falcon (transformers FalconConfig / modeling_falcon.py): fused query_key_value of (a + 2g)·d with g = num_kv_heads
// under new_decoder_architecture (Falcon-40B/180B), 1 with multi_query (Falcon-7B), else a; attention and MLP in
// parallel from one LayerNorm (parallel_attn; two, ln_attn and ln_mlp, under new_decoder_architecture) or in
// sequence with two; dense_h_to_4h / dense_4h_to_h of ffn_hidden_size (default 4h) with GeLU; `bias` on every linear;
// RoPE unless alibi; tied LM head.
void read_falcon(const nlohmann::json&, StrictObject& o, const HfKind& kind, ModelSpec& m, const std::string& ctx) {
  m.layers = narrow_int(o.req_int("num_hidden_layers"), ctx, "num_hidden_layers");
  m.hidden = o.req_int("hidden_size");
  m.heads = narrow_int(o.req_int("num_attention_heads"), ctx, "num_attention_heads");
  const bool new_arch = o.opt_bool("new_decoder_architecture", false);
  const bool multi_query = o.opt_bool("multi_query", true);
  const std::int64_t kv = o.opt_int("num_kv_heads", m.heads);
  m.kv_heads = new_arch ? narrow_int(kv, ctx, "num_kv_heads") : (multi_query ? 1 : m.heads);
  m.ffn_hidden = o.opt_int("ffn_hidden_size", checked_mul(4, m.hidden).value_or(INT64_MAX));  // no overflow
  m.vocab = o.req_int("vocab_size");
  m.seq_len = std::min(o.opt_int("max_position_embeddings", kind.default_max_positions), kHfSeqLenCap);
  m.activation = hf_plain_activation(o.opt_str("activation", "gelu"), ctx, "activation");
  m.tied_embeddings = o.opt_bool("tie_word_embeddings", true);
  m.bias = o.opt_bool("bias", false);
  m.norm = NormKind::LayerNorm;
  m.position = o.opt_bool("alibi", false) ? PositionKind::ALiBi : PositionKind::RoPE;
  m.parallel_attention = o.opt_bool("parallel_attn", true);
  const std::int64_t ln_parallel = o.opt_int("num_ln_in_parallel_attn", new_arch ? 2 : 1);
  m.norm_layers = m.parallel_attention ? static_cast<int>(ln_parallel == 2 ? 2 : 1) : 2;
  m.dropout = o.opt_num("hidden_dropout", 0.0) > 0 || o.opt_num("attention_dropout", 0.0) > 0;
}

// GPT-NeoX / Pythia (transformers GPTNeoXConfig / modeling_gpt_neox.py): fused query_key_value 3h and dense h with
// biases (attention_bias, default true), MLP dense_h_to_4h / dense_4h_to_h with biases, two LayerNorms, parallel
// residual (use_parallel_residual, default true), partial RoPE (rotary_pct, default 0.25), untied embed_out.
void read_gpt_neox(const nlohmann::json& j, StrictObject& o, const HfKind& kind, ModelSpec& m, const std::string& ctx) {
  m.layers = narrow_int(o.req_int("num_hidden_layers"), ctx, "num_hidden_layers");
  m.hidden = o.req_int("hidden_size");
  m.heads = narrow_int(o.req_int("num_attention_heads"), ctx, "num_attention_heads");
  m.kv_heads = m.heads;
  m.ffn_hidden = o.req_int("intermediate_size");
  m.vocab = o.req_int("vocab_size");
  m.seq_len = std::min(o.opt_int("max_position_embeddings", kind.default_max_positions), kHfSeqLenCap);
  m.activation = hf_plain_activation(o.opt_str("hidden_act", "gelu"), ctx, "hidden_act");
  m.tied_embeddings = o.opt_bool("tie_word_embeddings", false);
  const bool attention_bias = o.opt_bool("attention_bias", true);
  m.qkv_bias = attention_bias;
  m.out_bias = attention_bias;
  m.ffn_bias = true;
  m.norm = NormKind::LayerNorm;
  m.position = PositionKind::RoPE;
  m.parallel_attention = o.opt_bool("use_parallel_residual", true);
  m.rotary_fraction = hf_rotary_fraction(j, o, 0.25);
  m.dropout = o.opt_num("hidden_dropout", 0.0) > 0 || o.opt_num("attention_dropout", 0.0) > 0;
}

// Llama-like families (transformers Llama/Mistral/Mixtral/Qwen2/Qwen2-MoE/Qwen3/Qwen3-MoE/Gemma/Gemma2/Phi3/OLMo2/
// OLMoE/DeepSeek-V2/V3/GPT-OSS configs and modeling files): gated MLP (gate/up/down), RMSNorm, RoPE, then each
// family's differences.
void read_llama_like(const nlohmann::json& j, StrictObject& o, const HfKind& kind, ModelSpec& m,
                     const std::string& ctx) {
  const HfFamily fam = kind.family;
  // Gemma 3's released configs name only the keys that differ from Gemma3TextConfig's defaults (google/gemma-3-4b-it's
  // text_config: hidden_size, intermediate_size, num_hidden_layers, sliding_window, rope_scaling), so its shape keys
  // fall back to those defaults (transformers configuration_gemma3.py: vocab 262,208, hidden 2304, FFN 9216, 26
  // layers, 8 heads, 4 KV heads of 256); every other family's shape keys are required.
  const bool gemma3 = fam == HfFamily::Gemma3;
  auto shape = [&](const char* key, std::int64_t gemma3_default) {
    return gemma3 ? o.opt_int(key, gemma3_default) : o.req_int(key);
  };
  m.layers = narrow_int(shape("num_hidden_layers", 26), ctx, "num_hidden_layers");
  if (m.layers < 1) throw InputError(ctx + ": num_hidden_layers must be a positive integer, got " + std::to_string(m.layers));
  require_layer_count(m.layers, ctx);
  m.hidden = shape("hidden_size", 2304);
  m.heads = narrow_int(shape("num_attention_heads", 8), ctx, "num_attention_heads");
  m.kv_heads = narrow_int(o.opt_int("num_key_value_heads", gemma3 ? 4 : m.heads), ctx, "num_key_value_heads");
  m.ffn_hidden = shape("intermediate_size", 9216);
  m.vocab = shape("vocab_size", 262208);
  const bool deepseek = fam == HfFamily::DeepseekV2 || fam == HfFamily::DeepseekV3;
  if ((o.has("head_dim") || gemma3) && !deepseek) {
    m.head_dim = o.opt_int("head_dim", 256);  // only Gemma 3 reaches here without the key
    if (m.head_dim <= 0) throw InputError(ctx + ": head_dim must be a positive integer, got " + std::to_string(m.head_dim));
  }
  o.ignore("head_dim");
  m.seq_len = std::min(o.opt_int("max_position_embeddings", kind.default_max_positions), kHfSeqLenCap);
  const bool gemma = fam == HfFamily::Gemma || fam == HfFamily::Gemma2 || gemma3;
  // Gemma3TextConfig use_bidirectional_attention (EmbeddingGemma): an encoder, whose attention is not causal.
  if (gemma3 && o.opt_bool("use_bidirectional_attention", false))
    throw InputError(ctx + ": use_bidirectional_attention true (an embedding encoder, not a causal language model) "
                           "is not modelled: parsim trains decoders with causal attention");
  std::string act = o.opt_str("hidden_act", gemma ? "gelu_pytorch_tanh" : "silu");
  if (o.has("hidden_activation")) act = o.req_str("hidden_activation");  // Gemma: overrides hidden_act
  o.ignore("hidden_activation");
  m.activation = hf_gated_activation(act, ctx);
  m.tied_embeddings = o.opt_bool("tie_word_embeddings", gemma);  // HF default: tied for Gemma, untied otherwise
  // attention_bias: q, k, v and o projections; mlp_bias: gate, up, down (LlamaAttention / LlamaMLP).
  const bool attention_bias = o.opt_bool("attention_bias", false);
  // Qwen2Attention / Qwen2MoeAttention: q/k/v bias=True, o bias=False (Qwen2-MoE: `qkv_bias` where the config has it).
  const bool qwen2_qkv = fam == HfFamily::Qwen2 || (fam == HfFamily::Qwen2Moe && o.opt_bool("qkv_bias", true));
  m.qkv_bias = attention_bias || qwen2_qkv;
  // Glm4MoeAttention: attention_bias on q/k/v only, o_proj without.
  m.out_bias = attention_bias && fam != HfFamily::Glm4Moe;
  m.ffn_bias = o.opt_bool("mlp_bias", false);
  m.dropout = o.opt_num("attention_dropout", 0.0) > 0;
  m.norm = NormKind::RMSNorm;
  m.position = PositionKind::RoPE;
  // Gemma2DecoderLayer / Gemma3DecoderLayer: pre/post attention + pre/post FFN norms.
  m.norm_layers = (fam == HfFamily::Gemma2 || gemma3) ? 4 : 2;
  // Qwen3: q_norm / k_norm RMSNorm(head_dim); OLMo 2 / OLMoE: RMSNorm over the whole Q (a·d) and K (g·d) projections
  // (OLMo 2 places its two layer norms after attention and after the MLP — the same count of norms and of stored
  // hidden-sized tensors as pre-norm).
  // Gemma 3: Gemma3Attention's q_norm / k_norm are RMSNorm(head_dim) too.
  if (fam == HfFamily::Qwen3 || fam == HfFamily::Qwen3Moe || gemma3) m.qk_norm = QkNorm::PerHead;
  if (fam == HfFamily::Olmo2 || fam == HfFamily::Olmoe) m.qk_norm = QkNorm::Full;
  // GLM-4.5: q_norm / k_norm RMSNorm(head_dim) when use_qk_norm (Glm4MoeAttention).
  if (fam == HfFamily::Glm4Moe && o.opt_bool("use_qk_norm", false)) m.qk_norm = QkNorm::PerHead;
  if (fam == HfFamily::Phi3) {
    // Phi3ForCausalLM: fused qkv_proj ((a + 2g)·d) and gate_up_proj (2f) — the same shapes as the separate
    // projections; embd_pdrop / resid_pdrop / attention_dropout are its dropouts.
    m.dropout = m.dropout || o.opt_num("embd_pdrop", 0.0) > 0 || o.opt_num("resid_pdrop", 0.0) > 0;
  }
  m.rotary_fraction = hf_rotary_fraction(j, o, 1.0);

  // ---- MLA (DeepSeek-V2/V3: DeepseekV2Config / DeepseekV3Config) ----
  if (deepseek) {
    m.mla = true;
    m.q_lora_rank = o.opt_int("q_lora_rank", 0);  // null: q_proj straight from the hidden state (V2-Lite)
    m.kv_lora_rank = o.req_int("kv_lora_rank");
    m.qk_nope_head_dim = o.req_int("qk_nope_head_dim");
    m.qk_rope_head_dim = o.req_int("qk_rope_head_dim");
    m.v_head_dim = o.req_int("v_head_dim");
    o.ignore("qk_head_dim");  // transformers 5 writes the derived nope + rope
    m.kv_heads = m.heads;     // every head has its own K and V after the up-projection
    m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  }

  // ---- MoE ----
  std::vector<bool> moe(static_cast<std::size_t>(m.layers), false);
  std::vector<bool> chunked;  // Llama 4: the layers with chunked attention (empty: none)
  switch (fam) {
    case HfFamily::Mixtral:
    case HfFamily::GptOss: {
      // MixtralSparseMoeBlock / GptOssMLP: num_local_experts experts of intermediate_size, every layer.
      m.experts = narrow_int(o.req_int("num_local_experts"), ctx, "num_local_experts");
      m.experts_per_token = narrow_int(o.req_int("num_experts_per_tok"), ctx, "num_experts_per_tok");
      if (fam == HfFamily::GptOss && o.has("experts_per_token") &&
          o.req_int("experts_per_token") != m.experts_per_token)
        throw InputError(ctx + ": experts_per_token " + std::to_string(o.req_int("experts_per_token")) +
                         " disagrees with num_experts_per_tok " + std::to_string(m.experts_per_token));
      if (fam == HfFamily::GptOss) o.ignore("experts_per_token");
      m.expert_ffn_hidden = m.ffn_hidden;
      std::fill(moe.begin(), moe.end(), true);
      break;
    }
    case HfFamily::Olmoe: {
      m.experts = narrow_int(o.req_int("num_experts"), ctx, "num_experts");
      m.experts_per_token = narrow_int(o.req_int("num_experts_per_tok"), ctx, "num_experts_per_tok");
      m.expert_ffn_hidden = m.ffn_hidden;
      std::fill(moe.begin(), moe.end(), true);
      break;
    }
    case HfFamily::Qwen2Moe:
    case HfFamily::Qwen3Moe: {
      // Qwen2MoeDecoderLayer / Qwen3MoeDecoderLayer: layer i is sparse when i ∉ mlp_only_layers, num_experts > 0
      // and (i + 1) % decoder_sparse_step == 0; dense layers use intermediate_size.
      m.experts = narrow_int(o.req_int("num_experts"), ctx, "num_experts");
      m.experts_per_token = narrow_int(o.req_int("num_experts_per_tok"), ctx, "num_experts_per_tok");
      m.expert_ffn_hidden = o.req_int("moe_intermediate_size");
      const std::int64_t step = o.opt_int("decoder_sparse_step", 1);
      if (step < 1) throw InputError(ctx + ": decoder_sparse_step must be at least 1, got " + std::to_string(step));
      std::vector<int> mlp_only;
      if (o.has("mlp_only_layers")) mlp_only = layer_index_list(j.at("mlp_only_layers"), m.layers, ctx, "mlp_only_layers");
      o.ignore("mlp_only_layers");
      for (int i = 0; i < m.layers; ++i)
        moe[static_cast<std::size_t>(i)] = m.experts > 0 && (i + 1) % step == 0 &&
                                           std::find(mlp_only.begin(), mlp_only.end(), i) == mlp_only.end();
      if (fam == HfFamily::Qwen2Moe) {
        // One shared expert of shared_expert_intermediate_size with a sigmoid gate Linear(h, 1).
        const std::int64_t shared = o.opt_int("shared_expert_intermediate_size", 0);
        if (shared > 0) {
          m.shared_experts = 1;
          m.shared_expert_ffn_hidden = shared;
          m.shared_expert_gate = true;
        }
      }
      if (m.experts == 0) m.experts_per_token = 0;
      break;
    }
    case HfFamily::DeepseekV2:
    case HfFamily::DeepseekV3:
    case HfFamily::Glm4Moe: {
      // DeepseekV3DecoderLayer: MoE when n_routed_experts is set, i ≥ first_k_dense_replace and
      // i % moe_layer_freq == 0 (Glm4MoeDecoderLayer: i ≥ first_k_dense_replace, its config has no moe_layer_freq);
      // the others are dense MLPs of intermediate_size. n_shared_experts shared experts of
      // moe_intermediate_size (one MLP of n·moe_intermediate_size in the code: the same shapes summed).
      m.experts = narrow_int(o.opt_int("n_routed_experts", 0), ctx, "n_routed_experts");
      if (m.experts > 0) {
        m.experts_per_token = narrow_int(o.req_int("num_experts_per_tok"), ctx, "num_experts_per_tok");
        m.expert_ffn_hidden = o.req_int("moe_intermediate_size");
        m.shared_experts = narrow_int(o.opt_int("n_shared_experts", 0), ctx, "n_shared_experts");
        m.expert_groups = narrow_int(o.opt_int("n_group", 0), ctx, "n_group");
        m.expert_groups_per_token = narrow_int(o.opt_int("topk_group", 0), ctx, "topk_group");
        if (m.expert_groups <= 1) m.expert_groups = m.expert_groups_per_token = 0;  // one group: no limit
      }
      for (const char* k : {"num_experts_per_tok", "moe_intermediate_size", "n_shared_experts", "n_group", "topk_group"})
        o.ignore(k);
      const std::int64_t first_dense = o.opt_int("first_k_dense_replace", 0);
      const std::int64_t freq = fam == HfFamily::Glm4Moe ? 1 : o.opt_int("moe_layer_freq", 1);
      if (first_dense < 0 || freq < 1)
        throw InputError(ctx + ": first_k_dense_replace " + std::to_string(first_dense) + " / moe_layer_freq " +
                         std::to_string(freq) + " are not valid (≥ 0 and ≥ 1)");
      for (int i = 0; i < m.layers; ++i)
        moe[static_cast<std::size_t>(i)] = m.experts > 0 && i >= first_dense && i % freq == 0;
      m.mtp_layers = narrow_int(o.opt_int("num_nextn_predict_layers", 0), ctx, "num_nextn_predict_layers");
      break;
    }
    case HfFamily::Llama4: {
      // Llama4TextDecoderLayer: layer i is an MoE layer when i ∈ moe_layers (default every interleave_moe_layer_step-th
      // layer from step − 1: Scout all 48, Maverick the odd ones), else a dense MLP of intermediate_size_mlp.
      // Llama4TextMoe: num_local_experts routed experts of intermediate_size (top num_experts_per_tok, sigmoid router
      // without bias) and one shared expert of intermediate_size.
      m.experts = narrow_int(o.opt_int("num_local_experts", 16), ctx, "num_local_experts");
      m.experts_per_token = narrow_int(o.opt_int("num_experts_per_tok", 1), ctx, "num_experts_per_tok");
      m.expert_ffn_hidden = m.ffn_hidden;  // intermediate_size
      m.shared_experts = 1;
      m.shared_expert_ffn_hidden = m.ffn_hidden;
      m.ffn_hidden = o.opt_int("intermediate_size_mlp", 16384);  // the dense layers'
      const std::int64_t step = o.opt_int("interleave_moe_layer_step", 1);
      if (step < 1)
        throw InputError(ctx + ": interleave_moe_layer_step must be at least 1, got " + std::to_string(step));
      if (o.has("moe_layers") && !j.at("moe_layers").is_null()) {
        for (int i : layer_index_list(j.at("moe_layers"), m.layers, ctx, "moe_layers"))
          moe[static_cast<std::size_t>(i)] = true;
      } else {
        for (int i = static_cast<int>(step) - 1; i < m.layers; i += static_cast<int>(step))
          moe[static_cast<std::size_t>(i)] = true;
      }
      o.ignore("moe_layers");
      // Chunked attention on the RoPE layers, global (full causal) attention on the NoPE ones (ModelSpec::
      // attention_chunk): Llama4TextConfig's layer_types, written from no_rope_layers (1 = RoPE = "chunked_attention"),
      // whose default is every no_rope_layer_interval-th layer (4) NoPE. What stays unmodelled is shape-free: the NoPE
      // layers skip the rotary op, use_qk_norm is a parameter-free L2 norm, and the temperature tuning scales queries.
      // (null: no chunking, every layer global — Llama4TextModel builds the chunked mask only with a chunk size)
      const bool chunk_null = j.contains("attention_chunk_size") && j.at("attention_chunk_size").is_null();
      m.attention_chunk = chunk_null ? 0 : o.opt_int("attention_chunk_size", 8192);
      o.ignore("attention_chunk_size");
      if (!chunk_null && m.attention_chunk < 1)
        throw InputError(ctx + ": attention_chunk_size must be a positive integer, got " +
                         std::to_string(m.attention_chunk));
      const std::int64_t nope_interval = o.opt_int("no_rope_layer_interval", 4);
      if (nope_interval < 1)
        throw InputError(ctx + ": no_rope_layer_interval must be a positive integer, got " +
                         std::to_string(nope_interval));
      chunked.assign(static_cast<std::size_t>(m.layers), false);
      for (int i = 0; i < m.layers; ++i) chunked[static_cast<std::size_t>(i)] = (i + 1) % nope_interval != 0;
      if (o.has("no_rope_layers") && !j.at("no_rope_layers").is_null()) {
        const auto& v = j.at("no_rope_layers");
        if (!v.is_array() || v.size() != static_cast<std::size_t>(m.layers))
          throw InputError(ctx + ": key 'no_rope_layers' must list one 0 or 1 per layer (" + std::to_string(m.layers) +
                           "), got " + describe_json(v));
        for (std::size_t i = 0; i < v.size(); ++i) {
          if (!v[i].is_number_integer() || (v[i].get<std::int64_t>() != 0 && v[i].get<std::int64_t>() != 1))
            throw InputError(ctx + ": no_rope_layers entry " + describe_json(v[i]) + " is not 0 or 1");
          chunked[i] = v[i].get<std::int64_t>() == 1;
        }
      }
      for (const char* k : {"no_rope_layers", "no_rope_layer_interval", "use_qk_norm", "attn_temperature_tuning",
                            "floor_scale", "attn_scale", "for_llm_compressor"})
        o.ignore(k);
      if (o.has("layer_types")) {
        o.ignore("layer_types");
        const auto& v = j.at("layer_types");
        if (!v.is_array() || v.size() != static_cast<std::size_t>(m.layers))
          throw InputError(ctx + ": key 'layer_types' must list one type per layer (" + std::to_string(m.layers) +
                           "), got " + describe_json(v));
        for (std::size_t i = 0; i < v.size(); ++i) {
          const std::string t = v[i].is_string() ? v[i].get<std::string>() : "";
          if (t != "chunked_attention" && t != "full_attention")
            throw InputError(ctx + ": layer type " + describe_json(v[i]) + " is not a Llama 4 one (chunked_attention "
                                   "or full_attention)");
          chunked[i] = t == "chunked_attention";
        }
      }
      if (m.attention_chunk == 0) chunked.clear();  // no chunk size: every layer global
      break;
    }
    default: break;
  }
  if (fam == HfFamily::GptOss) {
    // GptOssAttention: q/k/v/o with biases (attention_bias), a learned sink logit per head; GptOssExperts: gate_up and
    // down projections with biases; GptOssTopKRouter: Linear with bias.
    m.attention_sinks = true;
    m.expert_bias = true;
    m.router_bias = true;
    // GptOssExperts: gate clamped to ≤ swiglu_limit, up to ±swiglu_limit before the activation (GptOssConfig default
    // 7.0); the same clamp as Megatron-Core's activation_func_clamp_value (Megatron-Bridge gpt_oss_bridge.py).
    m.activation_clamp = o.opt_num("swiglu_limit", 7.0);
    if (!(m.activation_clamp >= 0.0 && std::isfinite(m.activation_clamp)))
      throw InputError(ctx + ": swiglu_limit " + fmt_num(m.activation_clamp, 3) + " is not valid (a limit ≥ 0)");
  }

  // ---- sliding-window attention ----
  std::function<bool(int)> rule = [](int) { return false; };
  switch (fam) {
    case HfFamily::Mistral:
    case HfFamily::Mixtral:
    case HfFamily::Phi3:
      m.sliding_window = o.opt_int("sliding_window", 0);  // null: none
      rule = [&m](int) { return m.sliding_window > 0; };
      break;
    case HfFamily::Gemma2:
    case HfFamily::GptOss:
      m.sliding_window = o.opt_int("sliding_window", fam == HfFamily::Gemma2 ? 4096 : 128);
      rule = [](int i) { return i % 2 == 0; };  // Gemma2DecoderLayer is_sliding = not layer_idx % 2; GptOssConfig
      break;
    case HfFamily::Gemma3: {
      // Gemma3TextConfig: sliding_window 4096 by default; without layer_types, layer i is sliding unless
      // (i + 1) % sliding_window_pattern == 0 (default 6: five local layers to one global, Gemma Team 2025, Gemma 3
      // technical report §2.1); current transformers writes the pattern as `_sliding_window_pattern`.
      m.sliding_window = o.opt_int("sliding_window", 4096);
      std::int64_t pattern = o.opt_int("sliding_window_pattern", 6);
      pattern = o.opt_int("_sliding_window_pattern", pattern);
      if (pattern < 1)
        throw InputError(ctx + ": sliding_window_pattern must be a positive integer, got " + std::to_string(pattern));
      rule = [&m, pattern](int i) { return m.sliding_window > 0 && (i + 1) % pattern != 0; };
      break;
    }
    case HfFamily::Qwen2:
    case HfFamily::Qwen2Moe:
    case HfFamily::Qwen3:
    case HfFamily::Qwen3Moe: {
      const bool use = o.opt_bool("use_sliding_window", false);
      const std::int64_t window = o.opt_int("sliding_window", 0);
      const std::int64_t from = o.opt_int("max_window_layers", m.layers);
      m.sliding_window = use ? window : 0;
      rule = [&m, from](int i) { return m.sliding_window > 0 && i >= from; };
      break;
    }
    default: break;
  }
  if (m.sliding_window < 0)
    throw InputError(ctx + ": sliding_window must be a positive integer, got " + std::to_string(m.sliding_window));
  // Llama 4 read its own layer_types (chunked or global attention: the chunked layers are placed below).
  const std::vector<bool> sliding = fam == HfFamily::Llama4
                                        ? std::vector<bool>(static_cast<std::size_t>(m.layers), false)
                                        : hf_sliding_layers(j, o, m, rule);
  bool any_sliding = false;
  for (bool b : sliding) any_sliding = any_sliding || b;
  if (!any_sliding) m.sliding_window = 0;
  // The uniform kind is Sliding when a window is set; layers marked full then differ from it.
  place_layers(m, moe, sliding);
  if (!chunked.empty()) {
    std::vector<LayerKind> kinds(static_cast<std::size_t>(m.layers));
    for (int i = 0; i < m.layers; ++i) {
      kinds[static_cast<std::size_t>(i)] = m.layer(i);
      if (chunked[static_cast<std::size_t>(i)]) kinds[static_cast<std::size_t>(i)].attention = AttentionKind::Chunked;
    }
    set_layer_kinds(m, std::move(kinds));
  }
}

// A list of block types (transformers NemotronHConfig layers_block_type / layer_types / mtp_layers_block_type) as the
// pattern characters of hybrid_pattern_kinds.
std::string block_types_pattern(const nlohmann::json& v, const std::string& ctx, const char* key) {
  if (!v.is_array()) throw InputError(ctx + ": key '" + key + "' must list one block type per layer, got " + describe_json(v));
  std::string pattern;
  for (const auto& e : v) {
    const std::string t = e.is_string() ? e.get<std::string>() : describe_json(e);
    if (t == "mamba" || t == "linear_attention") pattern += 'M';
    else if (t == "attention" || t == "full_attention") pattern += '*';
    else if (t == "mlp") pattern += '-';
    else if (t == "moe") pattern += 'E';
    else throw InputError(ctx + ": block type '" + t + "' in '" + key + "' is not valid (mamba/linear_attention, "
                                "attention/full_attention, mlp or moe)");
  }
  return pattern;
}

// Nemotron-H / Nemotron 3 (transformers NemotronHConfig / modeling_nemotron_h.py; Megatron-Bridge nemotron_h_bridge.py
// maps it onto Megatron-Core's MambaModel): a hybrid stack whose layers are single blocks — hybrid_override_pattern
// (or, in current transformers, layers_block_type / layer_types: "mamba" or "linear_attention", "attention" or
// "full_attention", "mlp", "moe") — Mamba-2 mixers of mamba_num_heads × mamba_head_dim channels (the config's
// `expand` does not set the width), grouped-query attention without positional encoding (NoPE: NemotronHAttention
// applies no rotary embedding), squared-ReLU MLPs (mlp_hidden_act relu2, not gated) of intermediate_size and, in MoE
// blocks, n_routed_experts routed experts of moe_intermediate_size with n_shared_experts shared experts of
// moe_shared_expert_intermediate_size (NemotronHMOE), with moe_latent_size the routed experts on a projected latent
// (Nemotron 3 Super's LatentMoE); num_nextn_predict_layers MTP modules of mtp_hybrid_override_pattern's blocks;
// RMSNorm, one per block; untied output head. Not modelled, and refused: fp32 residuals, use_bias.
void read_nemotron_h(const nlohmann::json& j, StrictObject& o, const HfKind& kind, ModelSpec& m, const std::string& ctx) {
  std::vector<LayerKind> kinds;
  if (o.has("hybrid_override_pattern")) {
    kinds = hybrid_pattern_kinds(o.req_str("hybrid_override_pattern"), ctx, "hybrid_override_pattern",
                                 &m.pipeline_segments);
  } else {
    const char* key = o.has("layers_block_type") ? "layers_block_type" : "layer_types";
    if (!o.has(key)) throw InputError(ctx + ": a nemotron_h config needs 'hybrid_override_pattern' (or "
                                            "'layers_block_type') to place its layers");
    // NVIDIA's remote-code NemotronHConfig writes `layer_types` with every MLP block as "moe" (its comment: the
    // transformers cache validator rejects "mlp"), so from `layer_types` alone an "moe" entry cannot be told from an
    // MLP: refuse rather than guess.
    if (std::string(key) == "layer_types" && j.at(key).is_array())
      for (const auto& e : j.at(key))
        if (e.is_string() && e.get<std::string>() == "moe")
          throw InputError(ctx + ": 'layer_types' alone cannot place a nemotron_h model's MoE blocks (NVIDIA's "
                                 "NemotronHConfig writes MLP blocks there as \"moe\" too): give "
                                 "'hybrid_override_pattern' or 'layers_block_type'");
    kinds = hybrid_pattern_kinds(block_types_pattern(j.at(key), ctx, key), ctx, key);
  }
  for (const char* k : {"layers_block_type", "layer_types"}) o.ignore(k);
  if (o.has("num_hidden_layers") && o.req_int("num_hidden_layers") != static_cast<std::int64_t>(kinds.size()))
    throw InputError(ctx + ": num_hidden_layers " + std::to_string(o.req_int("num_hidden_layers")) +
                     " disagrees with the " + std::to_string(kinds.size()) + " layers of the block pattern");
  m.hidden = o.req_int("hidden_size");
  m.vocab = o.req_int("vocab_size");
  m.heads = narrow_int(o.req_int("num_attention_heads"), ctx, "num_attention_heads");
  m.kv_heads = narrow_int(o.opt_int("num_key_value_heads", m.heads), ctx, "num_key_value_heads");
  if (o.has("head_dim")) m.head_dim = o.req_int("head_dim");
  // attention_head_dim: the same size under the name some Nemotron-H configs carry (the 4B's) [inferred from a public
  // copy]; both given must agree.
  if (o.has("attention_head_dim")) {
    const std::int64_t d = o.req_int("attention_head_dim");
    if (o.has("head_dim") && d != m.head_dim)
      throw InputError(ctx + ": head_dim " + std::to_string(m.head_dim) + " and attention_head_dim " +
                       std::to_string(d) + " disagree");
    m.head_dim = d;
  }
  o.ignore("head_dim");
  o.ignore("attention_head_dim");
  m.ffn_hidden = o.req_int("intermediate_size");
  m.seq_len = std::min(o.opt_int("max_position_embeddings", kind.default_max_positions), kHfSeqLenCap);
  m.activation = hf_plain_activation(o.opt_str("mlp_hidden_act", "relu2"), ctx, "mlp_hidden_act");
  m.tied_embeddings = o.opt_bool("tie_word_embeddings", false);
  const bool attention_bias = o.opt_bool("attention_bias", false);
  m.qkv_bias = attention_bias;
  m.out_bias = attention_bias;
  m.ffn_bias = o.opt_bool("mlp_bias", false);
  if (o.opt_bool("use_bias", false))
    throw InputError(ctx + ": use_bias true is not modelled for nemotron_h (biases are read per module: "
                           "attention_bias, mlp_bias, mamba_proj_bias, use_conv_bias)");
  if (o.opt_bool("residual_in_fp32", false))
    throw InputError(ctx + ": residual_in_fp32 true (an fp32 residual stream) is not modelled");
  m.dropout = o.opt_num("hidden_dropout", 0.0) > 0 || o.opt_num("attention_dropout", 0.0) > 0;
  m.norm = NormKind::RMSNorm;
  m.position = PositionKind::None;
  // Mamba-2 mixer (NemotronHMamba2Mixer); the legacy names of NemotronHConfig.__post_init__ are read too.
  bool mamba = false;
  for (const LayerKind& k : kinds) mamba = mamba || k.attention == AttentionKind::Mamba;
  if (mamba) {
    m.mamba_heads = o.req_int("mamba_num_heads");
    m.mamba_head_dim = o.req_int("mamba_head_dim");
    m.mamba_state = o.opt_int("ssm_state_size", 128);
    m.mamba_groups = o.has("mamba_n_groups") ? o.req_int("mamba_n_groups") : o.opt_int("n_groups", 8);
    m.mamba_conv_kernel = o.has("mamba_d_conv") ? o.req_int("mamba_d_conv") : o.opt_int("conv_kernel", 4);
    m.mamba_chunk = o.has("mamba_chunk_size") ? o.req_int("mamba_chunk_size") : o.opt_int("chunk_size", 128);
    m.mamba_conv_bias = o.has("mamba_conv_bias") ? o.req_bool("mamba_conv_bias") : o.opt_bool("use_conv_bias", true);
    m.mamba_proj_bias = o.opt_bool("mamba_proj_bias", false);
    const std::string act = to_lower(o.opt_str("mamba_hidden_act", "silu"));
    if (act != "silu" && act != "swish")
      throw InputError(ctx + ": mamba_hidden_act '" + act + "' is not modelled (silu)");
  }
  // Keys of the Mamba mixer that set no shape (the dt initialisation and limits, the inference cache dtype, the
  // kernel switch) and `expand`, which NemotronH does not use for the width.
  for (const char* k : {"mamba_num_heads", "mamba_head_dim", "ssm_state_size", "n_groups", "mamba_n_groups",
                        "conv_kernel", "mamba_d_conv", "chunk_size", "mamba_chunk_size", "use_conv_bias",
                        "mamba_conv_bias", "mamba_proj_bias", "mamba_hidden_act", "expand", "mamba_expand",
                        "time_step_min", "time_step_max", "time_step_limit", "time_step_floor", "mamba_dt_min",
                        "mamba_dt_max", "mamba_dt_limit", "mamba_dt_init_floor", "mamba_ssm_cache_dtype",
                        "use_mamba_kernels", "num_logits_to_keep", "rescale_prenorm_residual", "norm_eps",
                        "partial_rotary_factor", "moe_shared_expert_overlap"})
    o.ignore(k);
  // MoE blocks (NemotronHMOE: NemotronHTopkRouter over n_routed_experts, experts and shared experts as NemotronHMLP).
  bool moe = false;
  for (const LayerKind& k : kinds) moe = moe || k.ffn == FfnKind::MoE;
  if (moe) {
    m.experts = narrow_int(o.req_int("n_routed_experts"), ctx, "n_routed_experts");
    m.experts_per_token = narrow_int(o.req_int("num_experts_per_tok"), ctx, "num_experts_per_tok");
    m.expert_ffn_hidden = o.req_int("moe_intermediate_size");
    m.shared_experts = narrow_int(o.opt_int("n_shared_experts", 1), ctx, "n_shared_experts");
    m.shared_expert_ffn_hidden = o.opt_int("moe_shared_expert_intermediate_size", m.expert_ffn_hidden);
    m.expert_groups = narrow_int(o.opt_int("n_group", 0), ctx, "n_group");
    m.expert_groups_per_token = narrow_int(o.opt_int("topk_group", 0), ctx, "topk_group");
    if (m.expert_groups <= 1) m.expert_groups = m.expert_groups_per_token = 0;  // one group: no limit
    if (m.shared_experts == 0) m.shared_expert_ffn_hidden = 0;
  }
  for (const char* k : {"n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts",
                        "moe_shared_expert_intermediate_size", "n_group", "topk_group"})
    o.ignore(k);
  // LatentMoE (Nemotron 3 Super: NemotronHMoE's fc1_latent_proj / fc2_latent_proj around the routed experts).
  if (o.has("moe_latent_size") && !j.at("moe_latent_size").is_null()) {
    if (!moe) throw InputError(ctx + ": moe_latent_size needs MoE blocks ('E' in the pattern)");
    m.moe_latent = o.req_int("moe_latent_size");
  }
  o.ignore("moe_latent_size");
  // Multi-token prediction (Nemotron 3 Super: num_nextn_predict_layers modules of mtp_hybrid_override_pattern's
  // blocks, Megatron-Core's hybrid MTP; Megatron-Bridge nemotron_h_bridge.py maps them onto mtp_num_layers).
  m.mtp_layers = narrow_int(o.opt_int("num_nextn_predict_layers", 0), ctx, "num_nextn_predict_layers");
  if (m.mtp_layers > 0) {
    if (o.has("mtp_hybrid_override_pattern")) {
      m.mtp_kinds = hybrid_pattern_kinds(o.req_str("mtp_hybrid_override_pattern"), ctx, "mtp_hybrid_override_pattern");
    } else if (o.has("mtp_layers_block_type")) {
      m.mtp_kinds = hybrid_pattern_kinds(block_types_pattern(j.at("mtp_layers_block_type"), ctx,
                                                             "mtp_layers_block_type"),
                                         ctx, "mtp_layers_block_type");
    } else {
      throw InputError(ctx + ": num_nextn_predict_layers > 0 needs 'mtp_hybrid_override_pattern' (the MTP blocks)");
    }
    if (m.mtp_kinds.empty()) throw InputError(ctx + ": the MTP block pattern is empty");
  }
  for (const char* k : {"mtp_layers_block_type", "mtp_hybrid_override_pattern"}) o.ignore(k);
  set_hybrid_layers(m, std::move(kinds), ctx);
}

ModelSpec parse_hf(const nlohmann::json& j, const std::string& path, const std::string& ctx) {
  // A multimodal wrapper (Gemma3ForConditionalGeneration, Mistral3ForConditionalGeneration, Kimi-K2.5, …) holds its
  // language model in `text_config`; that is what parsim trains. Its other keys (vision_config, image token ids,
  // projector sizes) are not read, and the name says the vision tower is left out. A text_config without its own
  // model_type is the wrapper's family: `<model_type>_text` (gemma3 → gemma3_text) where parsim knows that name.
  if (j.contains("text_config") && !j.contains("num_hidden_layers") && !j.contains("n_layer")) {
    nlohmann::json text = j.at("text_config");
    if (!text.is_object())
      throw InputError(ctx + ": key 'text_config' must be an object, got " + describe_json(text));
    if (text.contains("text_config"))  // one level of wrapping, as every multimodal config has
      throw InputError(ctx + ": a text_config inside text_config is not a Hugging Face language-model config");
    const auto type = j.find("model_type");
    if (!text.contains("model_type") && !text.contains("architectures") && type != j.end() && type->is_string()) {
      const std::string wrapper = type->get<std::string>();
      text["model_type"] = kind_of_type(wrapper + "_text") ? wrapper + "_text" : wrapper;
    }
    ModelSpec m = parse_hf(text, path, ctx + " text_config");
    StrictObject w(j, ctx);
    m.name = hf_name(w, path);
    if (j.contains("vision_config")) m.name += " (language model; vision tower not modelled)";
    return m;
  }
  StrictObject o(j, ctx);
  const HfKind& kind = hf_kind(j, o);
  ModelSpec m;
  m.name = hf_name(o, path);
  switch (kind.family) {
    case HfFamily::Gpt2: read_gpt2(j, o, kind, m, ctx); break;
    case HfFamily::Falcon: read_falcon(j, o, kind, m, ctx); break;
    case HfFamily::GptNeox: read_gpt_neox(j, o, kind, m, ctx); break;
    case HfFamily::NemotronH: read_nemotron_h(j, o, kind, m, ctx); break;
    default: read_llama_like(j, o, kind, m, ctx); break;
  }
  o.finish(kHfHarmless);
  if (m.head_dim == 0 && m.heads > 0 && m.hidden % m.heads == 0) m.head_dim = m.hidden / m.heads;
  return m;
}

// The checks every model read from a file or a built-in config goes through.
ModelSpec finish_model(ModelSpec m, const std::string& ctx) {
  // A parsim JSON without head_dim: heads must divide hidden (checked by validate_model before resolving).
  try {
    validate_model(m);
  } catch (const InputError& e) {
    throw InputError(ctx + ": " + e.what());
  }
  if (m.head_dim == 0) m.head_dim = m.hidden / m.heads;
  return m;
}

ModelSpec load_model_file(const std::string& path) {
  const nlohmann::json j = load_json_file(path, "model file");
  const std::string ctx = "model file '" + path + "'";
  if (!j.is_object()) throw InputError(ctx + " must hold a JSON object, got " + std::string(j.type_name()));
  ModelSpec m;
  if (j.contains("layers")) {
    m = parse_parsim(j, ctx);
  } else if (j.contains("model_type") || j.contains("architectures") || j.contains("num_hidden_layers") ||
             j.contains("n_layer")) {
    m = parse_hf(j, path, "Hugging Face config '" + path + "'");
  } else {
    throw InputError(ctx + " is neither a parsim model (no 'layers' key) nor a Hugging Face config.json (no "
                           "'model_type', 'architectures', 'num_hidden_layers' or 'n_layer' key)");
  }
  return finish_model(std::move(m), ctx);
}

}  // namespace

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const auto& p : kPresets) names.emplace_back(p.name);
  for (std::size_t i = 0; i < detail::kEmbeddedModelCount; ++i) names.emplace_back(detail::kEmbeddedModels[i].name);
  return names;
}

ModelSpec resolve_model(const std::string& name_or_path) {
  const std::string key = to_lower(trim(name_or_path));
  for (const auto& p : kPresets) {
    if (key == p.name || (p.alias && key == p.alias)) return p.make();
  }
  // A built-in Hugging Face config (models/presets/<name>.json): read as `--model <that file>` would read it, named
  // by its preset name.
  for (std::size_t i = 0; i < detail::kEmbeddedModelCount; ++i) {
    const detail::EmbeddedPreset& p = detail::kEmbeddedModels[i];
    if (key != p.name) continue;
    const std::string ctx = std::string("built-in model '") + p.name + "' (models/presets/" + p.name + ".json)";
    ModelSpec m = finish_model(parse_hf(parse_json_text(p.text, ctx), std::string(p.name) + ".json", ctx), ctx);
    m.name = p.name;
    return m;
  }
  // A checkpoint directory (`--model ./Llama-3.1-8B/`): its config.json.
  std::error_code ec;
  if (std::filesystem::is_directory(name_or_path, ec)) {
    const std::filesystem::path config = std::filesystem::path(name_or_path) / "config.json";
    if (!std::filesystem::is_regular_file(config, ec))
      throw InputError("model directory '" + name_or_path + "' has no config.json (give a Hugging Face checkpoint "
                       "directory, or the path of a parsim model JSON or a config.json)");
    return load_model_file(config.string());
  }
  if (looks_like_path(name_or_path)) return load_model_file(name_or_path);
  throw InputError("unknown model '" + name_or_path + "' (built-in models: " + preset_list() +
                   "; or give a path to a parsim model JSON, a Hugging Face config.json or a checkpoint directory)");
}

void validate_model(const ModelSpec& m) {
  const std::string who = "model '" + m.name + "'";
  auto positive = [&](std::int64_t v, const char* what) {
    if (v <= 0) throw InputError(who + ": " + what + " must be a positive integer, got " + std::to_string(v));
  };
  positive(m.layers, "layers");
  positive(m.hidden, "hidden");
  positive(m.heads, "heads");
  positive(m.kv_heads, "kv_heads");
  positive(m.ffn_hidden, "ffn_hidden");
  positive(m.vocab, "vocab");
  positive(m.seq_len, "seq_len");
  if (m.head_dim < 0) positive(m.head_dim, "head_dim");
  if (m.norm_layers < 0) positive(m.norm_layers, "norm_layers");
  if (m.head_dim == 0 && m.hidden % m.heads != 0)
    throw InputError(who + ": heads " + std::to_string(m.heads) + " does not divide hidden " + std::to_string(m.hidden) +
                     " (choose a divisor of hidden, or give head_dim explicitly)");
  if (m.heads % m.kv_heads != 0)
    throw InputError(who + ": kv_heads " + std::to_string(m.kv_heads) + " does not divide heads " +
                     std::to_string(m.heads) + " (grouped-query attention needs heads to be a multiple of kv_heads)");
  // Attention variants.
  if (m.sliding_window < 0) positive(m.sliding_window, "sliding_window");
  if (!(m.rotary_fraction > 0.0 && m.rotary_fraction <= 1.0))
    throw InputError(who + ": rotary_fraction " + fmt_num(m.rotary_fraction, 3) + " is not a fraction in (0, 1]");
  if (m.mla) {
    positive(m.kv_lora_rank, "kv_lora_rank");
    positive(m.qk_rope_head_dim, "qk_rope_head_dim");
    positive(m.v_head_dim, "v_head_dim");
    if (m.qk_nope_head_dim < 0) positive(m.qk_nope_head_dim, "qk_nope_head_dim");
    if (m.q_lora_rank < 0) positive(m.q_lora_rank, "q_lora_rank");
    if (m.kv_heads != m.heads)
      throw InputError(who + ": multi-head latent attention has one K and V per head: kv_heads " +
                       std::to_string(m.kv_heads) + " must equal heads " + std::to_string(m.heads));
  }
  // Mixture of experts.
  if (m.experts < 0) positive(m.experts, "experts");
  if (m.experts > 0) {
    if (m.experts_per_token < 1 || m.experts_per_token > m.experts)
      throw InputError(who + ": experts_per_token " + std::to_string(m.experts_per_token) + " is not valid (1.." +
                       std::to_string(m.experts) + ", at most the " + std::to_string(m.experts) + " experts)");
    positive(m.expert_ffn_hidden, "expert_ffn_hidden");
    if (m.shared_experts < 0) positive(m.shared_experts, "shared_experts");
    if (m.shared_expert_ffn_hidden < 0) positive(m.shared_expert_ffn_hidden, "shared_expert_ffn_hidden");
    if (m.expert_groups < 0 || m.expert_groups_per_token < 0 ||
        (m.expert_groups > 0 && (m.experts % m.expert_groups != 0 || m.expert_groups_per_token < 1 ||
                                 m.expert_groups_per_token > m.expert_groups)))
      throw InputError(who + ": expert_groups " + std::to_string(m.expert_groups) + " / expert_groups_per_token " +
                       std::to_string(m.expert_groups_per_token) +
                       " are not valid (groups must divide the experts, 1 ≤ groups per token ≤ groups)");
  } else if (m.experts_per_token != 0 || m.expert_ffn_hidden != 0 || m.shared_experts != 0) {
    throw InputError(who + ": experts_per_token, expert_ffn_hidden and shared_experts need experts > 0");
  }
  if (m.mtp_layers < 0) positive(m.mtp_layers, "mtp_layers");
  if (m.moe_latent != 0) {
    positive(m.moe_latent, "moe_latent_size");
    if (m.experts <= 0) throw InputError(who + ": moe_latent_size needs experts > 0");
  }
  if (!m.pipeline_segments.empty() &&
      m.pipeline_segments.size() > 4 * static_cast<std::size_t>(std::max(m.layers, 0)) + 8)
    throw InputError(who + ": " + std::to_string(m.pipeline_segments.size()) + " pipeline segments ('|') for " +
                     std::to_string(m.layers) + " layers: far too many");
  // A hybrid MTP module's blocks are kinds of the main stack (the step prices them from those layers' costs).
  for (const LayerKind& k : m.mtp_kinds) {
    bool found = false;
    for (int i = 0; i < m.layers && !found; ++i) found = m.layer(i) == k;
    if (!found)
      throw InputError(who + ": an MTP block (" + to_string(k.attention) + " mixer, " + to_string(k.ffn) + " FFN) is of no kind among the model's layers (an MTP "
                             "pattern's blocks must also appear in the main pattern)");
  }
  // Mamba-2 mixers: every size positive; the groups share B and C among whole heads (Mamba2 asserts
  // nheads % ngroups == 0).
  if (m.mamba_heads < 0) positive(m.mamba_heads, "mamba_heads");
  if (m.has_mamba()) {
    positive(m.mamba_head_dim, "mamba_head_dim");
    positive(m.mamba_state, "mamba_state");
    positive(m.mamba_groups, "mamba_groups");
    positive(m.mamba_conv_kernel, "mamba_conv_kernel");
    positive(m.mamba_chunk, "mamba_chunk");
    if (m.mamba_heads % m.mamba_groups != 0)
      throw InputError(who + ": mamba_groups " + std::to_string(m.mamba_groups) + " does not divide mamba_heads " +
                       std::to_string(m.mamba_heads) + " (each group's B and C serve whole heads)");
  }
  // Per-layer kinds agree with the model's fields.
  if (!m.layer_kinds.empty()) {
    if (m.layer_kinds.size() != static_cast<std::size_t>(m.layers))
      throw InputError(who + ": " + std::to_string(m.layer_kinds.size()) + " layer kinds for " +
                       std::to_string(m.layers) + " layers");
    for (std::size_t i = 0; i < m.layer_kinds.size(); ++i) {
      const LayerKind k = m.layer_kinds[i];
      if (k.ffn == FfnKind::MoE && m.experts == 0)
        throw InputError(who + ": layer " + std::to_string(i) + " is a mixture-of-experts layer but the model has no experts");
      if (k.attention == AttentionKind::Mamba && !m.has_mamba())
        throw InputError(who + ": layer " + std::to_string(i) + " is a Mamba layer but the model gives no mamba_heads");
      if (k.blocks() == 0)
        throw InputError(who + ": layer " + std::to_string(i) + " has neither a token mixer nor an FFN");
      if (k.attention == AttentionKind::Sliding && m.sliding_window <= 0)
        throw InputError(who + ": layer " + std::to_string(i) + " uses sliding-window attention but sliding_window is 0");
      if (k.attention == AttentionKind::Chunked && m.attention_chunk <= 0)
        throw InputError(who + ": layer " + std::to_string(i) + " uses chunked attention but attention_chunk is 0");
      if (k.has_attention() && (k.attention == AttentionKind::MLA) != m.mla)
        throw InputError(who + ": layer " + std::to_string(i) + " attention '" + to_string(k.attention) +
                         "' disagrees with the model's attention (" + (m.mla ? "mla" : "gqa") + ")");
    }
  }
  // Keep every exact (int64) parameter count far from overflow: the largest term, each matrix, is below the total.
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn_hidden);
  const double qkvo = h * static_cast<double>(m.d()) * (2.0 * m.heads + 2.0 * m.kv_heads);
  // (In doubles: int64 sums such as vocab + seq_len can overflow on hostile files.)
  const double experts = (static_cast<double>(m.experts) + static_cast<double>(m.shared_experts)) * 3 * h *
                         static_cast<double>(std::max(m.expert_ffn_hidden, m.shared_expert_ffn_hidden));
  // Mamba: in_proj h·(2·H·P + 2·G·N + H), out_proj H·P·h, conv1d (H·P + 2·G·N)·K — in doubles (hostile sizes).
  const double mh = static_cast<double>(m.mamba_heads), mp = static_cast<double>(m.mamba_head_dim);
  const double gn = static_cast<double>(m.mamba_groups) * static_cast<double>(m.mamba_state);
  const double mamba = m.has_mamba() ? h * (2 * mh * mp + 2 * gn + mh) + mh * mp * h +
                                           (mh * mp + 2 * gn) * static_cast<double>(m.mamba_conv_kernel) +
                                           static_cast<double>(m.mamba_chunk)
                                     : 0.0;
  const double approx = m.layers * (qkvo + 3 * h * f + experts + mamba) +
                        2 * (static_cast<double>(m.vocab) + static_cast<double>(m.seq_len)) * h;
  if (approx > 1e15)
    throw InputError(who + ": about " + fmt_num(approx, 3) + " parameters, beyond what parsim models (at most 1e15)");
}

}  // namespace parsim
