// Loading models: presets, parsim JSON, Hugging Face config.json, and every bad-input class.
#include "models/model.hpp"
#include "sim/core/error.hpp"

#include "tests/support/errors.hpp"

#include <doctest/doctest.h>

#include <cctype>
#include <cmath>
#include <string>
#include <utility>

using namespace parsim;

namespace {
const std::string kData = std::string(PARSIM_TEST_DATA) + "/models/";
const std::string kExamples = std::string(PARSIM_TEST_DATA) + "/../../examples/models/";

// The InputError message of resolve_model(arg), or "" when it does not throw.
std::string error_of(const std::string& arg) {
  return parsim::test::error_of([&] { resolve_model(arg); });
}
using parsim::test::contains;
std::string to_upper_ascii(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}
}  // namespace

TEST_CASE("presets: every name resolves, case-insensitively, with its published shape") {
  // The eight names docs/cli.md requires, plus the llama7b alias, and the ten Hugging Face configs of models/presets
  // (next test case).
  const auto names = model_preset_names();
  CHECK(names.size() == 8 + 10);
  for (const auto& n : names) {
    ModelSpec m = resolve_model(n);
    CHECK(m.name == n);
    CHECK_NOTHROW(validate_model(m));
  }
  CHECK(resolve_model("LLaMA2-7B").name == "llama2-7b");
  CHECK(resolve_model("llama7b").name == "llama2-7b");
  // Llama 3.1 8B / 70B / 405B are the Llama 3 shapes (Dubey et al. 2024 Table 3): aliases of the llama3-* presets.
  CHECK(resolve_model("Llama3.1-8B").name == "llama3-8b");
  CHECK(resolve_model("llama3.1-70b").name == "llama3-70b");
  CHECK(resolve_model("llama3.1-405b").name == "llama3-405b");
  CHECK(resolve_model(" Mistral-7B ").name == "mistral-7b");

  // Default sequence lengths: Llama 2 4k (Touvron 2023 Table 1), Llama 3 8k (Dubey 2024 §3.4.1), Mistral 8192
  // (Jiang 2023 Table 1 context_len), GPT-3 2048 (Brown 2020 §2.1).
  CHECK(resolve_model("llama2-70b").seq_len == 4096);
  CHECK(resolve_model("llama3-405b").seq_len == 8192);
  CHECK(resolve_model("mistral-7b").seq_len == 8192);
  const ModelSpec gpt3 = resolve_model("gpt3-175b");
  CHECK(gpt3.seq_len == 2048);
  // GPT-3 175B, Brown 2020 Table 2.1: 96 layers, d_model 12288, 96 heads, d_head = 12288 / 96 = 128; d_ff = 4·12288.
  CHECK(gpt3.layers == 96);
  CHECK(gpt3.hidden == 12288);
  CHECK(gpt3.heads == 96);
  CHECK(gpt3.head_dim == 128);
  CHECK(gpt3.ffn_hidden == 49152);
  CHECK(gpt3.vocab == 50257);
  CHECK(gpt3.position == PositionKind::Learned);
  CHECK(gpt3.norm == NormKind::LayerNorm);
  CHECK(gpt3.activation == FfnActivation::GeLU);
  CHECK(gpt3.tied_embeddings);
  CHECK(gpt3.bias);
  // Llama 2 70B uses GQA with 8 KV heads (HF config num_key_value_heads 8).
  CHECK(resolve_model("llama2-70b").kv_heads == 8);
}

