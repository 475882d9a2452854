// Issue 10: FLOPs, per-rank GEMM shapes, parameters per rank and activation memory of MoE, MLA and sliding-window
// layers. Expected values are derived in the comments; Megatron-LM's throughput formula is rewritten here in its own
// aggregated form (megatron/training/training.py `num_floating_point_operations`, commit d98e8a64) and compared.
#include "models/model.hpp"
#include "sim/core/error.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace parsim;

namespace {
const std::string kData = std::string(PARSIM_TEST_DATA) + "/models/";
ModelSpec load(const char* f) { return resolve_model(kData + f); }
ActivationOptions opts(int tp, bool sp, Recompute r = Recompute::None, int etp = 0, int ep = 1, double imb = 1.0) {
  ActivationOptions o;
  o.tp = tp;
  o.sp = sp;
  o.recompute = r;
  o.experts = ExpertSplit{ep, etp, imb};
  return o;
}
double gemm_flops(const std::vector<GemmShape>& g, GemmKind k) {
  double f = 0;
  for (const auto& x : g) f += x.kind == k ? x.flops() : 0.0;
  return f;
}
}  // namespace

TEST_CASE("Mixtral model FLOPs: Megatron-Core's MoE formula (active experts), attention over the full s²") {
  const ModelSpec m = load("mixtral-8x7b-v0.1.config.json");
  const double T = 4096, s = 4096, h = 4096, L = 32, V = 32000;
  // Megatron transformer_flops per token (BSHD): self_attn_term 6·(h·(a·d + 2·g·d) + a·d·h) = 6·41,943,040;
  // routed experts 6·h·(f_e·k·3) (SwiGLU factor 3, top-2); logits 6·h·V (here the real V, parsim's convention);
  // core attention 6·a·d per s² (causal /2 cancelling the two GEMMs) — parsim counts the full s², twice that.
  const double attn = 6 * (h * (32 * 128 + 2 * 8 * 128) + 32 * 128 * h);
  const double experts = 6 * h * (14336.0 * 2 * 3);
  const double logits = 6 * h * V;
  const double core_megatron = 6 * 32 * 128.0;
  const double megatron = T * (L * (attn + experts) + logits) + s * s * L * core_megatron;
  CHECK(model_flops(m, 1, 4096) == doctest::Approx(megatron + s * s * L * core_megatron).epsilon(1e-12));
  // = 82,927,681,536 FLOP per token: 32·(251,658,240 + 2,113,929,216) + 786,432,000 + 32·49,152·4096.
  CHECK(model_flops(m, 1, 4096) / 4096 == doctest::Approx(82'927'681'536.0).epsilon(1e-12));
  // The router GEMM (2·h·E per token, fwd + dgrad + wgrad) is executed but not a model FLOP: 3·32·2·4096·8 =
  // 6,291,456 per token more in the hardware FLOPs.
  CHECK(hardware_flops(m, 1, 4096, Recompute::None) - model_flops(m, 1, 4096) ==
        doctest::Approx(4096.0 * 6'291'456).epsilon(1e-12));
  // Active FLOPs are far below the dense-equivalent model with all 8 experts: 6·h·f_e·8 instead of ·2.
  const LayerFlops f = layer_forward_flops(m, m.layer(0), 1, 4096);
  CHECK(f.experts == doctest::Approx(6 * T * h * 14336 * 2));
  CHECK(f.ffn == 0.0);
  CHECK(f.router == doctest::Approx(2 * T * h * 8));
  CHECK(f.model() == doctest::Approx(f.total() - f.router));
}

TEST_CASE("DeepSeek-V3 model FLOPs: MLA + dense/MoE layers against Megatron's MLA branch") {
  const ModelSpec m = load("deepseek-v3.config.json");
  const double T = 4096, s = 4096, h = 7168, L = 61, V = 129280, a = 128;
  const double qr = 1536, kvr = 512, n = 128, r = 64, v = 128;
  // Megatron (multi_latent_attention branch): q_term q_r·(h + a·(n+r) + 1) = 48,760,320; kv_r·(h + a·(n+v) + 1) =
  // 20,447,744; h·r = 458,752; o a·v·h = 117,440,512 → ×6. The "+1" are the two latent norms: parsim counts no norms,
  // so it is 6·(q_r + kv_r) = 12,288 FLOP per token and layer below Megatron.
  const double attn = 6 * (qr * (h + a * (n + r) + 1) + kvr * (h + a * (n + v) + 1) + h * r + a * v * h);
  // Dense FFN 6·h·f·3 (3 layers), MoE 6·h·(f_e·k·3 + f_s·3) (58 layers) — both 2,378,170,368 per token, since
  // 8·2048 + 2048 = 18432 = intermediate_size.
  const double dense = 6 * h * 18432 * 3, moe = 6 * h * (2048.0 * 8 * 3 + 2048.0 * 3);
  const double logits = 6 * h * V;
  const double core_megatron = 6 * (a * (n + r) / 2 + a * v / 2);
  const double megatron = T * (L * attn + 3 * dense + 58 * moe + logits) + s * s * L * core_megatron;
  const double parsim = megatron + s * s * L * core_megatron - T * L * 6 * (qr + kvr);
  CHECK(model_flops(m, 1, 4096) == doctest::Approx(parsim).epsilon(1e-12));
  // 280,513,609,728 FLOP per token: 61·(1,122,631,680 + 2,378,170,368) + 5,560,074,240 + 61·245,760·4096
  // (= 61,404,610,560).
  CHECK(model_flops(m, 1, 4096) / 4096 == doctest::Approx(280'513'609'728.0).epsilon(1e-12));
  // MTP, separate: 3·(2·T·2h·h + one MoE layer's model FLOPs + the LM head).
  const LayerFlops last = layer_forward_flops(m, m.layer(60), 1, 4096);
  CHECK(mtp_flops(m, 1, 4096) ==
        doctest::Approx(3 * (2 * T * 2 * h * h + last.model() + lm_head_forward_flops(m, 1, 4096))).epsilon(1e-12));
  CHECK(mtp_flops(load("mixtral-8x7b-v0.1.config.json"), 1, 4096) == 0.0);
  // The kind-less overloads refuse a model that mixes dense and MoE layers.
  CHECK_THROWS_AS(layer_forward_flops(m, 1, 4096), InputError);
  CHECK_THROWS_AS(layer_work(m, 1, 4096, 1, 1, false, Precision::BF16), InputError);
  CHECK_THROWS_AS(layer_params_per_tp_rank(m, 8), InputError);
}

TEST_CASE("sliding-window attention: FLOPs over min(window, s) keys, FlashAttention pairs per rank") {
  const ModelSpec m = load("gpt-oss-120b.config.json");  // window 128 on even layers, 64 heads of 64
  const double T = 8192, s = 8192, a = 64, d = 64;
  const LayerFlops slide = layer_forward_flops(m, m.layer(0), 1, 8192);
  const LayerFlops full = layer_forward_flops(m, m.layer(1), 1, 8192);
  CHECK(slide.scores == doctest::Approx(2 * T * a * d * 128));
  CHECK(full.scores == doctest::Approx(2 * T * a * d * s));
  CHECK(slide.qkv == doctest::Approx(full.qkv));
  // model_flops sums 18 layers of each kind: the difference to an all-full model is 18·(scores + AV) gap ×3.
  ModelSpec all_full = m;
  all_full.layer_kinds.clear();
  all_full.sliding_window = 0;
  CHECK(model_flops(all_full, 1, 8192) - model_flops(m, 1, 8192) ==
        doctest::Approx(3 * 18 * 2 * (full.scores - slide.scores)).epsilon(1e-12));
  // A window at least as long as the sequence changes nothing.
  CHECK(layer_forward_flops(m, m.layer(0), 1, 128).scores ==
        doctest::Approx(layer_forward_flops(m, m.layer(1), 1, 128).scores));

  // Kernel pairs: causal window w < s covers s·w − w²/2 (query, key) pairs; forward 2·b·heads·(d + d_v) per pair.
  // 8 heads of 64, s 4096, w 128: 2·8·128·(4096·128 − 8192) = 2·8·128·516,096 = 1,056,964,608.
  AttentionShape w{1, 8, 4096, 4096, 64, true, 128, 0};
  CHECK(w.forward_flops() == doctest::Approx(1'056'964'608.0));
  // CP rank with a quarter of the queries: a quarter of the pairs.
  AttentionShape wq{1, 8, 1024, 4096, 64, true, 128, 0};
  CHECK(wq.forward_flops() == doctest::Approx(1'056'964'608.0 / 4));
  // The window reaching the sequence length is plain causal: ½·4·8·4096²·64 = 17,179,869,184.
  AttentionShape c{1, 8, 4096, 4096, 64, true, 4096, 0};
  CHECK(c.forward_flops() == doctest::Approx(17'179'869'184.0));
  // MLA shape: QKᵀ over d_qk = 192, AV over d_v = 128: non-causal 2·1·2·3·(192 + 128) = 3,840.
  AttentionShape mla{1, 2, 3, 1, 192, false, 0, 128};
  CHECK(mla.forward_flops() == doctest::Approx(3840.0));
  // Per-rank layer_work carries the window of a Sliding layer and none for a Full one.
  CHECK(layer_work(m, m.layer(0), 1, 8192, 8, 1, true, Precision::BF16).attention.window == 128);
  CHECK(layer_work(m, m.layer(1), 1, 8192, 8, 1, true, Precision::BF16).attention.window == 0);
}

TEST_CASE("Mixtral layer_work: router, grouped expert GEMMs at the tokens per local expert, imbalance") {
  const ModelSpec m = load("mixtral-8x7b-v0.1.config.json");
  // tp 2 with SP, ep 4, etp 1: the MoE input is the SP shard, 4096/2 = 2048 tokens; the ETP group (1 rank) adds none;
  // routed pairs R = k·2048 = 4096, shared by experts/ep = 2 local experts: 2048 tokens each.
  const LayerWork w = layer_work(m, m.layer(0), 1, 4096, 2, 1, true, Precision::BF16, ExpertSplit{4, 1, 1.0});
  CHECK(w.routed_tokens_sent == 4096);
  CHECK(w.routed_tokens_received == 4096);
  REQUIRE(w.gemms.size() == 7);  // qkv, out_proj, router, 2 × (fc1, fc2)
  CHECK(std::string(w.gemms[2].name) == "router");
  CHECK(w.gemms[2].kind == GemmKind::Router);
  CHECK(w.gemms[2].m == 2048);
  CHECK(w.gemms[2].n == 8);
  CHECK(w.gemms[2].k == 4096);
  CHECK(std::string(w.gemms[3].name) == "expert_fc1");
  CHECK(w.gemms[3].m == 2048);
  CHECK(w.gemms[3].n == 2 * 14336);  // etp 1: whole expert
  CHECK(w.gemms[4].k == 14336);
  // Routed FLOPs on the rank: R·6·h·f_e = 4096·6·4096·14336.
  CHECK(gemm_flops(w.gemms, GemmKind::RoutedExpert) == doctest::Approx(4096.0 * 6 * 4096 * 14336));
  // Imbalance 1.5 on the busiest rank: 6144 pairs, 3072 per local expert.
  const LayerWork busy = layer_work(m, m.layer(0), 1, 4096, 2, 1, true, Precision::BF16, ExpertSplit{4, 1, 1.5});
  CHECK(busy.routed_tokens_received == 6144);
  CHECK(busy.gemms[3].m == 3072);
  // etp 2: the ETP pair all-gathers its tokens (2·2048 distinct, R = 8192) and each computes half of every expert.
  const LayerWork etp2 = layer_work(m, m.layer(0), 1, 4096, 2, 1, true, Precision::BF16, ExpertSplit{4, 2, 1.0});
  CHECK(etp2.routed_tokens_received == 8192);
  CHECK(etp2.gemms[3].m == 4096);
  CHECK(etp2.gemms[3].n == 14336);
  // Without SP the TP peers hold the same tokens: R = k·4096 whatever etp.
  CHECK(moe_routed_tokens(m, 1, 4096, 4, 1, false, ExpertSplit{1, 4, 1.0}) == 8192);
  // The kind-less overload is ep = 1, etp = tp, balanced: all 8 experts local, 2·4096/8 = 1024 tokens each at tp 1.
  const LayerWork def = layer_work(m, 1, 4096, 1, 1, false, Precision::BF16);
  CHECK(def.gemms.size() == 2 + 1 + 16);
  CHECK(def.gemms[3].m == 1024);
  // Summed over the EP group's 8 ranks of 1 expert each (tp 1), the routed GEMMs are the layer's active expert
  // FLOPs: 8 ranks · R=8192/8... each rank R = k·4096 = 8192 pairs for 1 expert → 8 · 8192 · 6hf = 8 × this layer's
  // expert FLOPs for 4096 tokens (each rank brings its own 4096 tokens).
  const LayerWork ep8 = layer_work(m, m.layer(0), 1, 4096, 1, 1, false, Precision::BF16, ExpertSplit{8, 1, 1.0});
  CHECK(8 * gemm_flops(ep8.gemms, GemmKind::RoutedExpert) ==
        doctest::Approx(8 * layer_forward_flops(m, m.layer(0), 1, 4096).experts).epsilon(1e-12));
  CHECK_THROWS_AS(layer_work(m, m.layer(0), 1, 4096, 1, 1, false, Precision::BF16, ExpertSplit{1, 1, 0.5}),
                  InputError);
}

TEST_CASE("routed_expert_gemms: one fc1/fc2 pair per expert with tokens") {
  const ModelSpec m = load("mixtral-8x7b-v0.1.config.json");
  const auto g = routed_expert_gemms(m, {5, 0, 7}, 2);
  REQUIRE(g.size() == 4);  // the expert with no token runs no GEMM
  CHECK(g[0].m == 5);
  CHECK(g[0].n == 14336);  // 2·f_e/etp = 2·14336/2
  CHECK(g[0].k == 4096);
  CHECK(g[1].n == 4096);
  CHECK(g[1].k == 7168);
  CHECK(g[2].m == 7);
  CHECK_THROWS_AS(routed_expert_gemms(m, {1}, 0), InputError);
  CHECK_THROWS_AS(routed_expert_gemms(load("mistral-7b-v0.1.config.json"), {1}, 1), InputError);
}

TEST_CASE("DeepSeek-V3 layer_work: MLA down-projections duplicated on the SP shard, shared + routed experts") {
  const ModelSpec m = load("deepseek-v3.config.json");
  // tp 4 with SP, 4096 tokens: down-projections on 1024 tokens, up-projections on all 4096 over a/t = 32 heads.
  const LayerWork d = layer_work(m, m.layer(0), 1, 4096, 4, 1, true, Precision::BF16);
  REQUIRE(d.gemms.size() == 7);
  CHECK(std::string(d.gemms[0].name) == "q_down");
  CHECK(d.gemms[0].m == 1024);
  CHECK(d.gemms[0].n == 1536);
  CHECK(std::string(d.gemms[1].name) == "q_up");
  CHECK(d.gemms[1].n == 32 * 192);
  CHECK(std::string(d.gemms[2].name) == "kv_down");
  CHECK(d.gemms[2].n == 512 + 64);
  CHECK(std::string(d.gemms[3].name) == "kv_up");
  CHECK(d.gemms[3].n == 32 * 256);
  CHECK(std::string(d.gemms[4].name) == "out_proj");
  CHECK(d.gemms[4].k == 32 * 128);
  CHECK(d.attention.heads == 32);
  CHECK(d.attention.head_dim == 192);
  CHECK(d.attention.v_head_dim == 128);
  // Summed over the 4 TP ranks: exactly the layer's MLA projection and O FLOPs, and half (causal) of its core.
  const LayerFlops f = layer_forward_flops(m, m.layer(0), 1, 4096);
  CHECK(4 * gemm_flops(d.gemms, GemmKind::Attention) == doctest::Approx(f.qkv + f.out_proj).epsilon(1e-12));
  CHECK(4 * d.attention.forward_flops() == doctest::Approx(0.5 * (f.scores + f.attn_v)).epsilon(1e-12));
  CHECK(4 * gemm_flops(d.gemms, GemmKind::Ffn) == doctest::Approx(f.ffn).epsilon(1e-12));
  // MoE layer, ep 8, etp 1: 32 local experts; R = 8·(4096/4) = 8192 pairs → 256 tokens each; shared expert split
  // over TP: [4096 × 2·512] and [4096 × 7168] from 512.
  const LayerWork e = layer_work(m, m.layer(3), 1, 4096, 4, 1, true, Precision::BF16, ExpertSplit{8, 1, 1.0});
  CHECK(e.routed_tokens_received == 8192);
  int routed = 0;
  for (const auto& g : e.gemms) {
    if (g.kind == GemmKind::RoutedExpert) {
      ++routed;
      CHECK(g.m == 256);
    }
    if (std::string(g.name) == "shared_in") {
      CHECK(g.m == 4096);
      CHECK(g.n == 1024);
    }
  }
  CHECK(routed == 64);
  CHECK(4 * gemm_flops(e.gemms, GemmKind::SharedExpert) == doctest::Approx(f.ffn / 9).epsilon(1e-12));
}

TEST_CASE("parameters per rank: experts sharded by ep and etp, MLA down-projections and router replicated") {
  const ModelSpec m = load("deepseek-v3.config.json");
  // MoE layer at tp 4, ep 8, etp 1. Dense part: replicated q_a 11,010,048 + norm 1,536 + kv_a 4,128,768 + norm 512 =
  // 15,140,864; TP-split (q_b 37,748,736 + kv_b 16,777,216 + o 117,440,512)/4 = 42,991,616; router 1,835,008;
  // shared expert 44,040,192/4 = 11,010,048; norms 14,336 → 70,991,872. Experts: 256/8 = 32 whole experts of
  // 44,040,192 = 1,409,286,144.
  const RankParams p = layer_params_per_rank(m, m.layer(3), 4, 8, 1);
  CHECK(p.dense == doctest::Approx(70'991'872.0));
  CHECK(p.expert == doctest::Approx(1'409'286'144.0));
  // etp 2 halves every local expert; ep 16 halves their number.
  CHECK(layer_params_per_rank(m, m.layer(3), 4, 8, 2).expert == doctest::Approx(1'409'286'144.0 / 2));
  CHECK(layer_params_per_rank(m, m.layer(3), 4, 16, 1).expert == doctest::Approx(1'409'286'144.0 / 2));
  // One rank holding everything holds the layer.
  CHECK(layer_params_per_rank(m, m.layer(3), 1, 1, 1).total() ==
        doctest::Approx(static_cast<double>(layer_params(m, m.layer(3)).total())));
  CHECK(layer_params_per_rank(m, m.layer(0), 1).total() ==
        doctest::Approx(static_cast<double>(layer_params(m, m.layer(0)).total())));
  // Mixtral, the kind-less overload (ep 1, etp = tp): every expert split by tp, router replicated:
  // (41,943,040 + 8·176,160,768)/8 + 32,768 + 8,192 = 181,403,648 + 40,960 = 181,444,608 at tp 8.
  const ModelSpec mx = load("mixtral-8x7b-v0.1.config.json");
  CHECK(layer_params_per_tp_rank(mx, 8) == doctest::Approx(181'444'608.0));
  // GPT-OSS: expert biases — gate/up bias column-parallel (÷etp), down bias replicated; router bias replicated.
  const ModelSpec oss = load("gpt-oss-120b.config.json");
  const RankParams po = layer_params_per_rank(oss, oss.layer(0), 1, 1, 2);
  CHECK(po.expert == doctest::Approx(128 * (3.0 * 2880 * 2880 / 2 + 2.0 * 2880 / 2 + 2880)));
}

TEST_CASE("MoE activation memory: routed-token activations (k × tokens), router scores, dispatch buffers") {
  const ModelSpec m = load("mixtral-8x7b-v0.1.config.json");
  // tp 1, bf16, flash, 1 × 4096 tokens, ep 1, etp 1. Hidden-sized: 2 norm inputs + QKV-in + router/FFN-in 4·2·sbh =
  // 134,217,728; router fp32 scores + routing map 5·8 B per token = 163,840. Attention: Q 2·4096, K and V 2·2·1024,
  // O-in 2·4096 = 20,480 B per token → 83,886,080. Routed pairs R = 2·4096 = 8192, each: expert input 2·4096 +
  // gate/up/activation 3·2·14336 + expert output 2·4096 + fp32 probability 4 = 102,404 B → 838,893,568. Logsumexp
  // 4·32·4096 = 524,288. Total 1,057,685,504.
  const double got = activation_bytes_per_layer(m, m.layer(0), 1, 4096, opts(1, false, Recompute::None, 1));
  CHECK(got == doctest::Approx(1'057'685'504.0));
  // The kind-less overload (etp = tp) agrees for this uniform model.
  CHECK(activation_bytes_per_layer(m, 1, 4096, opts(1, false)) == doctest::Approx(got));
  // ep moves expert weights, not activations: the same bytes at ep 8.
  CHECK(activation_bytes_per_layer(m, m.layer(0), 1, 4096, opts(1, false, Recompute::None, 1, 8)) ==
        doctest::Approx(got));
  // Imbalance 1.25 on the busiest rank scales the routed term only: + 0.25·838,893,568.
  CHECK(activation_bytes_per_layer(m, m.layer(0), 1, 4096, opts(1, false, Recompute::None, 1, 1, 1.25)) ==
        doctest::Approx(got + 0.25 * 838'893'568.0));
  // Dispatch buffers (transient): send k·T·h·e + receive R·h·e = (8192 + 8192)·4096·2 = 134,217,728; they are the
  // whole working set without recompute.
  CHECK(moe_dispatch_buffer_bytes(m, 1, 4096, opts(1, false, Recompute::None, 1)) == doctest::Approx(134'217'728.0));
  CHECK(activation_working_bytes(m, m.layer(0), 1, 4096, opts(1, false, Recompute::None, 1)) ==
        doctest::Approx(134'217'728.0));
  // Full recompute keeps only the layer input (2·sbh = 33,554,432) …
  CHECK(activation_bytes_per_layer(m, m.layer(0), 1, 4096, opts(1, false, Recompute::Full, 1)) ==
        doctest::Approx(33'554'432.0));
  // … and regenerates the layer while its backward runs: its whole footprint plus the dispatch buffers.
  CHECK(activation_working_bytes(m, m.layer(0), 1, 4096, opts(1, false, Recompute::Full, 1)) ==
        doctest::Approx(got + 134'217'728.0));
  CHECK(moe_dispatch_buffer_bytes(load("mistral-7b-v0.1.config.json"), 1, 4096, opts(1, false)) == 0.0);
}

TEST_CASE("MLA and q/k-norm activation memory") {
  const ModelSpec m = load("deepseek-v3.config.json");
  // Dense layer 0, tp 1, bf16, flash, 4096 tokens. Hidden: 4·2·sbh = 234,881,024 + latent-norm inputs
  // 2·(1536 + 512)·4096 = 16,777,216. TP-split, per token: 2·(gathered latents 2048 + rope key 64 + Q and K
  // 2·128·192 + V and O-in 2·128·128) = 168,064 B → 688,390,144; SwiGLU 3·2·18432 = 110,592 B → 452,984,832.
  // Logsumexp 4·128·4096 = 2,097,152. Total 1,395,130,368.
  CHECK(activation_bytes_per_layer(m, m.layer(0), 1, 4096, opts(1, false)) == doctest::Approx(1'395'130'368.0));
  // Qwen3-8B (per-head q/k norms): Llama-style layer + the un-normalised Q and K, 2·(32 + 8)·128 B per token.
  const ModelSpec q = load("qwen3-8b.config.json");
  ModelSpec no_norm = q;
  no_norm.qk_norm = QkNorm::None;
  CHECK(activation_bytes_per_layer(q, 1, 4096, opts(1, false)) -
            activation_bytes_per_layer(no_norm, 1, 4096, opts(1, false)) ==
        doctest::Approx(4096.0 * 2 * 40 * 128));
  // Parallel attention (GPT-NeoX): one stored hidden tensor less than sequential (input + 2 norm outputs).
  const ModelSpec neox = load("pythia-70m.config.json");
  ModelSpec seq = neox;
  seq.parallel_attention = false;
  CHECK(activation_bytes_per_layer(seq, 1, 2048, opts(1, false)) -
            activation_bytes_per_layer(neox, 1, 2048, opts(1, false)) ==
        doctest::Approx(2.0 * 2048 * 512));
}

TEST_CASE("q/k norm parameters: an RMSNorm weight per head dimension, a LayerNorm weight and bias") {
  // Qwen3-8B (RMSNorm, per-head q/k norms of head_dim 128): 2·128 = 256 parameters per layer beyond no q/k norm.
  const ModelSpec q = load("qwen3-8b.config.json");
  ModelSpec no_norm = q;
  no_norm.qk_norm = QkNorm::None;
  CHECK(count_params(q).total - count_params(no_norm).total == doctest::Approx(256.0 * q.layers));
  // The same with LayerNorm (Megatron --qk-layernorm on a LayerNorm model: TENorm with a bias): 2·2·128 = 512.
  ModelSpec ln = q, ln_none = no_norm;
  ln.norm = ln_none.norm = NormKind::LayerNorm;
  const std::int64_t other_norm_biases = count_params(ln_none).total - count_params(no_norm).total;  // the norms' biases
  CHECK(count_params(ln).total - count_params(ln_none).total == doctest::Approx(512.0 * q.layers));
  CHECK(other_norm_biases > 0);
}

TEST_CASE("selective recompute by module: what each module no longer keeps (Megatron-Core checkpointing)") {
  // Mixtral (MoE, standard attention) layer 0 as in the MoE activation test above: 1,057,685,504 B without recompute,
  // tp 1, bf16 (g_in = e = 2 B), 4,096 tokens, R = 8,192 routed pairs, h = 4,096, f_e = 14,336.
  const ModelSpec m = load("mixtral-8x7b-v0.1.config.json");
  auto sel = [](const std::string& mods) {
    ActivationOptions o = opts(1, false, Recompute::Selective, 1);
    o.recompute_modules = parse_recompute_modules(mods);
    return o;
  };
  const double none = 1'057'685'504.0;
  auto kept = [&](const std::string& mods) { return activation_bytes_per_layer(m, m.layer(0), 1, 4096, sel(mods)); };
  // core_attn (the default): the flash logsumexp, 4·32·4,096 = 524,288.
  CHECK(kept("core_attn") == doctest::Approx(none - 524'288.0));
  // layernorm: the pre-MLP norm's output (router / expert input), 2·sbh = 33,554,432; the input norm is fused into
  // the QKV LayerNormLinear in the TE spec and stays.
  CHECK(kept("layernorm") == doctest::Approx(none - 33'554'432.0));
  // moe_act: the activation output per routed pair, 8,192·2·14,336 = 234,881,024 (FC1's output stays).
  CHECK(kept("moe_act") == doctest::Approx(none - 234'881'024.0));
  // The GPT-OSS recipes' layernorm + moe_act: 1,057,685,504 − 268,435,456 = 789,250,048 (logsumexp kept).
  CHECK(kept("layernorm,moe_act") == doctest::Approx(789'250'048.0));
  // While the layer's backward runs, the recomputed tensors exist again, beside the dispatch buffers (134,217,728).
  CHECK(activation_working_bytes(m, m.layer(0), 1, 4096, sel("layernorm,moe_act")) ==
        doctest::Approx(268'435'456.0 + 134'217'728.0));
  // moe: router scores and map 5·8·4,096 = 163,840 + every routed tensor 838,893,568 (no shared expert) =
  // 839,057,408; the pre-MLP norm output stays (the checkpoint's input). moe includes moe_act.
  CHECK(kept("moe") == doctest::Approx(none - 839'057'408.0));
  CHECK(kept("moe,moe_act") == doctest::Approx(kept("moe")));

  // DeepSeek-V3 dense MLA layer 0 (1,395,130,368 B without recompute, see the MLA test): h 7,168, 128 heads,
  // qk_nope 128, qk_rope 64, v 128, FFN 18,432.
  const ModelSpec d = load("deepseek-v3.config.json");
  auto dkept = [&](int layer, const std::string& mods) {
    return activation_bytes_per_layer(d, d.layer(layer), 1, 4096, sel(mods));
  };
  // mla_up_proj: Q, K (128·192 each) and V (128·128) per token, 2·4,096·128·(2·192 + 128) = 536,870,912.
  CHECK(dkept(0, "mla_up_proj") == doctest::Approx(1'395'130'368.0 - 536'870'912.0));
  // mlp: the fused pre-MLP norm's output FC1 keeps, 2·4,096·7,168 = 58,720,256, and the SwiGLU tensors
  // 3·2·18,432·4,096 = 452,984,832: 511,705,088.
  CHECK(dkept(0, "mlp") == doctest::Approx(1'395'130'368.0 - 511'705'088.0));
  // layernorm: MLA's input norm is its own module: its output, 58,720,256 (the pre-MLP norm of a dense layer is fused).
  CHECK(dkept(0, "layernorm") == doctest::Approx(1'395'130'368.0 - 58'720'256.0));
  // The B200 recipe's mla_up_proj + mlp (E0007), without core_attn: the logsumexp (2,097,152) stays.
  CHECK(dkept(0, "mla_up_proj,mlp") == doctest::Approx(1'395'130'368.0 - 536'870'912.0 - 511'705'088.0));
  // shared_experts on MoE layer 3: the shared expert's SwiGLU tensors, 3·2·2,048·4,096 = 50,331,648; mlp does not act
  // on an MoE layer.
  CHECK(dkept(3, "core_attn") - dkept(3, "core_attn,shared_experts") == doctest::Approx(50'331'648.0));
  CHECK(dkept(3, "core_attn,mlp") == doctest::Approx(dkept(3, "core_attn")));
}
