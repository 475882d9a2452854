// validate_plan / plan_warnings: one check per error class of plans/plan.hpp and the foundation issue.
#include "fixtures.hpp"
#include "plans/scenario.hpp"

#include <doctest/doctest.h>
#include <fstream>
#include <filesystem>

using namespace parsim;
using doctest::Contains;
using parsim::test::error_of;

namespace {
doctest::String err(const std::string& plan, const ModelSpec& m, const Hardware& hw, const TrainingConfig& t) {
  return error_of([&] { validate_plan(parse_plan(plan), m, hw, t); });
}
bool has_warning(const std::vector<std::string>& w, const std::string& needle) {
  for (const auto& s : w)
    if (s.find(needle) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_CASE("valid plans pass") {
  const auto h100 = test::node_of(8);
  // llama2-7b, 64 GPUs, gbs 1024 (4M tokens at s = 4096): 1024 % (dp4 · mbs1) = 0.
  CHECK(err("tp8pp2dp4", test::llama2_7b(), h100, test::train(4096, 1024)) == "<no error>");
  // llama3-70b interleaved: m = 512 / (16·1) = 32, 32 % pp8 = 0; 8·5 = 40 chunks ≤ 80 layers.
  TrainingConfig t = test::train(8192, 512);
  t.schedule = Schedule::Interleaved;
  CHECK(err("tp4pp8dp16vpp5zero1", test::llama3_70b(), h100, t) == "<no error>");
  // CP: 8192 % (2·2) = 0.
  CHECK(err("tp8pp4cp2dp2", test::llama3_70b(), h100, test::train(8192, 512)) == "<no error>");
  CHECK(plan_error(parse_plan("tp8pp2dp4"), test::llama2_7b(), h100, test::train(4096, 1024)) == std::nullopt);
}

TEST_CASE("tp must divide the attention heads; KV heads split or replicated") {
  const auto h100 = test::node_of(8);
  // 32 heads: tp3 leaves 32 mod 3 = 2; valid tp are the divisors 1, 2, 4, 8, 16, 32.
  const auto e = err("tp3dp2", test::llama2_7b(), h100, test::train(4096, 1024));
  CHECK(e == Contains("tp3 does not divide the 32 attention heads"));
  CHECK(e == Contains("valid tp: 1, 2, 4, 8, 16, 32"));
  // 48 heads, 6 KV heads, tp4: 48 mod 4 = 0 but 6 mod 4 = 2 and 4 mod 6 = 4: no even split, no whole replication.
  CHECK(err("tp4", test::tiny(8, 48, 6), h100, test::train(1024, 8)) == Contains("6 KV heads"));
  // 32 heads, 4 KV heads, tp8: 8 mod 4 = 0 → each KV head replicated 8/4 = 2x, a warning not an error.
  const auto m = test::tiny(8, 32, 4);
  CHECK(err("tp8", m, h100, test::train(1024, 8)) == "<no error>");
  CHECK(has_warning(plan_warnings(parse_plan("tp8"), m, h100, test::train(1024, 8)), "replicated 2x"));
}

TEST_CASE("tp against the node: inside a node or whole nodes; spanning nodes is reported") {
  // 12-GPU nodes do not exist, but 8-GPU nodes with a model of 48 heads allow tp6 (48 mod 6 = 0): 8 mod 6 ≠ 0 and
  // 6 mod 8 ≠ 0 → a TP group would straddle a node boundary.
  CHECK(err("tp6", test::tiny(8, 48, 48), test::node_of(8), test::train(1024, 8)) == Contains("does not fit nodes of 8"));
  // tp8 on 4-GPU nodes: 8 = 2 × 4, allowed, warned.
  const auto hw4 = test::node_of(4);
  CHECK(err("tp8dp2", test::llama2_7b(), hw4, test::train(4096, 1024)) == "<no error>");
  CHECK(has_warning(plan_warnings(parse_plan("tp8dp2"), test::llama2_7b(), hw4, test::train(4096, 1024)),
                    "tp8 spans 2 nodes of 4 GPUs"));
}

TEST_CASE("pipeline chunks need a layer each; vpp rules") {
  const auto h100 = test::node_of(8);
  // llama2-7b: 32 layers; pp8 × vpp8 = 64 > 32.
  TrainingConfig t = test::train(4096, 1024);
  t.schedule = Schedule::Interleaved;
  CHECK(err("pp8vpp8dp8", test::llama2_7b(), h100, t) == Contains("64 pipeline chunks exceed the 32 layers"));
  // pp64: 64 > 32 layers.
  CHECK(err("pp64", test::llama2_7b(), h100, test::train(4096, 1024)) == Contains("exceed the 32 layers"));
  // vpp without a pipeline.
  CHECK(err("vpp2dp8", test::llama2_7b(), h100, t) == Contains("needs pipeline parallelism"));
  // pp2 interleaving without P2P overlap (Megatron-LM needs pp > 2 then).
  TrainingConfig no_overlap = t;
  no_overlap.overlap_p2p = false;
  CHECK(err("pp2vpp2dp4", test::llama2_7b(), h100, no_overlap) == Contains("pp > 2"));
  CHECK(err("pp2vpp2dp4", test::llama2_7b(), h100, t) == "<no error>");
}

TEST_CASE("schedule: interleaved exactly when vpp > 1") {
  const auto h100 = test::node_of(8);
  TrainingConfig t = test::train(4096, 1024);
  t.schedule = Schedule::Interleaved;
  CHECK(err("tp8pp2dp4", test::llama2_7b(), h100, t) == Contains("needs vpp > 1"));
  t.schedule = Schedule::OneFOneB;
  CHECK(err("tp8pp2dp4vpp2", test::llama2_7b(), h100, t) == Contains("not 1f1b"));
  t.schedule = Schedule::GPipe;
  CHECK(err("tp8pp2dp4vpp2", test::llama2_7b(), h100, t) == Contains("not gpipe"));
  CHECK(err("tp8pp2dp4", test::llama2_7b(), h100, t) == "<no error>");
}

TEST_CASE("batch: gbs divisible by dp × mbs, positive sizes; interleaving needs m % pp == 0") {
  const auto h100 = test::node_of(8);
  // dp4 · mbs2 = 8; 100 mod 8 = 4 → neighbours 96 and 104.
  const auto e = err("tp8pp2dp4", test::llama2_7b(), h100, test::train(4096, 100, 2));
  CHECK(e == Contains("global batch 100 is not divisible by dp × mbs = 4 × 2 = 8"));
  CHECK(e == Contains("96 or 104"));
  CHECK(err("tp8pp2dp4", test::llama2_7b(), h100, test::train(0, 1024)) == Contains("sequence length"));
  CHECK(err("tp8pp2dp4", test::llama2_7b(), h100, test::train(4096, -8)) == Contains("--gbs"));
  CHECK(err("tp8pp2dp4", test::llama2_7b(), h100, test::train(4096, 1024, 0)) == Contains("--mbs"));
  // pp4 vpp2 dp2: gbs 12 → m = 12 / 2 = 6; 6 mod 4 = 2 → needs gbs a multiple of dp·mbs·pp = 8.
  TrainingConfig t = test::train(4096, 12);
  t.schedule = Schedule::Interleaved;
  const auto ei = err("pp4vpp2dp2", test::llama2_7b(), h100, t);
  CHECK(ei == Contains("= 6 to be a multiple of pp4"));
  CHECK(ei == Contains("a multiple of 8"));
  // m = 16 / 2 = 8, 8 mod 4 = 0.
  t.gbs = 16;
  CHECK(err("pp4vpp2dp2", test::llama2_7b(), h100, t) == "<no error>");
}

TEST_CASE("context parallelism needs seq % (2·cp) == 0; sequence parallelism needs tp | seq/cp") {
  const auto h100 = test::node_of(8);
  // cp4: 2·4 = 8; 4100 mod 8 = 4.
  CHECK(err("cp4dp2", test::llama2_7b(), h100, test::train(4100, 64)) == Contains("2 × cp = 8"));
  CHECK(err("cp4dp2", test::llama2_7b(), h100, test::train(4096, 64)) == "<no error>");
  // sp with tp8, cp1: 4100 mod 8 = 4 (the seq passes the CP rule trivially with cp1).
  TrainingConfig t = test::train(4100, 64);
  t.sp = true;
  CHECK(err("tp8dp2", test::llama2_7b(), h100, t) == Contains("sequence parallelism"));
  // sp with tp1 is a no-op (Megatron turns it off), reported as a warning.
  t.seq = 4096;
  CHECK(err("dp2", test::llama2_7b(), h100, t) == "<no error>");
  CHECK(has_warning(plan_warnings(parse_plan("dp2"), test::llama2_7b(), h100, t), "no effect with tp1"));
}

TEST_CASE("chunked attention (Llama 4): any sequence length; context parallelism only up to one chunk") {
  // llama2-7b's 32 layers with every 4th global and the others chunked in 8,192-token chunks (Llama 4's pattern).
  const auto h100 = test::node_of(8);
  ModelSpec m = test::llama2_7b();
  m.attention_chunk = 8192;
  m.layer_kinds.assign(32, LayerKind{AttentionKind::Chunked, FfnKind::Dense});
  for (int i = 3; i < 32; i += 4) m.layer_kinds[static_cast<std::size_t>(i)].attention = AttentionKind::Full;
  CHECK(err("tp8pp2dp4", m, h100, test::train(8192, 1024)) == "<no error>");
  CHECK(err("tp8pp2dp4", m, h100, test::train(32768, 1024)) == "<no error>");
  CHECK(err("tp8cp2dp4", m, h100, test::train(8192, 1024)) == "<no error>");  // one chunk: plain causal, the ring
  const auto e = err("tp8cp2dp4", m, h100, test::train(32768, 1024));
  CHECK(e == Contains("context parallelism (cp2) with chunked attention beyond one chunk"));
  CHECK(e == Contains("use cp 1, or --seq 8192 or less"));
  // A chunk size on a model with no chunked layer (attention_chunk_size null is 0; a hand-built spec may set one):
  // nothing to refuse.
  m.layer_kinds.clear();
  CHECK(err("tp8cp2dp4", m, h100, test::train(32768, 1024)) == "<no error>");
}

TEST_CASE("CPU offloading: Megatron-Core's conditions and a stated CPU-GPU link") {
  Hardware h100 = test::node_of(8);
  h100.node.host_link_gbytes_per_s = 64;  // PCIe Gen5 x16, each way (the h100 preset's)
  TrainingConfig t = test::train(4096, 1024);
  t.stack = Stack::Megatron;
  t.cpu_offload_layers = 8;
  CHECK(err("tp8dp8", test::llama2_7b(), h100, t) == "<no error>");
  CHECK(err("tp8pp2dp4", test::llama2_7b(), h100, t) == Contains("without pipeline parallelism only (pp1)"));
  t.cpu_offload_layers = 32;  // llama2-7b has 32 layers: at most 31
  CHECK(err("tp8dp8", test::llama2_7b(), h100, t) == Contains("not fewer than the 32 layers"));
  t.cpu_offload_layers = 8;
  TrainingConfig rc = t;
  rc.recompute = Recompute::Full;
  CHECK(err("tp8dp8", test::llama2_7b(), h100, rc) == Contains("with activation recomputation (--recompute none)"));
  TrainingConfig py = t;
  py.stack = Stack::PyTorch;
  CHECK(err("tp8dp8", test::llama2_7b(), h100, py) == Contains("needs the Megatron-Core stack"));
  Hardware no_link = h100;
  no_link.node.host_link_gbytes_per_s = 0;
  CHECK(err("tp8dp8", test::llama2_7b(), no_link, t) == Contains("states no CPU–GPU link bandwidth"));
}

TEST_CASE("fp8 only on GPUs with fp8 tensor cores") {
  TrainingConfig t = test::train(4096, 1024);
  t.precision = Precision::FP8;
  CHECK(err("tp8pp2dp4", test::llama2_7b(), test::node_of(8, /*fp8=*/false), t) == Contains("fp8"));
  CHECK(err("tp8pp2dp4", test::llama2_7b(), test::node_of(8, /*fp8=*/true), t) == "<no error>");
}

TEST_CASE("hsdp group must divide dp in a plan built in code; degrees positive") {
  Plan p = parse_plan("dp8hsdp4");
  p.hsdp_group = 3;  // 8 mod 3 = 2
  CHECK(error_of([&] { validate_plan(p, test::llama2_7b(), test::node_of(8), test::train(4096, 1024)); }) ==
        Contains("hsdp3 does not divide dp8"));
  Plan z;
  z.tp = 0;
  CHECK(error_of([&] { validate_plan(z, test::llama2_7b(), test::node_of(8), test::train(4096, 1024)); }) ==
        Contains("degree below 1"));
}

TEST_CASE("warnings: uneven chunks, few micro-batches, sharding over one rank, ZeRO-2/3 with PP") {
  const auto h100 = test::node_of(8);
  const auto m = test::llama3_405b();
  TrainingConfig t = test::train(8192, 512);
  t.schedule = Schedule::Interleaved;
  // 126 layers over 64 chunks: first and last chunk 1 layer, the others 2.
  CHECK(has_warning(plan_warnings(parse_plan("tp8pp8dp4vpp8"), m, h100, t), "first chunk 1, last chunk 1"));
  // pp8, gbs 16, dp4: m = 16 / 4 = 4 < 8 → bubble at least 7 / (4 + 7) = 7/11.
  CHECK(has_warning(plan_warnings(parse_plan("tp8pp8dp4"), m, h100, test::train(8192, 16)), "7/11"));
  CHECK(has_warning(plan_warnings(parse_plan("tp8zero1"), m, h100, test::train(8192, 16)), "shards nothing"));
  CHECK(has_warning(plan_warnings(parse_plan("tp8pp8dp4zero3"), m, h100, test::train(8192, 512)), "DeepSpeed"));
  // A clean plan has no warnings.
  CHECK(plan_warnings(parse_plan("tp8pp2dp4"), test::llama2_7b(), h100, test::train(4096, 1024)).empty());
}

TEST_CASE("--recompute op: torchtitan's per-op policy, on the PyTorch stack's dense blocks only, one line each") {
  CHECK(parse_recompute("op") == Recompute::Op);
  CHECK(to_string(Recompute::Op) == "op");
  CHECK(error_of([] { parse_recompute("sac"); }) ==
        "--recompute 'sac' is not valid (choose none, selective, full or op)");
  TrainingConfig t = test::train(4096, 1024);
  t.recompute = Recompute::Op;
  t.stack = Stack::PyTorch;
  CHECK(err("dp8fsdp", test::llama2_7b(), test::node_of(8), t) == "<no error>");
  t.stack = Stack::Megatron;
  CHECK(err("tp8pp2dp4", test::llama2_7b(), test::node_of(8), t) ==
        Contains("--recompute op is torchtitan's per-op selective checkpointing (--stack pytorch), got --stack megatron"));
  t.stack = Stack::PyTorch;
  t.flash_attention = false;
  CHECK(err("dp8fsdp", test::llama2_7b(), test::node_of(8), t) == Contains("--attention unfused"));
  t.flash_attention = true;
  CHECK(err("dp8fsdp", test::mixtral_8x7b(), test::node_of(8), t) == Contains("has expert layers"));
}

TEST_CASE("--recompute-modules: Megatron-Core's module names and its own validation, one line each") {
  // transformer_config.py: the allowed modules; mla_up_proj only with multi-latent attention; shared_experts not with
  // --moe-shared-expert-overlap; moe not with --overlap-moe-expert-parallel-comm. parsim also names the no-ops.
  CHECK(to_string(parse_recompute_modules("moe_act,layernorm")) == "moe_act,layernorm");
  CHECK(to_string(parse_recompute_modules("layernorm moe_act,layernorm")) == "moe_act,layernorm");
  CHECK(error_of([] { parse_recompute_modules("attn"); }) ==
        "--recompute-modules: 'attn' is not a module (choose from core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, "
        "shared_experts)");
  CHECK(error_of([] { parse_recompute_modules(","); }) != "<no error>");
  TrainingConfig t = test::train(4096, 1024);
  t.stack = Stack::Megatron;
  t.recompute_modules = parse_recompute_modules("mlp");
  // Only with selective recompute.
  CHECK(err("tp8pp2dp4", test::llama2_7b(), test::node_of(8), t) ==
        Contains("needs --recompute selective (Megatron-Core --recompute-granularity selective), got --recompute none"));
  t.recompute = Recompute::Selective;
  CHECK(err("tp8pp2dp4", test::llama2_7b(), test::node_of(8), t) == "<no error>");
  // Megatron-Core's option: not on the PyTorch stack.
  TrainingConfig p = t;
  p.stack = Stack::PyTorch;
  CHECK(err("tp8pp2dp4", test::llama2_7b(), test::node_of(8), p) == Contains("--stack megatron"));
  // MoE modules on a dense model; mla_up_proj without MLA; mlp when every layer is MoE.
  t.recompute_modules = parse_recompute_modules("moe_act");
  CHECK(err("tp8pp2dp4", test::llama2_7b(), test::node_of(8), t) ==
        Contains("moe_act: llama2-7b is a dense model without experts"));
  t.recompute_modules = parse_recompute_modules("mla_up_proj");
  CHECK(err("tp1pp1dp8ep8", test::mixtral_8x7b(), test::node_of(8), t) ==
        Contains("mla_up_proj: mixtral-8x7b has no multi-latent attention"));
  t.recompute_modules = parse_recompute_modules("mlp");
  CHECK(err("tp1pp1dp8ep8", test::mixtral_8x7b(), test::node_of(8), t) == Contains("every layer of mixtral-8x7b is an MoE layer"));
  t.recompute_modules = parse_recompute_modules("shared_experts");
  CHECK(err("tp1pp1dp8ep8", test::mixtral_8x7b(), test::node_of(8), t) == Contains("has no shared experts"));
  // The pairs Megatron-Core rejects.
  t.moe_shared_expert_overlap = true;
  CHECK(err("tp1pp1dp8ep8", test::deepseek_v3_like(), test::node_of(8), t) == Contains("--moe-shared-expert-overlap"));
  t.moe_shared_expert_overlap = false;
  t.recompute_modules = parse_recompute_modules("moe");
  t.moe_a2a_overlap = true;
  CHECK(err("tp1pp1dp8ep8", test::mixtral_8x7b(), test::node_of(8), t) == Contains("--moe-a2a-overlap"));
  t.moe_a2a_overlap = false;
  t.recompute_modules = parse_recompute_modules("layernorm,moe_act,moe");
  CHECK(err("tp1pp1dp8ep8", test::mixtral_8x7b(), test::node_of(8), t) == "<no error>");
  // layernorm on a dense, standard-attention model is valid but acts on nothing (TE fuses both norms): a warning.
  t.recompute_modules = parse_recompute_modules("layernorm");
  CHECK(has_warning(plan_warnings(parse_plan("tp8pp2dp4"), test::llama2_7b(), test::node_of(8), t),
                    "--recompute-modules layernorm has no effect on llama2-7b"));
  CHECK(!has_warning(plan_warnings(parse_plan("tp1pp1dp8ep8"), test::mixtral_8x7b(), test::node_of(8), t),
                     "layernorm has no effect"));
}

TEST_CASE("hybrid models: Megatron-Core's MambaModel only; tp splits Mamba heads and groups; no cp with Mamba") {
  const auto h100 = test::node_of(8);
  const ModelSpec m = resolve_model(std::string(PARSIM_TEST_DATA) + "/models/nemotron-3-nano-30b-a3b.config.json");
  TrainingConfig t = test::train(8192, 512);
  t.stack = Stack::Megatron;
  // 64 Mamba heads in 8 groups: tp8 splits both (8 heads, 1 group per rank).
  CHECK(err("tp8pp1dp1ep8etp1", m, h100, t) == "<no error>");
  // tp16 would leave half a group per rank (MambaMixer asserts ngroups % tp == 0): valid 1, 2, 4, 8.
  CHECK(err("tp16pp1dp1ep8etp1", m, test::node_of(16), t) ==
        Contains("tp16 does not divide the 64 Mamba heads and 8 groups"));
  CHECK(err("tp1pp1cp2dp4ep8etp1", m, h100, t) == Contains("context parallelism of Mamba-2 mixers is not modelled"));
  TrainingConfig py = t;
  py.stack = Stack::PyTorch;
  CHECK(err("tp1pp1dp8ep8etp1", m, h100, py) == Contains("modelled as Megatron-Core's MambaModel"));
  TrainingConfig a2a = t;
  a2a.moe_a2a_overlap = true;
  CHECK(err("tp1pp1dp8ep8etp1", m, h100, a2a) == Contains("--moe-a2a-overlap is not modelled for a hybrid model"));
  // --no-rope-fusion on a model without positions names what it has ("none"), not "learned".
  TrainingConfig norope = t;
  norope.rope_fusion = false;
  CHECK(err("tp1pp1dp8ep8etp1", m, h100, norope) == Contains("has no rotary embedding (its \"position\" is none)"));
  // LatentMoE (Nemotron 3 Super): Megatron-Core's MoELayer refuses shared-expert overlap with latent projections.
  const ModelSpec super = resolve_model(std::string(PARSIM_TEST_DATA) + "/models/nemotron_3_super_parsim.json");
  CHECK(err("tp1pp1dp64ep64etp1", super, test::node_of(64), t) == "<no error>");
  TrainingConfig overlap = t;
  overlap.moe_shared_expert_overlap = true;
  CHECK(err("tp1pp1dp64ep64etp1", super, test::node_of(64), overlap) ==
        Contains("--moe-shared-expert-overlap does not combine with the latent MoE"));
}

TEST_CASE("hybrid models: '|' in the layer pattern places the pipeline stages, as Megatron-Core's hybrid pattern") {
  // A 12-block hybrid in 4 segments of 2 / 4 / 3 / 3 layers (Megatron-Core hybrid_layer_allocation.py: '|' separates
  // pipeline segments, chunk v·pp + p takes segment v·pp + p).
  const std::string file = [] {
    const std::string p = std::filesystem::temp_directory_path().string() + "/parsim_hybrid_segments.json";
    std::ofstream(p) << R"({"name": "segments", "layers": 12, "hidden": 256, "heads": 4, "ffn_hidden": 512,
      "vocab": 1000, "seq_len": 128, "activation": "relu2", "layer_pattern": "M-|M*M-|M-M|*M-",
      "mamba_heads": 8, "mamba_head_dim": 32, "mamba_state": 16, "mamba_groups": 2})";
    return p;
  }();
  const ModelSpec m = resolve_model(file);
  CHECK(m.layers == 12);
  CHECK(m.pipeline_segments == std::vector<int>{2, 4, 3, 3});
  const auto node = test::node_of(8);
  TrainingConfig t = test::train(128, 64);
  t.stack = Stack::Megatron;
  t.overlap_p2p = true;
  t.schedule = Schedule::Auto;  // interleaved with vpp, 1f1b without
  auto resolved_err = [&](const std::string& plan, TrainingConfig tc) {
    return err(plan, m, node, resolve_training(parse_plan(plan), m, tc));
  };
  // pp 4 (or pp 2 × vpp 2): the segments become the layout "Et*2|t*4|t*3|t*3L" and the chunks hold 2, 4, 3, 3 layers.
  const TrainingConfig r = resolve_training(parse_plan("tp1pp4dp2"), m, t);
  REQUIRE(r.split.layout != nullptr);
  CHECK(*r.split.layout == "Et*2|t*4|t*3|t*3L");
  CHECK(layers_per_chunk(m.layers, 4, 1, r.split) == std::vector<int>{2, 4, 3, 3});
  CHECK(resolved_err("tp1pp4dp2", t) == "<no error>");
  CHECK(resolved_err("tp1pp2dp4vpp2", t) == "<no error>");
  // Any other count of chunks is refused, naming both; so are the first/last-stage options (Megatron-Core refuses them
  // with '|').
  CHECK(resolved_err("tp1pp2dp4", t) == Contains("has 4 pipeline segments ('|'), the plan pp2 = 2 chunks"));
  TrainingConfig first = t;
  first.split.first_stage_layers = 2;
  CHECK(resolved_err("tp1pp4dp2", first) == Contains("places its pipeline stages with '|'"));
  // Without '|' (Nemotron 3 Nano's pattern, 52 layers): no virtual pipeline, and pp must divide the layers.
  const ModelSpec nano = resolve_model(std::string(PARSIM_TEST_DATA) + "/models/nemotron-3-nano-30b-a3b.config.json");
  auto nano_err = [&](const std::string& plan) {
    TrainingConfig tc = test::train(8192, 512);
    tc.stack = Stack::Megatron;
    tc.overlap_p2p = true;
    tc.schedule = Schedule::Auto;
    return err(plan, nano, node, resolve_training(parse_plan(plan), nano, tc));
  };
  CHECK(nano_err("tp1pp4dp2ep2etp1") == "<no error>");  // 52 / 4 = 13
  CHECK(nano_err("tp1pp8dp1ep1etp1") == Contains("pp8 does not divide the 52 layers"));
  CHECK(nano_err("tp1pp2dp4vpp2ep4etp1") == Contains("interleaves a hybrid model only along '|' pipeline segments"));
  std::filesystem::remove(file);
}