TEST_CASE("presets: the built-in Hugging Face configs (models/presets) are the checked config.json files") {
  // models/presets/<name>.json is compiled in and read by the Hugging Face reader, as `--model <file>` reads the file.
  // Each is the same file as a tests/data/models config whose counts test_families.cpp derives term by term against
  // the published totals; equal counts and shapes here show the built-in copy is that file.
  const std::pair<const char*, const char*> pairs[] = {
      {"mixtral-8x7b", "mixtral-8x7b-v0.1.config.json"},
      {"deepseek-v3", "deepseek-v3.config.json"},
      {"deepseek-v2-lite", "deepseek-v2-lite.config.json"},
      {"qwen3-30b-a3b", "qwen3-30b-a3b.config.json"},
      {"qwen3-8b", "qwen3-8b.config.json"},
      {"qwen3-32b", "qwen3-32b.config.json"},
      {"gpt-oss-120b", "gpt-oss-120b.config.json"},
      {"olmoe-1b-7b", "olmoe-1b-7b-0924.config.json"},
      {"nemotron-3-nano-30b-a3b", "nemotron-3-nano-30b-a3b.config.json"},
      {"nemotron-3-super-120b-a12b", "nemotron-3-super-120b-a12b.config.json"},
  };
  for (const auto& pr : pairs) {
    const char* const name = pr.first;  // (not a structured binding: CAPTURE's lambda may not capture one in C++20)
    const char* const file = pr.second;
    CAPTURE(name);
    const ModelSpec m = resolve_model(name);
    const ModelSpec f = resolve_model(kData + file);
    CHECK(m.name == name);
    CHECK(resolve_model(to_upper_ascii(name)).name == name);  // case-insensitive, as the compiled-in presets
    const ParamCounts a = count_params(m), b = count_params(f);
    CHECK(a.total == b.total);
    CHECK(a.active == b.active);
    CHECK(m.layers == f.layers);
    CHECK(m.hidden == f.hidden);
    CHECK(m.experts == f.experts);
    CHECK(m.seq_len == f.seq_len);
  }
  // Two published figures through the built-in names (derived in test_families.cpp): Mixtral-8x7B 46,702,792,704 total
  // and 12,879,925,248 active (Mistral AI: 46.7B / 12.9B active); GPT-OSS-120b 116.83 B total (OpenAI model card).
  CHECK(count_params(resolve_model("mixtral-8x7b")).total == 46'702'792'704);
  CHECK(count_params(resolve_model("mixtral-8x7b")).active == 12'879'925'248);
  CHECK(std::fabs(static_cast<double>(count_params(resolve_model("gpt-oss-120b")).total) - 116.83e9) <= 0.005e9);
  // Their default sequence: the Hugging Face reader's min(max_position_embeddings, 8192) for RoPE models (model_io.cpp).
  CHECK(resolve_model("mixtral-8x7b").seq_len == 8192);  // max_position_embeddings 32,768
  // An unknown name lists them.
  CHECK(contains(error_of("mixtral-8x22b"), "mixtral-8x7b"));
  CHECK(contains(error_of("mixtral-8x22b"), "qwen3-30b-a3b"));
}

TEST_CASE("presets: exact published parameter counts") {
  // Published totals (HF safetensors metadata / domain-notes §1), recomputed in test_params.cpp term by term.
  CHECK(count_params(resolve_model("llama2-7b")).total == 6'738'415'616);
  CHECK(count_params(resolve_model("llama2-13b")).total == 13'015'864'320);
  CHECK(count_params(resolve_model("llama2-70b")).total == 68'976'648'192);
  CHECK(count_params(resolve_model("llama3-8b")).total == 8'030'261'248);
  CHECK(count_params(resolve_model("llama3-70b")).total == 70'553'706'496);
  CHECK(count_params(resolve_model("llama3-405b")).total == 405'853'388'800);
  CHECK(count_params(resolve_model("mistral-7b")).total == 7'241'732'096);
}

TEST_CASE("Hugging Face config.json: the real Llama-2-7B and Mistral-7B files count exactly") {
  const ModelSpec llama = resolve_model(kData + "llama-2-7b-hf.config.json");
  CHECK(llama.name == "meta-llama/Llama-2-7b-hf");
  // max_position_embeddings 4096 is below the 8192 cap, so it is the default seq_len.
  CHECK(llama.seq_len == 4096);
  CHECK(llama.gated());
  CHECK(llama.norm == NormKind::RMSNorm);
  CHECK(!llama.tied_embeddings);
  // Published Llama-2-7B total (domain-notes §1): 6,738,415,616.
  CHECK(count_params(llama).total == 6'738'415'616);

  const ModelSpec mistral = resolve_model(kData + "mistral-7b-v0.1.config.json");
  CHECK(mistral.kv_heads == 8);
  // max_position_embeddings 32768 is capped to 8192 (the paper's context_len), see model_io.cpp.
  CHECK(mistral.seq_len == 8192);
  // Mistral-7B-v0.1: 32·(4096·4096·2 + 2·4096·1024 + 3·4096·14336 + 2·4096) + 2·32000·4096 + 4096 = 7,241,732,096.
  CHECK(count_params(mistral).total == 7'241'732'096);
  // The file and the preset describe the same model.
  CHECK(count_params(mistral).total == count_params(resolve_model("mistral-7b")).total);
}

TEST_CASE("Hugging Face config.json: Qwen2 (QKV-only biases), Gemma (GeGLU, tied, head_dim), GPT-2") {
  // Qwen2.5-0.5B: h 896, 24 layers, 14 heads / 2 KV heads of 64, f 4864, V 151936, tied.
  // attention 896·896·2 + 2·896·128 + QKV bias (14 + 2·2)·64 = 1,605,632 + 229,376 + 1,152 = 1,836,160;
  // MLP 3·896·4864 = 13,074,432; norms 1,792 → 14,912,384 per layer; ×24 = 357,897,216;
  // + embedding 151936·896 = 136,134,656 + final norm 896 = 494,032,768 (the published total).
  const ModelSpec qwen = resolve_model(kData + "qwen2.5-0.5b.config.json");
  CHECK(qwen.qkv_bias);
  CHECK(!qwen.has_out_bias());
  CHECK(qwen.tied_embeddings);
  CHECK(count_params(qwen).attention_per_layer == 1'836'160);
  CHECK(count_params(qwen).total == 494'032'768);
  // The same model through parsim's schema with "bias": "qkv".
  CHECK(count_params(resolve_model(kData + "qkv_bias.json")).total == 494'032'768);

  // Gemma 7B: h 3072, 28 layers, 16 heads of 256 (explicit head_dim: 16·256 = 4096 ≠ 3072), f 24576, V 256000,
  // tied (Gemma default). Per layer 4·3072·4096 + 3·3072·24576 + 2·3072 = 50,331,648 + 226,492,416 + 6,144 =
  // 276,830,208; ×28 = 7,751,245,824; + 256000·3072 + 3072 = 8,537,680,896 (published total).
  const ModelSpec gemma = resolve_model(kData + "gemma-7b.config.json");
  CHECK(gemma.head_dim == 256);
  CHECK(gemma.gated());
  CHECK(gemma.tied_embeddings);
  CHECK(count_params(gemma).total == 8'537'680'896);

  // Gemma 2 9B: four RMSNorms per layer. Per layer: Q and O 2·3584·4096 = 29,360,128, K and V 2·3584·2048 =
  // 14,680,064, MLP 3·3584·14336 = 154,140,672, norms 4·3584 = 14,336 → 198,195,200; ×42 = 8,324,198,400;
  // + 256000·3584 + 3584 = 9,241,705,984 (published total).
  const ModelSpec gemma2 = resolve_model(kData + "gemma-2-9b.config.json");
  CHECK(gemma2.norm_layers == 4);
  CHECK(count_params(gemma2).total == 9'241'705'984);

  // GPT-2 small: per layer 12h² + 13h = 12·589,824 + 9,984 = 7,087,872 (h 768); ×12 = 85,054,464;
  // + (50257 + 1024)·768 = 39,383,808 + final LayerNorm 1,536 = 124,439,808 (published total).
  const ModelSpec gpt2 = resolve_model(kData + "gpt2.config.json");
  CHECK(gpt2.position == PositionKind::Learned);
  CHECK(gpt2.seq_len == 1024);  // n_positions, not capped (learned table)
  CHECK(gpt2.activation == FfnActivation::GeLU);
  CHECK(gpt2.dropout);
  CHECK(count_params(gpt2).total == 124'439'808);
}

TEST_CASE("parsim model JSON: optional keys and their defaults") {
  // kv_heads left out: defaults to heads (multi-head attention).
  const ModelSpec tiny = resolve_model(kData + "mha_default_kv.json");
  CHECK(tiny.kv_heads == tiny.heads);
  CHECK(tiny.head_dim == 256 / 4);
  CHECK(tiny.bias);
  CHECK(tiny.dropout);
  CHECK(tiny.norm == NormKind::LayerNorm);
  // head_dim given: heads need not divide hidden (24 heads of 128 on hidden 4096).
  const ModelSpec wide = resolve_model(kData + "explicit_head_dim.json");
  CHECK(wide.head_dim == 128);
  CHECK(wide.heads == 24);
}

TEST_CASE("examples/models parse and count as their README says") {
  // Llama 3.2 1B: per layer 2·2048·2048 + 2·2048·512 + 3·2048·8192 + 2·2048 = 60,821,504; ×16 = 973,144,064;
  // + tied 128256·2048 = 262,668,288 + 2048 = 1,235,814,400.
  CHECK(count_params(resolve_model(kExamples + "llama3.2-1b.json")).total == 1'235'814'400);
  // GPT-2 medium: 24·(12·1024² + 13·1024) = 302,309,376; + (50257 + 1024)·1024 + 2·1024 = 354,823,168.
  CHECK(count_params(resolve_model(kExamples + "gpt2-medium.config.json")).total == 354'823'168);
  // The hybrid example has Nemotron 3 Nano's shape: the counts test_hybrid derives from its config.json.
  const ParamCounts hybrid = count_params(resolve_model(kExamples + "hybrid-mamba2-moe.json"));
  CHECK(hybrid.total == 31'577'937'344);
  CHECK(hybrid.active == 3'580'073'408);
}

TEST_CASE("bad input: every class is one InputError line naming the value") {
  std::string e;
  // Unknown preset name: lists the valid names.
  e = error_of("llama9b");
  CHECK(contains(e, "unknown model 'llama9b'"));
  CHECK(contains(e, "llama2-7b (alias llama7b)"));
  CHECK(contains(e, "gpt3-175b"));
  // File does not exist.
  e = error_of(kData + "does_not_exist.json");
  CHECK(contains(e, "does_not_exist.json"));
  CHECK(contains(e, "does not exist"));
  // Not JSON / truncated.
  CHECK(contains(error_of(kData + "bad/not_json.json"), "not valid JSON"));
  CHECK(contains(error_of(kData + "bad/truncated.json"), "truncated"));
  // A JSON value that is not an object, and an object of neither format.
  CHECK(contains(error_of(kData + "bad/array.json"), "must hold a JSON object"));
  CHECK(contains(error_of(kData + "bad/neither.json"), "neither a parsim model"));
  // Unknown key (a typo never becomes a default).
  CHECK(contains(error_of(kData + "bad/unknown_key.json"), "unknown key 'ffn_hiden'"));
  // Missing key.
  CHECK(contains(error_of(kData + "bad/missing_key.json"), "missing required key 'hidden'"));
  // Zero and negative sizes.
  CHECK(contains(error_of(kData + "bad/zero_layers.json"), "layers must be a positive integer, got 0"));
  CHECK(contains(error_of(kData + "bad/negative_hidden.json"), "hidden must be a positive integer, got -4096"));
  // heads not dividing hidden without head_dim: 4096 / 24 is not an integer.
  CHECK(contains(error_of(kData + "bad/heads_not_dividing.json"), "heads 24 does not divide hidden 4096"));
  // kv_heads not dividing heads: 32 / 6 is not an integer.
  CHECK(contains(error_of(kData + "bad/kv_not_dividing.json"), "kv_heads 6 does not divide heads 32"));
  CHECK(contains(error_of(kData + "bad/bad_activation.json"), "activation 'tanh' is not valid"));
  // Hugging Face: a key that could change the model (MoE) is not silently ignored; unsupported families name
  // the supported ones.
  CHECK(contains(error_of(kData + "bad/hf_moe_key.json"), "unknown key 'num_experts_per_tok'"));
  e = error_of(kData + "bad/hf_unsupported_type.json");
  CHECK(contains(e, "model_type 'bert' is not supported"));
  CHECK(contains(e, "llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, gemma3_text, phi3, "
                    "olmo2, olmoe, deepseek_v2, deepseek_v3, kimi_k2, glm4_moe, gpt_oss, llama4_text, gpt2, falcon, "
                    "gpt_neox"));
  // Every message is one line.
  for (const char* f : {"bad/truncated.json", "bad/unknown_key.json", "bad/kv_not_dividing.json"})
    CHECK(error_of(kData + f).find('\n') == std::string::npos);
}

TEST_CASE("validate_model on hand-built specs") {
  ModelSpec m = resolve_model("llama2-7b");
  CHECK_NOTHROW(validate_model(m));
  ModelSpec bad = m;
  bad.heads = 0;
  CHECK_THROWS_AS(validate_model(bad), InputError);
  bad = m;
  bad.vocab = -1;
  CHECK_THROWS_AS(validate_model(bad), InputError);
  bad = m;
  bad.seq_len = 0;
  CHECK_THROWS_AS(validate_model(bad), InputError);
  // An explicit head_dim lifts the divisibility rule: 4096 is not a multiple of 24, but 24 heads of 128 are fine.
  bad = m;
  bad.heads = 24;
  bad.kv_heads = 8;
  bad.head_dim = 0;
  CHECK_THROWS_AS(validate_model(bad), InputError);
  bad.head_dim = 128;
  CHECK_NOTHROW(validate_model(bad));
  // Absurd sizes are refused before any int64 count could overflow: 1e6 layers of hidden 1e6 ≈ 1.2e19 parameters.
  bad = m;
  bad.layers = 1'000'000;
  bad.hidden = 1'000'000;
  bad.heads = 1000;
  bad.kv_heads = 1000;
  bad.head_dim = 1000;
  CHECK_THROWS_AS(validate_model(bad), InputError);
}
