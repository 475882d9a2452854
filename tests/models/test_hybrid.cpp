// Hybrid models (Nemotron-H / Nemotron 3: Megatron-Core's hybrid_layer_pattern, HF nemotron_h): single-block layers,
// Mamba-2 mixers. Exact parameter counts, FLOPs, per-rank shapes and activation bytes, each derived in the comment from
// the config's shapes (tests/data/models/README.md gives the config's source).
#include "models/model.hpp"
#include "sim/core/error.hpp"

#include "tests/support/errors.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

using namespace parsim;

namespace {
const std::string kData = std::string(PARSIM_TEST_DATA) + "/models/";
ModelSpec load(const char* f) { return resolve_model(kData + f); }
std::string error_of(const std::string& arg) {
  return parsim::test::error_of([&] { resolve_model(arg); });
}
using parsim::test::contains;

const LayerKind kMamba{AttentionKind::Mamba, FfnKind::None};
const LayerKind kAttn{AttentionKind::Full, FfnKind::None};
const LayerKind kMoe{AttentionKind::None, FfnKind::MoE};
const LayerKind kMlp{AttentionKind::None, FfnKind::Dense};

// A model file written for one test, in the system temp directory.
std::string temp_file(const std::string& name, const std::string& text) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "parsim_test_hybrid";
  std::filesystem::create_directories(dir);
  const std::filesystem::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}
// A parsim-schema model: the JSON body after "name".
std::string write_model(const std::string& file, const std::string& body) {
  return temp_file(file, "{\"name\": \"hybrid test\", " + body + "}");
}
}  // namespace

