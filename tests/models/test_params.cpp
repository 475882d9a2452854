// Parameter counts (domain-notes §1), Megatron vocabulary padding and per-TP-rank counts.
#include "models/model.hpp"
#include "sim/core/error.hpp"

#include <doctest/doctest.h>

using namespace parsim;

TEST_CASE("count_params: Llama-2-7B term by term (domain-notes §1)") {
  const ParamCounts c = count_params(resolve_model("llama2-7b"));
  // Attention: Q, K, V, O each 4096·4096 (a = g = 32, d = 128) = 4·16,777,216 = 67,108,864.
  CHECK(c.attention_per_layer == 67'108'864);
  // SwiGLU MLP: 3·4096·11008 = 135,266,304.
  CHECK(c.mlp_per_layer == 135'266'304);
  // Two RMSNorms: 2·4096 = 8,192.
  CHECK(c.norms_per_layer == 8'192);
  CHECK(c.per_layer == 202'383'360);
  // Untied: embedding and LM head 32000·4096 = 131,072,000 each; final RMSNorm 4096; no position table.
  CHECK(c.embedding == 131'072'000);
  CHECK(c.lm_head == 131'072'000);
  CHECK(c.positions == 0);
  CHECK(c.final_norm == 4'096);
  // 32·202,383,360 + 2·131,072,000 + 4,096 = 6,738,415,616.
  CHECK(c.total == 6'738'415'616);
}

TEST_CASE("count_params: GQA presets (Llama 3 8B, 405B; Mistral 7B)") {
  // Llama 3 8B: per layer 2·4096² + 2·4096·1024 + 3·4096·14336 + 2·4096 = 33,554,432 + 8,388,608 + 176,160,768 +
  // 8,192 = 218,112,000; ×32 = 6,979,584,000; + 2·128256·4096 = 1,050,673,152 + 4096 → 8,030,261,248.
  const ParamCounts l3 = count_params(resolve_model("llama3-8b"));
  CHECK(l3.per_layer == 218'112'000);
  CHECK(l3.total == 8'030'261'248);
  // Llama 3 405B: per layer 2·16384² + 2·16384·1024 + 3·16384·53248 + 2·16384 = 3,187,703,808; ×126 =
  // 401,650,679,808; + 2·128256·16384 = 4,202,692,608 + 16384 → 405,853,388,800.
  const ParamCounts l405 = count_params(resolve_model("llama3-405b"));
  CHECK(l405.per_layer == 3'187'703'808);
  CHECK(l405.total == 405'853'388'800);
  // Mistral 7B: Llama 3 8B's layer with V = 32000: 6,979,584,000 + 2·32000·4096 + 4096 = 7,241,732,096.
  CHECK(count_params(resolve_model("mistral-7b")).total == 7'241'732'096);
}

TEST_CASE("count_params: GPT-style equals Narayanan 2021 Eq. 2 plus the final LayerNorm") {
  // Narayanan et al. 2021 Eq. 2: P = 12·L·h²·(1 + 13/(12h) + (V + s)/(12·L·h)) = L·(12h² + 13h) + (V + s)·h for a
  // tied, biased, LayerNorm, learned-position GPT with f = 4h. The equation leaves out the final LayerNorm (2h).
  const ModelSpec g = resolve_model("gpt3-175b");
  const std::int64_t L = 96, h = 12288, V = 50257, s = 2048;
  const std::int64_t eq2 = L * (12 * h * h + 13 * h) + (V + s) * h;
  // = 96·(1,811,939,328 + 159,744) + 52,305·12,288 = 173,961,510,912 + 642,723,840 = 174,604,234,752.
  CHECK(eq2 == 174'604'234'752);
  CHECK(count_params(g).total == eq2 + 2 * h);
  // Per layer 12h² + 13h: QKV 3h² + 3h, O h² + h, MLP 8h² + 5h, two LayerNorms 4h.
  CHECK(count_params(g).per_layer == 12 * h * h + 13 * h);
  CHECK(count_params(g).lm_head == 0);  // tied: the embedding matrix counts once
}

TEST_CASE("padded_vocab: Megatron pads to a multiple of 128·tp (vocab_utils.py)") {
  // 32000 at tp 1: multiple of 128 → 250·128 = 32000 exactly, no padding.
  CHECK(padded_vocab(32000, 1) == 32000);
  // tp 4: multiple 512; 32000 / 512 = 62.5 → 63·512 = 32256 (domain-notes §1).
  CHECK(padded_vocab(32000, 4) == 32256);
  // tp 8: multiple 1024; 31.25 → 32·1024 = 32768.
  CHECK(padded_vocab(32000, 8) == 32768);
  // GPT-2's 50257 at tp 1: ⌈50257/128⌉ = 393 → 50304 (the familiar padded GPT-2 vocabulary).
  CHECK(padded_vocab(50257, 1) == 50304);
  // Llama 3's 128256 = 1002·128 needs no padding at tp 1 and tp 2 (multiple 256: 501·256).
  CHECK(padded_vocab(128256, 2) == 128256);
  CHECK(padded_vocab(100, 1, 64) == 128);
  CHECK_THROWS_AS(padded_vocab(32000, 0), InputError);
}

TEST_CASE("per-TP-rank parameters") {
  const ModelSpec m = resolve_model("llama2-7b");
  // tp 1 holds the whole layer.
  CHECK(layer_params_per_tp_rank(m, 1) == doctest::Approx(202'383'360.0));
  // tp 8: all matrices ÷8, the two RMSNorms (8,192) replicated: (202,383,360 − 8,192)/8 + 8,192 = 25,305,088.
  CHECK(layer_params_per_tp_rank(m, 8) == doctest::Approx(25'305'088.0));
  // Embedding at tp 8: padded V 32768 / 8 = 4096 rows · 4096 = 16,777,216; LM head adds the final norm 4096.
  CHECK(embedding_params_per_tp_rank(m, 8) == doctest::Approx(16'777'216.0));
  CHECK(lm_head_params_per_tp_rank(m, 8) == doctest::Approx(16'781'312.0));

  // Llama 3 70B (g = 8) at tp 16 > g: each rank keeps one K and one V head of 128 (replicated), i.e. K and V
  // 2·8192·128 = 2,097,152, Q and O 2·8192·(64/16)·128 = 8,388,608, MLP 3·8192·28672/16 = 44,040,192, norms 16,384.
  const ModelSpec l70 = resolve_model("llama3-70b");
  CHECK(layer_params_per_tp_rank(l70, 16) == doctest::Approx(2'097'152.0 + 8'388'608.0 + 44'040'192.0 + 16'384.0));
  // So the 16 ranks together hold more than one copy of the layer (the KV replication), never less.
  CHECK(16 * layer_params_per_tp_rank(l70, 16) > static_cast<double>(count_params(l70).per_layer));

  // GPT-style biases: column-parallel biases split, row-parallel biases (O, FFN-out: h each) replicated.
  // GPT-3 layer at tp 8: (12h² + 13h − 2h − 4h)/8 + 2h + 4h with h = 12288 (4h = the two LayerNorms).
  const ModelSpec g = resolve_model("gpt3-175b");
  const double h = 12288;
  CHECK(layer_params_per_tp_rank(g, 8) == doctest::Approx((12 * h * h + 13 * h - 6 * h) / 8 + 6 * h));
  // Learned positions are replicated: GPT-3 embedding at tp 8 = padded 51200/8 rows (⌈50257/1024⌉·1024 = 51200)
  // plus the whole 2048-row position table.
  CHECK(embedding_params_per_tp_rank(g, 8) == doctest::Approx((51200.0 / 8 + 2048) * h));
}
