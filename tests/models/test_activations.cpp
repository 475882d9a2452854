// Activation memory: Korthikanti et al. 2022 Table 2 (domain-notes §3) and the flash / GQA / no-dropout variant.
#include "models/model.hpp"
#include "sim/core/error.hpp"

#include <doctest/doctest.h>

using namespace parsim;

namespace {
ActivationOptions opts(int tp, bool sp, Recompute r, bool flash, int cp = 1) {
  ActivationOptions o;
  o.tp = tp;
  o.cp = cp;
  o.sp = sp;
  o.recompute = r;
  o.flash_attention = flash;
  o.precision = Precision::BF16;
  return o;
}
}  // namespace

TEST_CASE("Korthikanti 2022 Table 2 rows, GPT-3 shape without flash attention") {
  // GPT-3 175B: f = 4h, a = g, LayerNorm, dropout — the shape Table 2 assumes; 16-bit activations, 1-byte masks.
  const ModelSpec m = resolve_model("gpt3-175b");
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8, sbh = s * b * h;
  // No parallelism (Eq. 1): sbh·(34 + 5as/h).
  CHECK(activation_bytes_per_layer(m, 1, 2048, opts(1, false, Recompute::None, false)) ==
        doctest::Approx(sbh * (34 + 5 * a * s / h)));
  // TP, no SP (Eq. 2): sbh·(10 + 24/t + 5as/(ht)).
  CHECK(activation_bytes_per_layer(m, 1, 2048, opts(8, false, Recompute::None, false)) ==
        doctest::Approx(sbh * (10 + 24 / t + 5 * a * s / (h * t))));
  // TP + SP: sbh/t·(34 + 5as/h).
  CHECK(activation_bytes_per_layer(m, 1, 2048, opts(8, true, Recompute::None, false)) ==
        doctest::Approx(sbh / t * (34 + 5 * a * s / h)));
  // TP + selective: sbh·(10 + 24/t).
  CHECK(activation_bytes_per_layer(m, 1, 2048, opts(8, false, Recompute::Selective, false)) ==
        doctest::Approx(sbh * (10 + 24 / t)));
  // TP + SP + selective: 34·sbh/t.
  CHECK(activation_bytes_per_layer(m, 1, 2048, opts(8, true, Recompute::Selective, false)) ==
        doctest::Approx(34 * sbh / t));
  // Megatron's softmax on its eager fp32 path (sim/step/costs.hpp SoftmaxPath): + softmax_saved_extra bytes per score
  // of the a/t heads' s × s scores — with 2 B (the fp32 output kept instead of the 16-bit one, dropout on), Eq. 2 grows
  // by 2·a·s²·b/t: sbh·(10 + 24/t + 7as/(ht)).
  ActivationOptions eager = opts(8, false, Recompute::None, false);
  eager.softmax_saved_extra = 2;
  CHECK(activation_bytes_per_layer(m, 1, 2048, eager) == doctest::Approx(sbh * (10 + 24 / t + 7 * a * s / (h * t))));
  // Full recompute: the layer input 2sbh; an SP shard of it 2sbh/t.
  CHECK(activation_bytes_per_layer(m, 1, 2048, opts(8, false, Recompute::Full, false)) == doctest::Approx(2 * sbh));
  CHECK(activation_bytes_per_layer(m, 1, 2048, opts(8, true, Recompute::Full, false)) == doctest::Approx(2 * sbh / t));
}

TEST_CASE("SP cuts by t, CP halves at cp 2, selective lies between none and full") {
  const ModelSpec m = resolve_model("gpt3-175b");
  const double none1 = activation_bytes_per_layer(m, 1, 2048, opts(1, false, Recompute::None, false));
  const double none8 = activation_bytes_per_layer(m, 1, 2048, opts(8, false, Recompute::None, false));
  const double sp8 = activation_bytes_per_layer(m, 1, 2048, opts(8, true, Recompute::None, false));
  // With SP every term is split: exactly none1 / 8; without SP the 10·sbh part stays, so it is larger.
  CHECK(sp8 == doctest::Approx(none1 / 8));
  CHECK(none8 > sp8);
  // CP 2: s/2 local tokens, s² term (s/2)·s — every term halves.
  CHECK(activation_bytes_per_layer(m, 1, 2048, opts(8, true, Recompute::None, false, 2)) == doctest::Approx(sp8 / 2));
  const double sel = activation_bytes_per_layer(m, 1, 2048, opts(8, true, Recompute::Selective, false));
  const double full = activation_bytes_per_layer(m, 1, 2048, opts(8, true, Recompute::Full, false));
  CHECK(full < sel);
  CHECK(sel < sp8);
  // Micro-batch size scales linearly.
  CHECK(activation_bytes_per_layer(m, 4, 2048, opts(8, true, Recompute::None, false)) == doctest::Approx(4 * sp8));
}