TEST_CASE("Nemotron-3-Nano-30B-A3B: 23 Mamba-2, 23 MoE and 6 attention blocks; 31,577,937,344 total, 3,580,073,408 active") {
  const ModelSpec m = load("nemotron-3-nano-30b-a3b.config.json");
  // hybrid_override_pattern MEMEM*EMEMEM*… : one block per layer, one RMSNorm each, NoPE attention.
  CHECK(m.layers == 52);
  CHECK(m.layer(0) == kMamba);
  CHECK(m.layer(1) == kMoe);
  CHECK(m.layer(5) == kAttn);
  CHECK(m.count_layers(kMamba) == 23);
  CHECK(m.count_layers(kMoe) == 23);
  CHECK(m.count_layers(kAttn) == 6);
  CHECK(m.norm_layers == 1);
  CHECK(m.position == PositionKind::None);
  CHECK(m.activation == FfnActivation::ReLU2);
  const HybridCounts hc = hybrid_counts(m);
  CHECK(hc.hybrid);
  CHECK((hc.mamba == 23 && hc.moe == 23 && hc.attention == 6 && hc.mlp == 0));
  // Mamba-2 mixer (h 2688, H 64 heads of P 64: d_in 4096; N 128, G 8, K 4): in_proj 2688·(2·4096 + 2·8·128 + 64)
  // = 2688·10,304 = 27,697,152; conv1d over 4096 + 2048 = 6,144 channels: 6,144·4 + 6,144 bias = 30,720; dt_bias,
  // A_log, D 3·64 = 192; gated-norm weight 4,096; out_proj 4,096·2688 = 11,010,048 → 38,742,208; + the block's norm
  // 2,688 = 38,744,896.
  const LayerParams mamba = layer_params(m, kMamba);
  CHECK(mamba.attention == 38'742'208);
  CHECK(mamba.ffn == 0);
  CHECK(mamba.total() == 38'744'896);
  // Attention block (32 heads, 2 KV groups, head dim 128, no biases): 2688·4096 + 2·2688·256 + 4096·2688
  // = 23,396,352; + norm = 23,399,040.
  const LayerParams attn = layer_params(m, kAttn);
  CHECK(attn.attention == 23'396'352);
  CHECK(attn.total() == 23'399'040);
  // MoE block: 128 squared-ReLU experts (not gated: up and down) 2·2688·1856 = 9,977,856 each, 1,277,165,568 in all;
  // the shared expert 2·2688·3712 = 19,955,712; router 128·2688 = 344,064 (the e_score_correction_bias is a buffer,
  // as for DeepSeek-V3); + norm → 1,297,468,032.
  const LayerParams moe = layer_params(m, kMoe);
  CHECK(moe.expert == 9'977'856);
  CHECK(moe.ffn == 1'277'165'568);
  CHECK(moe.shared == 19'955'712);
  CHECK(moe.router == 344'064);
  CHECK(moe.total() == 1'297'468'032);
  // Total: 23·38,744,896 + 6·23,399,040 + 23·1,297,468,032 + untied embedding and head 2·131,072·2688
  // (704,643,072) + final norm 2,688 = 31,577,937,344 (the "30B" of the checkpoint's name; Megatron-Bridge
  // docs/models/nemotron/nemotron3-nano.md: "30B parameters in total").
  const ParamCounts c = count_params(m);
  CHECK(c.total == 31'577'937'344);
  // Active: 6 of 128 experts: total − 23·122·9,977,856 = 31,577,937,344 − 27,997,863,936 = 3,580,073,408; without the
  // input embedding 3,227,751,872 (the "A3B" of the name; the docs: "3.5B active parameters").
  CHECK(c.active == 3'580'073'408);
  CHECK(c.active - c.embedding == 3'227'751'872);
  // The same model in parsim's schema.
  const ModelSpec twin = load("nemotron_3_nano_parsim.json");
  CHECK(twin.layer_kinds == m.layer_kinds);
  CHECK(count_params(twin).total == c.total);
  CHECK(count_params(twin).active == c.active);
}

TEST_CASE("hybrid blocks: FLOPs, per-rank shapes and parameters, activation bytes") {
  const ModelSpec m = load("nemotron-3-nano-30b-a3b.config.json");
  // Per token (b = 1, s = 1 for the token-linear terms): Mamba in_proj 2·2688·10,304 = 55,394,304 + out_proj
  // 2·4096·2688 = 22,020,096 → 77,414,400; the SSD scan (Q 128, N 128, G 8, P 64, H 64) 2QNG + 2QPH + 4NPH
  // = 262,144 + 1,048,576 + 2,097,152 = 3,407,872 — no attention or FFN terms.
  const LayerFlops mf = layer_forward_flops(m, kMamba, 1, 1);
  CHECK(mf.mamba_proj == 77'414'400.0);
  CHECK(mf.ssm == 3'407'872.0);
  CHECK(mf.qkv + mf.scores + mf.attn_v + mf.out_proj + mf.ffn + mf.experts + mf.shared + mf.router == 0.0);
  CHECK(mf.model() == 77'414'400.0 + 3'407'872.0);
  // MoE block: routed 4·2688·1856·6 = 119,734,272 (plain FFN: 4·h·f per expert), shared 4·2688·3712 = 39,911,424,
  // router 2·2688·128 = 688,128 (hardware FLOPs only); no mixer.
  const LayerFlops ef = layer_forward_flops(m, kMoe, 1, 1);
  CHECK(ef.experts == 119'734'272.0);
  CHECK(ef.shared == 39'911'424.0);
  CHECK(ef.router == 688'128.0);
  CHECK(ef.qkv + ef.mamba_proj + ef.ssm == 0.0);
  // Attention block at s = 8192 per token: QKV 2·2688·(32 + 2·2)·128 = 24,772,608, O 2·4096·2688 = 22,020,096,
  // scores and ·V 2·32·128·8192 = 67,108,864 each.
  const LayerFlops af = layer_forward_flops(m, kAttn, 1, 8192);
  CHECK(af.qkv == doctest::Approx(8192 * 24'772'608.0));
  CHECK(af.scores == doctest::Approx(8192 * 67'108'864.0));
  CHECK(af.ffn + af.experts == 0.0);

  // One rank at tp 2 (MambaMixer splits heads and groups): in_proj 10,304/2 = 5,152 columns, out_proj from 2,048;
  // the scan over 32 heads and 4 groups, 3,072 conv channels; 8192 tokens of mbs 1.
  const LayerWork w = layer_work(m, kMamba, 1, 8192, 2, 1, true, Precision::BF16, {});
  REQUIRE(w.gemms.size() == 2);
  CHECK((w.gemms[0].m == 8192 && w.gemms[0].n == 5152 && w.gemms[0].k == 2688));
  CHECK((w.gemms[1].m == 8192 && w.gemms[1].n == 2688 && w.gemms[1].k == 2048));
  CHECK((w.ssm.tokens == 8192 && w.ssm.heads == 32 && w.ssm.groups == 4 && w.ssm.conv_channels == 3072));
  CHECK(w.attention.batch == 0);  // no softmax attention
  // Elementwise: one norm (2h·e) and one residual add (3h·e) per hidden token — ÷2 under SP: 8192/2 · 5·2688·2.
  CHECK(w.elementwise_bytes_fwd == doctest::Approx(4096.0 * 5 * 2688 * 2));
  // Parameters per rank at tp 2: the mixer ÷2 (38,742,208/2 = 19,371,104) + the replicated norm 2,688.
  CHECK(layer_params_per_rank(m, kMamba, 2).dense == 19'373'792.0);

  // Activations, bf16, t = 1, b = 1, s = 8192, no recompute. Mamba block: the norm's input e·h and in_proj's norm
  // output e·h (2·2688·2 = 10,752 B per token) + the mixer's kept tensors (activations.cpp
  // mamba_saved_bytes_per_token): zxbcdt 2·10,304 + out_x 2·4096 + the gated norm's input 2·4096 + rstd 4·8 + out_proj's
  // input 2·4096 = 45,216 → 55,968 B per token, 458,489,856 B; no attention core.
  ActivationOptions o;
  o.precision = Precision::BF16;
  CHECK(activation_bytes_per_layer(m, kMamba, 1, 8192, o) == doctest::Approx(8192.0 * 55'968));
  // Attention block: norm input + QKV input 10,752 B; Q 2·4096, K and V 2·2·256, O-proj input 2·4096 → 17,408 B;
  // the fp32 logsumexp 4·32 = 128 B → 28,288 B per token.
  CHECK(activation_bytes_per_layer(m, kAttn, 1, 8192, o) == doctest::Approx(8192.0 * 28'288));
}

TEST_CASE("hybrid input errors: one line naming the value") {
  // A character that is not a block.
  CHECK(contains(error_of(write_model("h1.json", R"("layers": 3, "hidden": 256, "heads": 4, "ffn_hidden": 512,
      "vocab": 1000, "seq_len": 128, "activation": "relu2", "layer_pattern": "M*X", "mamba_heads": 8,
      "mamba_head_dim": 32, "mamba_state": 16)")),
                 "'X' at position 2 (valid: M Mamba, * attention, - MLP, E mixture of experts, | a pipeline stage boundary)"));
  // Pattern length against "layers".
  CHECK(contains(error_of(write_model("h2.json", R"("layers": 4, "hidden": 256, "heads": 4, "ffn_hidden": 512,
      "vocab": 1000, "seq_len": 128, "activation": "relu2", "layer_pattern": "M*-", "mamba_heads": 8,
      "mamba_head_dim": 32, "mamba_state": 16)")),
                 "layer_pattern has 3 layers but 'layers' is 4"));
  // Mamba keys without Mamba layers.
  CHECK(contains(error_of(write_model("h3.json", R"("layers": 2, "hidden": 256, "heads": 4, "ffn_hidden": 512,
      "vocab": 1000, "seq_len": 128, "activation": "relu2", "layer_pattern": "*-", "mamba_heads": 8)")),
                 "key 'mamba_heads' needs Mamba layers"));
  // Groups that do not divide the heads.
  CHECK(contains(error_of(write_model("h4.json", R"("layers": 2, "hidden": 256, "heads": 4, "ffn_hidden": 512,
      "vocab": 1000, "seq_len": 128, "activation": "relu2", "layer_pattern": "M-", "mamba_heads": 8,
      "mamba_head_dim": 32, "mamba_state": 16, "mamba_groups": 3)")),
                 "mamba_groups 3 does not divide mamba_heads 8"));
  // A placement key beside the pattern.
  CHECK(contains(error_of(write_model("h5.json", R"("layers": 2, "hidden": 256, "heads": 4, "ffn_hidden": 512,
      "vocab": 1000, "seq_len": 128, "activation": "relu2", "layer_pattern": "*-", "sliding_window": 64)")),
                 "key 'sliding_window' does not combine with 'layer_pattern'"));
  // HF configs: what parsim does not model is refused, never ignored.
  auto hf = [&](const std::string& file, const std::string& extra) {
    return temp_file(file, R"({"model_type": "nemotron_h", "hidden_size": 256, "vocab_size": 1000,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512,
      "hybrid_override_pattern": "ME*", "mamba_num_heads": 8, "mamba_head_dim": 32, "ssm_state_size": 16,
      "n_groups": 2, "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 128,
      "moe_shared_expert_intermediate_size": 256)" + extra + "}");
  };
  const ModelSpec small = resolve_model(hf("hf_ok.json", ""));
  CHECK(small.layer(2) == kAttn);
  CHECK(small.mamba_groups == 2);
  // LatentMoE is read (Nemotron 3 Super); MTP needs its block pattern, whose blocks must be kinds of the main stack.
  CHECK(resolve_model(hf("hf1.json", R"(, "moe_latent_size": 64)")).moe_latent == 64);
  CHECK(contains(error_of(hf("hf2.json", R"(, "num_nextn_predict_layers": 1)")),
                 "num_nextn_predict_layers > 0 needs 'mtp_hybrid_override_pattern'"));
  CHECK(contains(error_of(hf("hf5.json", R"(, "num_nextn_predict_layers": 1, "mtp_hybrid_override_pattern": "*-")")),
                 "is of no kind among the model's layers"));
  CHECK(resolve_model(hf("hf6.json", R"(, "num_nextn_predict_layers": 1, "mtp_hybrid_override_pattern": "*E")"))
            .mtp_kinds.size() == 2);
  CHECK(contains(error_of(write_model("h6.json", R"("layers": 2, "hidden": 256, "heads": 4, "ffn_hidden": 512,
      "vocab": 1000, "seq_len": 128, "activation": "relu2", "layer_pattern": "*-", "moe_latent_size": 64)")),
                 "key 'moe_latent_size' needs 'experts'"));
  CHECK(contains(error_of(write_model("h7.json", R"("layers": 2, "hidden": 256, "heads": 4, "ffn_hidden": 512,
      "vocab": 1000, "seq_len": 128, "activation": "relu2", "layer_pattern": "*-", "mtp_repeated": true)")),
                 "key 'mtp_repeated' needs 'mtp_layers' > 0"));
  CHECK(contains(error_of(hf("hf3.json", R"(, "num_hidden_layers": 4)")),
                 "num_hidden_layers 4 disagrees with the 3 layers of the block pattern"));
  CHECK(contains(error_of(hf("hf4.json", R"(, "use_bias": true)")), "use_bias true is not modelled"));
  // layers_block_type (current transformers) instead of the pattern.
  const std::string listed = temp_file("hf_list.json", R"({"model_type": "nemotron_h", "hidden_size": 256, "vocab_size": 1000,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512,
    "layers_block_type": ["mamba", "mlp", "full_attention"], "mamba_num_heads": 8, "mamba_head_dim": 32,
    "ssm_state_size": 16, "n_groups": 2})");
  const ModelSpec l = resolve_model(listed);
  CHECK(l.layer(0) == kMamba);
  CHECK(l.layer(1) == kMlp);
  CHECK(l.layer(2) == kAttn);
  // `layer_types` alone: NVIDIA's NemotronHConfig writes MLP blocks there as "moe", so an "moe" entry is refused
  // rather than guessed; `attention_head_dim` is read as the head size.
  const std::string typed = temp_file("hf_types.json", R"({"model_type": "nemotron_h", "hidden_size": 256,
    "vocab_size": 1000, "num_attention_heads": 4, "num_key_value_heads": 2, "attention_head_dim": 32,
    "intermediate_size": 512, "layer_types": ["mamba", "moe", "attention"], "mamba_num_heads": 8,
    "mamba_head_dim": 32, "ssm_state_size": 16, "n_groups": 2})");
  CHECK(contains(error_of(typed), "'layer_types' alone cannot place a nemotron_h model's MoE blocks"));
  const std::string dims = temp_file("hf_dims.json", R"({"model_type": "nemotron_h", "hidden_size": 256,
    "vocab_size": 1000, "num_attention_heads": 4, "num_key_value_heads": 2, "attention_head_dim": 32,
    "intermediate_size": 512, "hybrid_override_pattern": "M-*", "mamba_num_heads": 8,
    "mamba_head_dim": 32, "ssm_state_size": 16, "n_groups": 2})");
  CHECK(resolve_model(dims).d() == 32);
}

TEST_CASE("Nemotron-3-Super-120B-A12B: LatentMoE and a repeated hybrid MTP module; 120,668,687,360 parameters") {
  const ModelSpec m = load("nemotron-3-super-120b-a12b.config.json");
  // 88 blocks: 40 Mamba-2, 40 LatentMoE, 8 attention (the pattern's census); latent 1024; one MTP module "*E".
  CHECK(m.layers == 88);
  CHECK(m.count_layers(kMamba) == 40);
  CHECK(m.count_layers(kMoe) == 40);
  CHECK(m.count_layers(kAttn) == 8);
  CHECK(m.moe_latent == 1024);
  CHECK(m.expert_width() == 1024);
  CHECK(m.mtp_layers == 1);
  CHECK(m.mtp_kinds == std::vector<LayerKind>{kAttn, kMoe});
  // Mamba block (h 4096, 128 heads × 64 = d_in 8192, N 128, G 8, K 4): in_proj 4096·(2·8192 + 2·8·128 + 128)
  // = 4096·18,560 = 76,021,760; conv 10,240·4 + 10,240 = 51,200; A, D, dt bias 3·128 = 384; gated norm 8,192;
  // out_proj 8,192·4096 = 33,554,432 → 109,635,968; + norm 4,096 = 109,640,064.
  CHECK(layer_params(m, kMamba).total() == 109'640'064);
  // Attention block: 4096·4096 + 2·4096·256 + 4096·4096 = 35,651,584; + norm = 35,655,680.
  CHECK(layer_params(m, kAttn).total() == 35'655'680);
  // LatentMoE block: each of 512 experts up and down at the latent width, 2·1024·2688 = 5,505,024 (2,818,572,288 in
  // all); latent projections 2·4096·1024 = 8,388,608; shared expert 2·4096·5376 = 44,040,192; router 512·4096
  // = 2,097,152; norm 4,096 → 2,873,102,336 (the router's e_score_correction_bias, 512 fp32 values, is a buffer
  // updated outside the optimizer, as for DeepSeek-V3: not counted). Active (22 experts): 2,873,102,336
  // − 490·5,505,024 = 175,640,576.
  const LayerParams e = layer_params(m, kMoe);
  CHECK(e.expert == 5'505'024);
  CHECK(e.latent == 8'388'608);
  CHECK(e.total() == 2'873'102'336);
  CHECK(e.active(22) == 175'640'576);
  // Whole model: 40·109,640,064 + 8·35,655,680 + 40·2,873,102,336 + embedding and head 2·131,072·4096
  // (1,073,741,824) + final norm 4,096 = 120,668,687,360 ("120B"); active 40·109,640,064 + 8·35,655,680
  // + 40·175,640,576 + 1,073,745,920 = 12,770,216,960 ("12B active") — the active count a public parser derives from
  // the BF16 checkpoint's safetensors headers (total minus the inactive backbone experts).
  const ParamCounts c = count_params(m);
  CHECK(c.total == 120'668'687'360);
  CHECK(c.active == 12'770'216'960);
  // The MTP module: eh_proj 2·4096·4096 = 33,554,432, three norms 12,288, an attention and a LatentMoE block
  // 35,655,680 + 2,873,102,336 → 2,942,324,736; with it 123,611,012,096 — the BF16 checkpoint's safetensors headers
  // give exactly these two (MTP 2,942,324,736, BF16 weights 123,611,012,096); Hugging Face's listed total
  // 123,611,033,088 adds the 41 fp32 routing-bias buffers, 41·512 = 20,992.
  CHECK(c.mtp == 2'942'324'736);
  CHECK(c.total + c.mtp == 123'611'012'096);
  // Megatron-Bridge trains it as two depths over that one module (mtp_repeated): the weights counted once.
  const ModelSpec twin = load("nemotron_3_super_parsim.json");
  CHECK(twin.mtp_layers == 2);
  CHECK(twin.mtp_repeated);
  CHECK(count_params(twin).total == c.total);
  CHECK(count_params(twin).mtp == c.mtp);

  // FLOPs per token, against Megatron-Bridge's flop_utils.py hybrid_flops (moe_latent_size branch): routed experts
  // 4·1024·2688·22 = 242,221,056, latent projections 4·4096·1024 = 16,777,216, shared 4·4096·5376 = 88,080,384
  // → 347,078,656, the table's 0.34708 GFLOP per MoE layer.
  const LayerFlops f = layer_forward_flops(m, kMoe, 1, 1);
  CHECK(f.experts == 242'221'056.0);
  CHECK(f.latent == 16'777'216.0);
  CHECK(f.experts + f.latent + f.shared == 347'078'656.0);
  // Mamba projections 2·4096·18,560 + 2·8192·4096 = 219,152,384, Bridge's 2h·(2·d_in + 2GN + H) + 2·d_in·h with
  // d_in = 2h = 8192 (exact for Super, whose 128 × 64 channels are 2h).
  CHECK(layer_forward_flops(m, kMamba, 1, 1).mamba_proj == 219'152'384.0);
  // The MTP depths' model FLOPs (×3 for training): per depth eh_proj 4·4096² = 67,108,864, the LM head
  // 2·4096·131,072 = 1,073,741,824, an attention block at s = 8192 (QKV 2·4096·4608 = 37,748,736, O 33,554,432,
  // scores and ·V 2·2·32·128·8192 = 134,217,728 full) and the MoE block 347,078,656 → 1,693,450,240 per token;
  // ×2 depths ×3 = 10,160,701,440 per token.
  CHECK(mtp_flops(twin, 1, 8192) / 8192 == doctest::Approx(10'160'701'440.0));

  // One rank at tp 2 with SP: the latent projections whole on every rank (duplicated linears), on the rank's
  // 8192/2 = 4096 tokens; each of 8 local experts (ep 64) gets 22·4096·... tokens at width 1024.
  const LayerWork w = layer_work(m, kMoe, 1, 8192, 2, 1, true, Precision::BF16, ExpertSplit{64, 1, 1.0});
  int latent = 0;
  for (const GemmShape& g : w.gemms) {
    if (g.kind == GemmKind::MoeLatent) {
      ++latent;
      CHECK(g.m == 4096);
      CHECK(g.n * g.k == 4096 * 1024);
    }
    if (g.kind == GemmKind::RoutedExpert) CHECK((g.k == 1024 || g.n == 1024));
  }
  CHECK(latent == 2);
  // Per-rank parameters at tp 2: the shared expert ÷2 (22,020,096), router 2,097,152, the latent projections whole
  // 8,388,608, norm 4,096 → 32,509,952 dense; 8 local experts · 5,505,024 = 44,040,192 expert.
  const RankParams rp = layer_params_per_rank(m, kMoe, 2, 64, 1);
  CHECK(rp.dense == 32'509'952.0);
  CHECK(rp.expert == 44'040'192.0);
}
