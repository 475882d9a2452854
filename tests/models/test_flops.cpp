// FLOP conventions (domain-notes §2) and the per-rank GEMM / attention shapes of one layer.
#include "models/model.hpp"
#include "sim/core/error.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace parsim;

TEST_CASE("model_flops: Llama-2-7B at s = 4096 is 46.08 GFLOP/token (Megatron <= v0.11)") {
  // Megatron num_floating_point_operations: 12·L·h²·[(1 + g/a + s/h)(a·d/h) + (f/h)·1.5 + V/(2Lh)] per token.
  // L 32, h 4096: 12·32·4096² = 6,442,450,944; bracket (1 + 1 + 1)·1 + 2.6875·1.5 + 32000/262144 = 7.1533203125;
  // product 46,084,915,200 FLOP/token (domain-notes §2: 46.08 GFLOP).
  const ModelSpec m = resolve_model("llama2-7b");
  CHECK(model_flops(m, 1, 4096) / 4096 == doctest::Approx(46'084'915'200.0).epsilon(1e-12));
  // Linear in the number of sequences.
  CHECK(model_flops(m, 8, 4096) == doctest::Approx(8 * model_flops(m, 1, 4096)).epsilon(1e-12));
}

TEST_CASE("layer_forward_flops: the per-token terms of domain-notes §2") {
  const ModelSpec m = resolve_model("llama2-70b");  // h 8192, a 64, g 8, d 128, f 28672
  const double T = 2.0 * 4096, h = 8192, s = 4096;
  const LayerFlops f = layer_forward_flops(m, 2, 4096);
  CHECK(f.qkv == doctest::Approx(2 * T * h * (64 + 2 * 8) * 128));  // 2h(a+2g)d per token
  CHECK(f.scores == doctest::Approx(2 * T * 64 * 128 * s));         // 2·a·d·s per token
  CHECK(f.attn_v == doctest::Approx(f.scores));
  CHECK(f.out_proj == doctest::Approx(2 * T * 64 * 128 * h));  // 2adh per token
  CHECK(f.ffn == doctest::Approx(6 * T * h * 28672));          // gated 6hf
  // Plain FFN: 4hf (GPT-3, f = 4h → 16h² per token).
  const ModelSpec g = resolve_model("gpt3-175b");
  CHECK(layer_forward_flops(g, 1, 2048).ffn == doctest::Approx(16.0 * 2048 * 12288.0 * 12288.0));
  // LM head: 2·h·V per token, real vocabulary.
  CHECK(lm_head_forward_flops(m, 2, 4096) == doctest::Approx(2 * T * h * 32000));
}

TEST_CASE("GPT-3 175B against Narayanan et al. SC'21 Eq. 3 (with and without full recompute)") {
  // Eq. 3 (full recompute): F = 96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h)); without recompute the same derivation
  // gives 72·B·s·L·h²·(1 + s/(6h) + V/(12·L·h)) (domain-notes §2). Assumes a·d = h, a = g, f = 4h — GPT-3.
  const ModelSpec m = resolve_model("gpt3-175b");
  const double B = 1536, s = 2048, L = 96, h = 12288, V = 50257;
  const double model = 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
  const double full = 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
  CHECK(model_flops(m, 1536, 2048) == doctest::Approx(model).epsilon(1e-12));
  CHECK(hardware_flops(m, 1536, 2048, Recompute::None) == doctest::Approx(model).epsilon(1e-12));
  CHECK(hardware_flops(m, 1536, 2048, Recompute::Full) == doctest::Approx(full).epsilon(1e-12));
  // Selective reruns QKᵀ and AV once: + L·4·B·s²·h (two 2·B·s²·h GEMMs per layer).
  CHECK(hardware_flops(m, 1536, 2048, Recompute::Selective) ==
        doctest::Approx(model + L * 4 * B * s * s * h).epsilon(1e-12));
  // Ordering: model = none < selective < full.
  CHECK(hardware_flops(m, 1, 2048, Recompute::Selective) < hardware_flops(m, 1, 2048, Recompute::Full));
}

TEST_CASE("AttentionShape::forward_flops: FlashAttention's benchmark count") {
  // 4·b·s_q·s_kv·heads·d = 4·2·1024·1024·4·128 = 4,294,967,296; causal halves it.
  AttentionShape a{2, 4, 1024, 1024, 128, false};
  CHECK(a.forward_flops() == doctest::Approx(4'294'967'296.0));
  a.causal = true;
  CHECK(a.forward_flops() == doctest::Approx(2'147'483'648.0));
}

TEST_CASE("layer_work: per-rank GEMM shapes (Llama-2-70B, tp 8, cp 2)") {
  const ModelSpec m = resolve_model("llama2-70b");  // h 8192, a 64, g 8, d 128, f 28672
  const LayerWork w = layer_work(m, 1, 4096, 8, 2, false, Precision::BF16);
  REQUIRE(w.gemms.size() == 4);
  // Tokens per rank m = b·s/c = 4096/2 = 2048.
  // qkv: n = (a/t + 2·g/t)·d = (8 + 2)·128 = 1280, k = h.
  CHECK(std::string(w.gemms[0].name) == "qkv");
  CHECK(w.gemms[0].m == 2048);
  CHECK(w.gemms[0].n == 1280);
  CHECK(w.gemms[0].k == 8192);
  // out_proj: n = h, k = a·d/t = 1024.
  CHECK(std::string(w.gemms[1].name) == "out_proj");
  CHECK(w.gemms[1].n == 8192);
  CHECK(w.gemms[1].k == 1024);
  // ffn_in: gate and up fused, n = 2f/t = 7168; ffn_out: k = f/t = 3584.
  CHECK(std::string(w.gemms[2].name) == "ffn_in");
  CHECK(w.gemms[2].n == 7168);
  CHECK(std::string(w.gemms[3].name) == "ffn_out");
  CHECK(w.gemms[3].k == 3584);
  // Attention: heads a/t = 8, local queries s/c = 2048 against all 4096 keys, causal.
  CHECK(w.attention.heads == 8);
  CHECK(w.attention.seq_q == 2048);
  CHECK(w.attention.seq_kv == 4096);
  CHECK(w.attention.head_dim == 128);
  CHECK(w.attention.causal);

  // Summed over the t·c = 16 ranks, the GEMMs are exactly the layer's QKV + O + FFN forward FLOPs, and the attention
  // core is half of the full-s² scores + AV count (causal).
  const LayerFlops f = layer_forward_flops(m, 1, 4096);
  double gemm = 0;
  for (const auto& g : w.gemms) gemm += g.flops();
  CHECK(16 * gemm == doctest::Approx(f.qkv + f.out_proj + f.ffn).epsilon(1e-12));
  CHECK(16 * w.attention.forward_flops() == doctest::Approx(0.5 * (f.scores + f.attn_v)).epsilon(1e-12));
}

TEST_CASE("layer_work: KV heads are replicated when tp > kv_heads") {
  // Llama-2-70B at tp 16: g/t = 0.5 → each rank computes one K and one V head: n = (64/16 + 2·1)·128 = 768.
  const LayerWork w = layer_work(resolve_model("llama2-70b"), 1, 4096, 16, 1, true, Precision::BF16);
  CHECK(w.gemms[0].n == 768);
  CHECK(w.attention.heads == 4);
}

TEST_CASE("lm_head_gemm uses the padded vocabulary split over tp") {
  // Llama-2-7B, tp 4: padded V = 32256 (multiple of 512) → 8064 columns per rank; m = b·s/c = 2·4096/2.
  const GemmShape g = lm_head_gemm(resolve_model("llama2-7b"), 2, 4096, 4, 2);
  CHECK(g.m == 4096);
  CHECK(g.n == 8064);
  CHECK(g.k == 4096);
}

TEST_CASE("layer_work: elementwise HBM bytes (documented estimate in flops.cpp)") {
  const ModelSpec m = resolve_model("llama2-7b");  // h 4096, a = g = 32, d 128, f 11008, RoPE, no dropout
  // tp 1, bf16 (e = 2), 4096 tokens. Per token: norms 2·2h·e + residual adds 6h·e = 10·4096·2 = 81,920;
  // SwiGLU 3f·e = 66,048; rotary 2·(a + g)·d·e = 2·64·128·2 = 32,768 → 180,736 B/token; ×4096 = 740,294,656.
  CHECK(layer_work(m, 1, 4096, 1, 1, false, Precision::BF16).elementwise_bytes_fwd == doctest::Approx(740'294'656.0));
  // tp 8 without SP: hidden-sized part replicated (81,920), shards 3·(f/8)·e = 8,256 and rotary 2·8·128·2 = 4,096.
  CHECK(layer_work(m, 1, 4096, 8, 1, false, Precision::BF16).elementwise_bytes_fwd ==
        doctest::Approx(4096.0 * (81'920 + 8'256 + 4'096)));
  // tp 8 with SP: the hidden-sized part runs on 1/8 of the tokens: 81,920/8 = 10,240.
  CHECK(layer_work(m, 1, 4096, 8, 1, true, Precision::BF16).elementwise_bytes_fwd ==
        doctest::Approx(4096.0 * (10'240 + 8'256 + 4'096)));
  // fp32 activations double every byte.
  CHECK(layer_work(m, 1, 4096, 1, 1, false, Precision::FP32).elementwise_bytes_fwd ==
        doctest::Approx(2 * 740'294'656.0));
  // GPT-3 (learned positions, dropout): no rotary, plus two 1-byte hidden dropout masks (2h per token).
  const ModelSpec g = resolve_model("gpt3-175b");
  const double h = 12288;
  CHECK(layer_work(g, 1, 2048, 1, 1, false, Precision::BF16).elementwise_bytes_fwd ==
        doctest::Approx(2048.0 * (10 * h * 2 + 2 * h + 2 * (4 * h) * 2)));
}

TEST_CASE("layer_work: bad degrees are InputErrors") {
  const ModelSpec m = resolve_model("llama2-7b");
  CHECK_THROWS_AS(layer_work(m, 1, 4096, 0, 1, false, Precision::BF16), InputError);
  CHECK_THROWS_AS(layer_work(m, 1, 4095, 1, 2, false, Precision::BF16), InputError);  // s not divisible by cp
  CHECK_THROWS_AS(lm_head_gemm(m, 0, 4096, 1, 1), InputError);
}

TEST_CASE("torchtitan's per-op checkpointing recomputes wk, wo and w3") {
  // Llama 3 8B, per token and layer: wk 2·h·kv·d = 2·4096·1024, wo 2·(a·d)·h = 2·4096², w3 2·h·f = 2·4096·14,336
  // = 8,388,608 + 33,554,432 + 117,440,512 = 159,383,552 FLOPs of recomputed forward, × 32 layers × tokens.
  const ModelSpec m = resolve_model("llama3-8b");
  const double tokens = 2 * 8192.0, per_layer = 2.0 * 4096 * 1024 + 2.0 * 4096 * 4096 + 2.0 * 4096 * 14336;
  CHECK(per_layer == 159383552.0);
  CHECK(hardware_flops(m, 2, 8192, Recompute::Op) - hardware_flops(m, 2, 8192, Recompute::None) ==
        doctest::Approx(32 * tokens * per_layer).epsilon(1e-9));
}