TEST_CASE("Llama-style layer with flash attention (domain-notes §3: about 32.1·sbh)") {
  // Llama-2-7B, no dropout, flash: norm inputs 4 + QKV in 2 + FFN in 2 + Q 2 + K,V 4 + O in 2 + SwiGLU 6·f/h
  // (6·11008/4096 = 16.125) = 32.125·sbh, plus the fp32 logsumexp 4·b·a·s bytes.
  const ModelSpec m = resolve_model("llama2-7b");
  const double s = 4096, h = 4096, a = 32, sbh = s * h;
  const double none = activation_bytes_per_layer(m, 1, 4096, opts(1, false, Recompute::None, true));
  CHECK(none == doctest::Approx(32.125 * sbh + 4 * a * s));
  // Flash never stores s² tensors: selective recompute only drops the logsumexp.
  const double sel = activation_bytes_per_layer(m, 1, 4096, opts(1, false, Recompute::Selective, true));
  CHECK(sel == doctest::Approx(32.125 * sbh));
  // Without flash the s² softmax output (2·a·s²·b, no dropout) would be kept.
  CHECK(activation_bytes_per_layer(m, 1, 4096, opts(1, false, Recompute::None, false)) ==
        doctest::Approx(32.125 * sbh + 2 * a * s * s));
  // SP at tp 8 divides everything by 8 (a, g and f all divisible by 8).
  CHECK(activation_bytes_per_layer(m, 1, 4096, opts(8, true, Recompute::None, true)) == doctest::Approx(none / 8));
}

TEST_CASE("GQA: K and V shrink with kv_heads, and are replicated per rank when tp > kv_heads") {
  // Llama-2-70B: h 8192, a 64, g 8, d 128, f 28672, flash, tp 1: norms 4 + QKV in 2 + FFN in 2 + Q 2 +
  // K,V 4·(8·128/8192) = 0.5 + O in 2 + 6·28672/8192 = 21 → 33.5·sbh, + 4·a·s logsumexp.
  const ModelSpec m = resolve_model("llama2-70b");
  const double s = 4096, h = 8192, sbh = s * h;
  CHECK(activation_bytes_per_layer(m, 1, 4096, opts(1, false, Recompute::None, true)) ==
        doctest::Approx(33.5 * sbh + 4 * 64 * s));
  // tp 16 with SP: hidden part (4 + 2 + 2)·sbh/16; Q and O-in 2·2·s·(64/16)·128; K,V 2·2·s·1·128 (one replicated
  // KV head of each per rank); SwiGLU 3·2·s·28672/16; logsumexp 4·(64/16)·s.
  const double expect = 8 * sbh / 16 + 4 * s * 4 * 128 + 4 * s * 128 + 6 * s * 28672 / 16 + 4 * 4 * s;
  CHECK(activation_bytes_per_layer(m, 1, 4096, opts(16, true, Recompute::None, true)) == doctest::Approx(expect));
}

TEST_CASE("working, embedding and output activation bytes") {
  const ModelSpec g = resolve_model("gpt3-175b");
  const double s = 2048, h = 12288, a = 96, t = 8, sbh = s * h;
  // Full recompute regenerates the whole layer: the working set is the no-recompute footprint.
  CHECK(activation_working_bytes(g, 1, 2048, opts(8, true, Recompute::Full, false)) ==
        doctest::Approx(activation_bytes_per_layer(g, 1, 2048, opts(8, true, Recompute::None, false))));
  // Selective regenerates the attention core: 5·a·s²·b/t (no flash, dropout).
  CHECK(activation_working_bytes(g, 1, 2048, opts(8, true, Recompute::Selective, false)) ==
        doctest::Approx(5 * a * s * s / t));
  CHECK(activation_working_bytes(g, 1, 2048, opts(8, true, Recompute::None, false)) == 0.0);
  // Embedding dropout mask (Korthikanti §4.3): sbh/t bytes with SP, sbh without; none without dropout (Llama).
  CHECK(embedding_activation_bytes(g, 1, 2048, opts(8, true, Recompute::None, false)) == doctest::Approx(sbh / t));
  CHECK(embedding_activation_bytes(g, 1, 2048, opts(8, false, Recompute::None, false)) == doctest::Approx(sbh));
  CHECK(embedding_activation_bytes(resolve_model("llama2-7b"), 1, 4096, opts(8, true, Recompute::None, true)) == 0.0);
  // Output layer (Korthikanti §4.3, SP): 4sbh/t·(1 + V/h) with Megatron's padded V = 51200 at tp 8
  // (⌈50257/1024⌉·1024): 4sbh/t + 4·s·b·51200/t.
  CHECK(output_activation_bytes(g, 1, 2048, opts(8, true, Recompute::None, false)) ==
        doctest::Approx(4 * sbh / t + 4 * s * 51200 / t));
  // Without SP the two hidden-sized inputs (final norm, LM head) are replicated: 4sbh + the logits.
  CHECK(output_activation_bytes(g, 1, 2048, opts(8, false, Recompute::None, false)) ==
        doctest::Approx(4 * sbh + 4 * s * 51200 / t));
  // Megatron's loss keeps the 16-bit logits and their fp32 upcast (cross_entropy.py): 2 + 4 = 6 B per logit.
  ActivationOptions up = opts(8, true, Recompute::None, false);
  up.loss_upcasts_logits = true;
  CHECK(output_activation_bytes(g, 1, 2048, up) == doctest::Approx(4 * sbh / t + 6 * s * 51200 / t));
  // A fused loss (--cross-entropy-fusion: llm.c's fused classifier, flash-attn's cross entropy) keeps the 16-bit logits
  // alone and writes their gradient over them: 2 B per logit, whatever the stack's unfused loss would upcast.
  ActivationOptions fused = up;
  fused.fused_cross_entropy = true;
  CHECK(output_activation_bytes(g, 1, 2048, fused) == doctest::Approx(4 * sbh / t + 2 * s * 51200 / t));
  // fp32 training: .float() returns the same tensor, 4 B.
  up.precision = Precision::FP32;
  CHECK(output_activation_bytes(g, 1, 2048, up) == doctest::Approx(8 * sbh / t + 4 * s * 51200 / t));
  CHECK_THROWS_AS(activation_bytes_per_layer(g, 1, 2048, opts(0, false, Recompute::None, false)), InputError);
}

