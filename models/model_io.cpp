// parsim models/ — where a ModelSpec comes from: built-in presets, parsim's model JSON, Hugging Face config.json.
//
// Policies (also summarised next to resolve_model in model.hpp):
// * Presets are compiled in; names are case-insensitive; each cites the published shape it copies.
// * parsim JSON (schema in docs/cli.md): every key is checked, unknown keys are errors. `kv_heads` is OPTIONAL and
//   defaults to `heads` (plain multi-head attention, as in the original Transformer / GPT). Two optional extensions:
//   `"bias": "qkv"` (biases on the QKV projection only, as Qwen2) besides true/false, and `"dropout": true|false`
//   (default false; only activation memory depends on it).
// * Hugging Face config.json is recognised by its keys (`model_type`, `architectures`, `num_hidden_layers` or
//   `n_layer`). Supported families: llama, mistral, qwen2, gemma, gemma2 (gated FFN, RMSNorm, RoPE) and gpt2 (plain
//   FFN, LayerNorm, learned positions, biases, tied). Keys fall in three groups: shape keys, which are read; keys
//   that do not change shapes or FLOPs (token ids, dtype, eps, RoPE base/scaling, sliding-window and soft-capping
//   knobs, bookkeeping), which are accepted and ignored (kHfHarmless below); everything else — notably MoE keys such
//   as `num_local_experts` — is an error, because silently ignoring it could change the model's size.
//   `max_position_embeddings` is the inference context limit, often after long-context extension (Llama 3.1: 131,072
//   against 8,192 in pre-training, Dubey et al. 2024 §3.4; Mistral 7B: 32,768 against context_len 8,192, Jiang et
//   al. 2023 Table 1), so for RoPE models seq_len = min(max_position_embeddings, 8192); `--seq` overrides it. Learned
//   position tables (GPT-2) are not capped: n_positions is both the table size and the trained length.
#include "models/model.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_strict.hpp"
#include "sim/core/text.hpp"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <set>

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
    // Dubey et al. 2024, Table 3; pre-training sequences of 8,192 tokens (§3.4.1).
    {"llama3-8b", nullptr, [] { return gated_rope("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192); }},
    {"llama3-70b", nullptr, [] { return gated_rope("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192); }},
    {"llama3-405b", nullptr, [] { return gated_rope("llama3-405b", 126, 16384, 128, 8, 53248, 128256, 8192); }},
    // Mistral 7B — HF mistralai/Mistral-7B-v0.1 config.json; context_len 8192 (Jiang et al. 2023, Table 1; the
    // 4096-token sliding window is not modelled: attention is counted as full causal).
    {"mistral-7b", nullptr, [] { return gated_rope("mistral-7b", 32, 4096, 32, 8, 14336, 32000, 8192); }},
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

// ---- parsim's own schema ----
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
  else throw InputError(ctx + ": position '" + pos + "' is not valid (choose rope, learned or alibi)");
  m.dropout = o.opt_bool("dropout", false);
  o.finish();
  return m;
}

// ---- Hugging Face config.json ----
// Accepted and ignored: these keys change neither weight shapes nor the FLOPs parsim counts.
const std::set<std::string> kHfHarmless = {
    // bookkeeping and tokenizer ids
    "_name_or_path", "architectures", "transformers_version", "torch_dtype", "dtype", "bos_token_id", "eos_token_id",
    "pad_token_id", "use_cache", "cache_implementation", "initializer_range", "tokenizer_class",
    // norm epsilons (the norm kind itself follows from the family)
    "rms_norm_eps", "layer_norm_epsilon", "layer_norm_eps",
    // RoPE frequency base and context-extension scaling: no parameters, same FLOPs
    "rope_theta", "rope_scaling", "rope_parameters", "use_mrope",
    // attention variants parsim does not model (attention is counted as full causal; soft-capping is elementwise)
    "sliding_window", "sliding_window_size", "use_sliding_window", "max_window_layers", "attn_logit_softcapping",
    "final_logit_softcapping", "query_pre_attn_scalar",
    // Llama: TP degree used by Meta's pre-training (shapes unchanged)
    "pretraining_tp",
    // GPT-2: n_ctx duplicates n_positions; attention scaling flags; sequence-summary head used only by GPT2DoubleHeads
    "n_ctx", "scale_attn_weights", "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn", "summary_activation",
    "summary_first_dropout", "summary_proj_to_labels", "summary_type", "summary_use_proj", "task_specific_params",
    "output_past", "n_special", "predict_special_tokens"};

enum class HfFamily { Llama, Mistral, Qwen2, Gemma, Gemma2, Gpt2 };

struct HfKind {
  const char* model_type;
  const char* architecture;
  HfFamily family;
  std::int64_t default_max_positions;  // the HF config class's default for max_position_embeddings / n_positions
};
const HfKind kHfKinds[] = {
    {"llama", "LlamaForCausalLM", HfFamily::Llama, 2048},        // LlamaConfig
    {"mistral", "MistralForCausalLM", HfFamily::Mistral, 131072}, // MistralConfig: 4096 * 32
    {"qwen2", "Qwen2ForCausalLM", HfFamily::Qwen2, 32768},        // Qwen2Config
    {"gemma", "GemmaForCausalLM", HfFamily::Gemma, 8192},         // GemmaConfig
    {"gemma2", "Gemma2ForCausalLM", HfFamily::Gemma2, 8192},      // Gemma2Config
    {"gpt2", "GPT2LMHeadModel", HfFamily::Gpt2, 1024},            // GPT2Config
};

std::string hf_supported() {
  std::string out;
  for (const auto& k : kHfKinds) out += (out.empty() ? "" : ", ") + std::string(k.model_type);
  return out;
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
  for (const auto& k : kHfKinds) {
    if (!type.empty() ? type == k.model_type : arch == k.architecture) return k;
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

std::string hf_name(StrictObject& o, const std::string& path) {
  std::string name = o.opt_str("_name_or_path", "");
  if (!name.empty()) return name;
  const std::filesystem::path p(path);
  if (p.filename() == "config.json" && p.has_parent_path() && !p.parent_path().filename().empty())
    return utf8_sanitize(p.parent_path().filename().string());  // a path may hold any bytes; the name goes to JSON
  return utf8_sanitize(p.stem().string());
}

ModelSpec parse_hf(const nlohmann::json& j, const std::string& path, const std::string& ctx) {
  StrictObject o(j, ctx);
  const HfKind& kind = hf_kind(j, o);
  ModelSpec m;
  m.name = hf_name(o, path);
  if (kind.family == HfFamily::Gpt2) {
    // transformers GPT2Config / modeling_gpt2.py: Conv1D layers with biases, LayerNorm, learned positions, tied head.
    m.layers = narrow_int(o.req_int("n_layer"), ctx, "n_layer");
    m.hidden = o.req_int("n_embd");
    m.heads = narrow_int(o.req_int("n_head"), ctx, "n_head");
    m.kv_heads = m.heads;
    m.ffn_hidden = o.opt_int("n_inner", m.hidden > INT64_MAX / 4 ? INT64_MAX : 4 * m.hidden);  // null or absent: 4·n_embd
    m.vocab = o.req_int("vocab_size");
    m.seq_len = o.opt_int("n_positions", kind.default_max_positions);
    const std::string act = to_lower(o.opt_str("activation_function", "gelu_new"));
    if (act == "relu2") m.activation = FfnActivation::ReLU2;
    else if (act.rfind("gelu", 0) == 0) m.activation = FfnActivation::GeLU;
    else throw InputError(ctx + ": activation_function '" + act + "' is not supported (gelu, gelu_new, relu2)");
    m.tied_embeddings = o.opt_bool("tie_word_embeddings", true);
    m.bias = true;
    m.norm = NormKind::LayerNorm;
    m.position = PositionKind::Learned;
    // GPT2Config defaults: 0.1 for all three dropouts.
    const double resid = o.opt_num("resid_pdrop", 0.1), attn = o.opt_num("attn_pdrop", 0.1);
    const double embd = o.opt_num("embd_pdrop", 0.1);
    m.dropout = resid > 0 || attn > 0 || embd > 0;
  } else {
    // transformers Llama/Mistral/Qwen2/Gemma(2) configs and modeling files: gated MLP (gate/up/down), RMSNorm, RoPE.
    m.layers = narrow_int(o.req_int("num_hidden_layers"), ctx, "num_hidden_layers");
    m.hidden = o.req_int("hidden_size");
    m.heads = narrow_int(o.req_int("num_attention_heads"), ctx, "num_attention_heads");
    m.kv_heads = narrow_int(o.opt_int("num_key_value_heads", m.heads), ctx, "num_key_value_heads");
    m.ffn_hidden = o.req_int("intermediate_size");
    m.vocab = o.req_int("vocab_size");
    if (o.has("head_dim")) {
      m.head_dim = o.req_int("head_dim");
      if (m.head_dim <= 0) throw InputError(ctx + ": head_dim must be a positive integer, got " + std::to_string(m.head_dim));
    }
    o.ignore("head_dim");
    m.seq_len = std::min(o.opt_int("max_position_embeddings", kind.default_max_positions), kHfSeqLenCap);
    const bool gemma = kind.family == HfFamily::Gemma || kind.family == HfFamily::Gemma2;
    std::string act = o.opt_str("hidden_act", gemma ? "gelu_pytorch_tanh" : "silu");
    if (o.has("hidden_activation")) act = o.req_str("hidden_activation");  // Gemma: overrides hidden_act
    o.ignore("hidden_activation");
    m.activation = hf_gated_activation(act, ctx);
    m.tied_embeddings = o.opt_bool("tie_word_embeddings", gemma);  // HF default: tied for Gemma, untied otherwise
    // attention_bias: q, k, v and o projections; mlp_bias: gate, up, down (LlamaAttention / LlamaMLP).
    const bool attention_bias = o.opt_bool("attention_bias", false);
    m.qkv_bias = attention_bias || kind.family == HfFamily::Qwen2;  // Qwen2Attention: q/k/v bias=True, o bias=False
    m.out_bias = attention_bias;
    m.ffn_bias = o.opt_bool("mlp_bias", false);
    m.dropout = o.opt_num("attention_dropout", 0.0) > 0;
    m.norm = NormKind::RMSNorm;
    m.position = PositionKind::RoPE;
    m.norm_layers = kind.family == HfFamily::Gemma2 ? 4 : 2;  // Gemma2DecoderLayer: pre/post attention + pre/post FFN
  }
  o.finish(kHfHarmless);
  if (m.head_dim == 0 && m.heads > 0 && m.hidden % m.heads == 0) m.head_dim = m.hidden / m.heads;
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
  // A parsim JSON without head_dim: heads must divide hidden (checked by validate_model before resolving).
  try {
    validate_model(m);
  } catch (const InputError& e) {
    throw InputError(ctx + ": " + e.what());
  }
  if (m.head_dim == 0) m.head_dim = m.hidden / m.heads;
  return m;
}

}  // namespace

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const auto& p : kPresets) names.emplace_back(p.name);
  return names;
}

ModelSpec resolve_model(const std::string& name_or_path) {
  const std::string key = to_lower(trim(name_or_path));
  for (const auto& p : kPresets) {
    if (key == p.name || (p.alias && key == p.alias)) return p.make();
  }
  if (looks_like_path(name_or_path)) return load_model_file(name_or_path);
  throw InputError("unknown model '" + name_or_path + "' (built-in models: " + preset_list() +
                   "; or give a path to a parsim model JSON or a Hugging Face config.json)");
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
  // Keep every exact (int64) parameter count far from overflow: the largest term, each matrix, is below the total.
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn_hidden);
  const double qkvo = h * static_cast<double>(m.d()) * (2.0 * m.heads + 2.0 * m.kv_heads);
  const double approx = m.layers * (qkvo + 3 * h * f) + 2 * (static_cast<double>(m.vocab) + static_cast<double>(m.seq_len)) * h;
  if (approx > 1e15)
    throw InputError(who + ": about " + fmt_num(approx, 3) + " parameters, beyond what parsim models (at most 1e15)");
}

}  // namespace parsim
