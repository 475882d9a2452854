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
                 "'X' at position 2 (valid: M Mamba, * attention, - MLP, E mixture of experts)"));
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
  CHECK(contains(error_of(hf("hf1.json", R"(, "moe_latent_size": 64)")), "moe_latent_size"));
  CHECK(contains(error_of(hf("hf2.json", R"(, "num_nextn_predict_layers": 1)")), "num_nextn_predict_layers"));
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
}