TEST_CASE("fp8 with Transformer Engine keeps GEMM-only inputs in fp8") {
  // Llama-2-7B as above (32.125·sbh in bf16). With TE fp8 the two norm outputs (QKV and FFN-in inputs) 2 + 2 → 1 + 1,
  // the FFN-out input (SwiGLU output) 2·f/h → 1·f/h, while the SwiGLU input (gate, up) stays 16-bit (4·f/h), and the
  // output projection keeps a 1-byte copy of the attention output (+1): 32.125 − 2 − 2.6875 + 1 = 28.4375·sbh.
  const ModelSpec m = resolve_model("llama2-7b");
  const double s = 4096, h = 4096, a = 32, sbh = s * h;
  ActivationOptions o = opts(1, false, Recompute::None, true);
  o.precision = Precision::FP8;
  // Without TE (fp8_gemm_inputs false, e.g. the PyTorch stack) fp8 activations are counted as 16-bit.
  CHECK(activation_bytes_per_layer(m, 1, 4096, o) == doctest::Approx(32.125 * sbh + 4 * a * s));
  o.fp8_gemm_inputs = true;
  CHECK(activation_bytes_per_layer(m, 1, 4096, o) == doctest::Approx(28.4375 * sbh + 4 * a * s));
  // bf16 training is unchanged by the flag.
  o.precision = Precision::BF16;
  CHECK(activation_bytes_per_layer(m, 1, 4096, o) == doctest::Approx(32.125 * sbh + 4 * a * s));
}

TEST_CASE("torchtitan's per-op checkpointing (--recompute op) keeps the saved ops' outputs") {
  // Llama 3 8B: h 4096, a 32 heads of d 128, 8 KV heads (kv·d = 1024), gated FFN f 14,336, bf16 (e = 2), flash.
  // The policy saves per block the checkpoint input x (h), the outputs of the 1st, 3rd, 5th and 7th matmuls — wq (a·d
  // = h), wv (kv·d), w1 (f), w2 (h) — and the attention output (a·d = h) with its fp32 logsumexp (4 B per head):
  // t = 1: e·(4h + kv·d + f) = 2·(16,384 + 1,024 + 14,336) = 63,488 B per token, + 4·32 = 128 B.
  const ModelSpec m = resolve_model("llama3-8b");
  const double s = 8192, b = 2, sb = s * b;
  CHECK(activation_bytes_per_layer(m, 2, 8192, opts(1, false, Recompute::Op, true)) ==
        doctest::Approx(sb * (63488.0 + 128.0)));
  // tp 2 with SP: x is the SP shard (h/2), wq and the attention output a/2·d each, wv kv/2·d, w1 f/2, w2's output
  // before its reduce-scatter the full h, and the two reduce-scatters' outputs h/2 each:
  // e·(2048 + 2·2048 + 512 + 7168 + 4096 + 2·2048) = 2·22,016 = 44,032 B per token, + 4·16 = 64 B.
  CHECK(activation_bytes_per_layer(m, 2, 8192, opts(2, true, Recompute::Op, true)) ==
        doctest::Approx(sb * (44032.0 + 64.0)));
  // Between full recompute (the input only) and selective (Megatron: everything but the attention core) here.
  const double op = activation_bytes_per_layer(m, 2, 8192, opts(1, false, Recompute::Op, true));
  CHECK(op > activation_bytes_per_layer(m, 2, 8192, opts(1, false, Recompute::Full, true)));
  CHECK(op < activation_bytes_per_layer(m, 2, 8192, opts(1, false, Recompute::Selective, true)));
  // While a layer's backward runs, the recomputed tensors exist again: the no-recompute footprint less the kept.
  CHECK(activation_working_bytes(m, 2, 8192, opts(1, false, Recompute::Op, true)) ==
        doctest::Approx(activation_bytes_per_layer(m, 2, 8192, opts(1, false, Recompute::None, true)) - op));
}
