// Issue 9 items 6 and 8: stack defaults and pipeline details as Megatron runs them, and outputs that say what matters
// first (a plan that does not fit, MFU with causal attention counted as causal). Each expected value is derived in a
// comment before its check.
#include "helpers.hpp"
#include "plans/scenario.hpp"
#include "sim/present/render.hpp"
#include "sim/step/costs.hpp"

#include <doctest/doctest.h>

using namespace parsim;
using namespace parsim::testing;

namespace {
Scenario llama7b(const std::string& plan, Stack stack, bool sp, int gpn = 0, bool tp_overlap = false) {
  ScenarioInput in;
  in.model = "llama2-7b";
  in.plan = plan;
  in.gpus_per_node = gpn;
  in.train.seq = 4096;
  in.train.gbs = 64;
  in.train.stack = stack;
  in.train.sp_auto = false;
  in.train.sp = sp;
  in.train.tp_comm_overlap_auto = false;
  in.train.tp_comm_overlap = tp_overlap;
  return resolve_scenario(in);
}
}  // namespace

TEST_CASE("a plan that does not fit says so first: warnings, JSON, table headline") {
  // llama3-70b (70.6 B params) on dp8 zero0 bf16: Megatron DDP holds 2 + 4 + 12 = 18 B per parameter = 1.27 TB per
  // GPU, far beyond an 80 GB H100.
  const Scenario sc = scenario("llama3-70b", "dp8", "h100", 8, 1, 4096);
  const StepReport r = evaluate(sc);
  REQUIRE_FALSE(r.memory.fits);
  REQUIRE_FALSE(r.warnings.empty());
  CHECK(r.warnings.front().rfind("DOES NOT FIT", 0) == 0);
  const auto j = report_to_json(sc, r, std::nullopt);
  CHECK(j["fits"] == false);
  CHECK(j["warnings"][0].get<std::string>().rfind("DOES NOT FIT", 0) == 0);
  const std::string table = report_to_table(sc, r, std::nullopt);
  CHECK(table.rfind("!! DOES NOT FIT", 0) == 0);  // the very first line
  // A plan that fits has no such line and starts with the usual headline.
  const Scenario ok = scenario("llama2-7b", "tp8dp1", "h100", 8, 1, 4096);
  const StepReport ro = evaluate(ok);
  REQUIRE(ro.memory.fits);
  for (const auto& w : ro.warnings) CHECK(w.find("DOES NOT FIT") == std::string::npos);
  CHECK(report_to_json(ok, ro, std::nullopt)["fits"] == true);
  CHECK(report_to_table(ok, ro, std::nullopt).rfind("parsim predict", 0) == 0);
}

TEST_CASE("MFU counts causal attention as causal; the full-s² figure is kept beside it") {
  // llama3-8b: 32 layers, h = heads·d = 32·128 = 4096. The attention core's forward (QKᵀ and P·V) is 2 GEMMs of
  // 2·s²·h FLOPs per sequence over the full s²; a causal mask leaves half. Model FLOPs are 3 × forward, so the full
  // count exceeds the causal one by 3 · L · (4·s²·h − 2·s²·h) · gbs = 3 · 32 · 2 · s² · 4096 · gbs.
  const std::int64_t s = 8192, gbs = 8;
  const Scenario sc = scenario("llama3-8b", "tp8dp1", "h100", gbs, 1, s);
  const StepReport r = evaluate(sc);
  const double diff = 3.0 * 32 * 2.0 * static_cast<double>(s) * static_cast<double>(s) * 4096 * gbs;
  CHECK(r.model_flops_full_attention_per_step - r.model_flops_per_step == doctest::Approx(diff).epsilon(1e-9));
  CHECK(r.mfu < r.mfu_full_attention);
  CHECK(r.mfu / r.mfu_full_attention ==
        doctest::Approx(r.model_flops_per_step / r.model_flops_full_attention_per_step).epsilon(1e-12));
}

TEST_CASE("pipeline sends carry 1/tp when Megatron scatters them") {
  // A = b·s·h·2 B = 1·4096·4096·2 = 33,554,432 B. Megatron-Core without SP sends A from every TP rank; with SP, or on
  // the legacy stack (scatter-gather optimisation, Narayanan 2021 §4.1), each TP rank sends A/t = 4,194,304 B.
  CHECK(compute_step_costs(llama7b("tp8pp2dp1", Stack::Megatron, false)).p2p_bytes == 33554432.0);
  CHECK(compute_step_costs(llama7b("tp8pp2dp1", Stack::Megatron, true)).p2p_bytes == 4194304.0);
  const StepCosts legacy = compute_step_costs(llama7b("tp8pp2dp1", Stack::MegatronLegacy, false));
  CHECK(legacy.p2p_bytes == 4194304.0);
  // The legacy receiver re-gathers the activation over the TP group (NVLink), so its p2p time exceeds the bare send
  // of A/t that the SP case pays.
  CHECK(legacy.p2p_s > compute_step_costs(llama7b("tp8pp2dp1", Stack::Megatron, true)).p2p_s);
}

TEST_CASE("TP communication overlap never hides a TP group that spans nodes") {
  // tp8 on 8-GPU nodes: TE userbuffers hide part of the TP collectives (exposed < total). tp8 on 4-GPU nodes: the
  // group spans 2 nodes, userbuffers need NVLink/IPC peers, so everything stays exposed — and the plan says so.
  const StepCosts inside = compute_step_costs(llama7b("tp8dp2", Stack::Megatron, true, 8, true));
  CHECK(inside.layer.fwd.tp_exposed_s < inside.layer.fwd.tp_s);
  const Scenario span = llama7b("tp8dp2", Stack::Megatron, true, 4, true);
  const StepCosts across = compute_step_costs(span);
  CHECK(across.layer.fwd.tp_exposed_s == across.layer.fwd.tp_s);
  // (The backward's SP re-gather of the layer input still runs beside the dgrad GEMM: Megatron-Core issues it as an
  // asynchronous NCCL all-gather, which needs no userbuffers — so only the forward is checked for full exposure.)
  CHECK(across.layer.bwd.tp_exposed_s > inside.layer.bwd.tp_exposed_s);
  bool said = false;
  for (const auto& w : plan_warnings(span.plan, span.model, span.hw, span.train))
    said = said || w.find("--tp-comm-overlap cannot hide them") != std::string::npos;
  CHECK(said);
}

TEST_CASE("Megatron-Core's options for lighter first/last pipeline stages") {
  // --decoder-first/last-pipeline-num-layers 5/3 on 32 layers, pp4: the 2 middle stages split 32 − 5 − 3 = 24 → 12.
  PipelineSplit fl;
  fl.first_stage_layers = 5, fl.last_stage_layers = 3;
  CHECK(layers_per_chunk(32, 4, 1, fl) == std::vector<int>{5, 12, 12, 3});
  // Llama-3.1-405B (126 layers) on pp16 × vpp8 with the embedding and the loss each counted as a layer: 128 slots,
  // 8 per stage, 1 per virtual chunk; the first chunk holds only the embedding and the last only the loss (0 layers).
  PipelineSplit acc;
  acc.account_for_embedding = acc.account_for_loss = true;
  const auto c = layers_per_chunk(126, 16, 8, acc);
  REQUIRE(c.size() == 128);
  CHECK(c.front() == 0);
  CHECK(c.back() == 0);
  int sum = 0;
  for (int x : c) sum += x;
  CHECK(sum == 126);
  // Uneven remainders and the forbidden combination are errors that name the numbers (Megatron-Core asserts both).
  PipelineSplit bad = fl;
  bad.first_stage_layers = 4;  // 32 − 4 − 3 = 25 over 2 stages
  CHECK_THROWS_AS(layers_per_chunk(32, 4, 1, bad), InputError);
  PipelineSplit both = fl;
  both.account_for_loss = true;
  CHECK_THROWS_AS(layers_per_chunk(32, 4, 1, both), InputError);
}

TEST_CASE("Megatron-Core's pipeline layout string (--pipeline-model-parallel-layout)") {
  // PipelineParallelLayerLayout.parse_str_to_list: "(…)*n" groups first, then "x*n"; '|' separates virtual stages.
  // DeepSeek-V3's recipe layout on pp4 × vpp4 (Megatron-Bridge deepseek_v3.py layout_map[(4, 4)]):
  // "Et*4|(t*4|)*14tmL" = Etttt, then 14 × tttt, then tmL — 16 stages of 4 + 14·4 + 1 = 61 decoder layers.
  const auto st = parse_pipeline_layout("Et*4|(t*4|)*14tmL");
  REQUIRE(st.size() == 16);
  CHECK(st.front() == "Etttt");
  CHECK(st[7] == "tttt");
  CHECK(st.back() == "tmL");
  CHECK(parse_pipeline_layout("Ettt|(tt|)*29,m|L").size() == 32);  // the docstring's example: commas are cosmetic
  // The decoder layers per virtual stage, in parsim's chunk order v·pp + p (the layout's own order): 4, 14 × 4, 1.
  PipelineSplit lay;
  lay.layout = intern_pipeline_layout("Et*4|(t*4|)*14tmL");
  std::vector<int> expect(16, 4);
  expect.back() = 1;
  CHECK(layers_per_chunk(61, 4, 4, lay) == expect);
  CHECK(layers_per_chunk(61, 8, 2, lay) == expect);
  // Layouts are interned: equal strings share one pointer (PipelineSplit stays trivially copyable), empty is unset.
  CHECK(intern_pipeline_layout(std::string("Et*4|(t*4|)*14tmL")) == lay.layout);
  CHECK(intern_pipeline_layout("") == nullptr);
  // The parse is kept with the interned string: every caller (plan check, layer split, rendering) gets the same
  // stored stages, equal to a fresh parse; a bad layout throws on every call (nothing stored for it).
  CHECK(&pipeline_layout_stages(lay.layout) == &pipeline_layout_stages(lay.layout));
  CHECK(pipeline_layout_stages(lay.layout) == st);
  const std::string* bad = intern_pipeline_layout("Ex*4|L");
  CHECK_THROWS_AS(pipeline_layout_stages(bad), InputError);
  CHECK_THROWS_AS(pipeline_layout_stages(bad), InputError);
  // pp8 without vpp (layout_map[(8, 1)]): E + 8, 6 × 8, 5 + MTP + loss.
  lay.layout = intern_pipeline_layout("Et*8|(t*8|)*6t*5mL");
  CHECK(layers_per_chunk(61, 8, 1, lay) == std::vector<int>{8, 8, 8, 8, 8, 8, 8, 5});
  // Errors name the layout: wrong stage count for the plan, wrong decoder count, loss not last, MTP not with the
  // loss (parsim costs the MTP modules with the head on the last virtual stage), unknown characters, bad repeats,
  // and the combination with the other split options (Megatron-Core refuses it).
  lay.layout = intern_pipeline_layout("Et*4|(t*4|)*14tmL");
  CHECK_THROWS_AS(layers_per_chunk(61, 4, 2, lay), InputError);  // 16 stages, pp4 × vpp2 = 8
  CHECK_THROWS_AS(layers_per_chunk(60, 4, 4, lay), InputError);  // 61 't' for 60 layers
  lay.layout = intern_pipeline_layout("Et*4|(t*4|)*14tLm");
  CHECK_THROWS_AS(layers_per_chunk(61, 4, 4, lay), InputError);
  lay.layout = intern_pipeline_layout("Et*4|(t*4|)*14tm|L");
  CHECK_THROWS_AS(layers_per_chunk(61, 4, 5, lay), InputError);
  lay.layout = intern_pipeline_layout("Et*4|(t*4|)*14tmL|");  // an empty last stage: no loss there
  CHECK_THROWS_AS(layers_per_chunk(61, 17, 1, lay), InputError);
  CHECK_THROWS_AS(parse_pipeline_layout("Ex*4|L"), InputError);
  CHECK_THROWS_AS(parse_pipeline_layout("E(t*4|L"), InputError);
  CHECK_THROWS_AS(parse_pipeline_layout("Et*|L"), InputError);
  lay.layout = intern_pipeline_layout("Et*4|(t*4|)*14tmL");
  lay.account_for_loss = true;
  CHECK_THROWS_AS(layers_per_chunk(61, 4, 4, lay), InputError);
  // Through the scenario: the layout moves DeepSeek-V3's last virtual stage from 3 layers + MTP + head to 1 layer +
  // MTP + head, the first from 3 to 4 (the default split gives chunks 0, 15 and 1 the 3 layers of 61 = 13 × 4 + 3 × 3).
  ScenarioInput in;
  in.model = std::string(PARSIM_TEST_DATA) + "/models/deepseek_v3_parsim.json";
  in.plan = "tp1pp4dp64vpp4ep64etp1zero1";
  in.gpu = "gb200";
  in.gpus_per_node = 64;
  in.train.seq = 4096;
  in.train.mbs = 1;
  in.train.gbs = 4096;
  const StepCosts even = compute_step_costs(resolve_scenario(in));
  CHECK(even.layers_per_chunk.front() == 3);
  CHECK(even.layers_per_chunk.back() == 3);
  in.train.split.layout = intern_pipeline_layout("Et*4|(t*4|)*14tmL");
  const Scenario laid = resolve_scenario(in);  // validates the plan (validate_plan)
  CHECK(compute_step_costs(laid).layers_per_chunk == expect);
  // The layout's MTP count must match the model's (Megatron-Core validate_layer_layout): DeepSeek-V3 has one.
  in.train.split.layout = intern_pipeline_layout("Et*4|(t*4|)*14tL");
  CHECK_THROWS_AS(resolve_scenario(in), InputError);
}

TEST_CASE("fsdp on the Megatron stack is Megatron-FSDP, on the PyTorch stack PyTorch FSDP") {
  // Megatron-FSDP optim_grads_params at N = 8, bf16: 16-bit weights 2, fp32 main grads 4, Adam state 12, all / N →
  // 0.25 + 0.5 + 1.5 B per parameter. PyTorch FSDP FULL_SHARD with bf16 MixedPrecision: fp32 shards 4 + 4 + 8, / N →
  // 0.5 + 0.5 + 1.
  const ShardingTraits& f = sharding_traits(Sharding::FSDP);
  const StateBytes m = f.impl(Stack::Megatron).state_bytes(Precision::BF16, 8);
  CHECK(m.weights == doctest::Approx(0.25));
  CHECK(m.grads == doctest::Approx(0.5));
  CHECK(m.optimizer == doctest::Approx(1.5));
  const StateBytes p = f.impl(Stack::PyTorch).state_bytes(Precision::BF16, 8);
  CHECK(p.weights == doctest::Approx(0.5));
  CHECK(p.grads == doctest::Approx(0.5));
  CHECK(p.optimizer == doctest::Approx(1.0));
  // Megatron-FSDP reduces fp32 main grads (4 B), PyTorch FSDP 16-bit grads (2 B).
  CHECK(grad_wire_bytes(Sharding::FSDP, Precision::BF16, Stack::Megatron) == 4);
  CHECK(grad_wire_bytes(Sharding::FSDP, Precision::BF16, Stack::PyTorch) == 2);
  // --no-grad-reduce-in-fp32: 16-bit gradients on the wire.
  CHECK(grad_wire_bytes(Sharding::Zero1, Precision::BF16, Stack::Megatron, false) == 2);
}

TEST_CASE("PyTorch FSDP under pipeline parallelism holds its stage's parameters and gradients across micro-batches") {
  // llama2-7b (32 layers of layer_params, embedding and LM head 32000 × 4096 each), seq 4096, mbs 1, 8 micro-batches,
  // pp2 × dp4 FSDP on 8 H100. torchtitan shards with reshard_after_forward=False under PP and torch.distributed
  // .pipelining syncs gradients only in the last micro-batch: each stage keeps its 16 layers' parameters gathered in
  // 16 bits from its first forward to its last backward, and its unsharded 16-bit gradients from its first backward
  // on — 2 × 2 B per stage parameter in buffers at the peak, where pp1 FSDP holds a layer or two at a time.
  ScenarioInput in;
  in.model = "llama2-7b";
  in.plan = "tp1pp2dp4fsdp";
  in.train.seq = 4096;
  in.train.gbs = 32;
  in.train.mbs = 1;
  in.train.stack = Stack::PyTorch;
  const Scenario sc = resolve_scenario(in);
  const StepCosts k = compute_step_costs(sc);
  const StepReport r = evaluate(sc);
  const double stage_params = 16 * k.layer_params;  // + the embedding (stage 0) or the LM head (stage 1)
  CHECK(r.memory.buffers_gib * kGiB >= 2 * 2 * stage_params);
  // pp1: per-pass gathers only — far less than the 16-layer stage's two copies.
  in.plan = "tp1pp1dp8fsdp";
  const StepReport r1 = evaluate(resolve_scenario(in));
  CHECK(r1.memory.buffers_gib * kGiB < 2 * 2 * stage_params / 4);
}

TEST_CASE("memory beyond Korthikanti: TE workspace, fp8 weight caches, 16-bit gradient buffer") {
  // llama2-7b tp1 dp8 zero1 on H100 (Hopper): the TE cuBLAS workspace is 32 MiB; bf16 has no fp8 cache.
  ScenarioInput in;
  in.model = "llama2-7b";
  in.plan = "dp8zero1";
  in.train.seq = 4096;
  in.train.gbs = 64;
  const StepReport bf16 = evaluate(resolve_scenario(in));
  CHECK(bf16.memory.workspace_gib == doctest::Approx(32.0 / 1024));
  CHECK(bf16.memory.fp8_cache_gib == 0);
  // fp8 on Hopper: fp8 weight + its transpose, 2 B per parameter of the 32 layers' GEMMs (per-layer parameters Ψ_L
  // from the cost model; embedding and LM head excluded).
  in.train.precision = Precision::FP8;
  const Scenario f8 = resolve_scenario(in);
  const StepReport r8 = evaluate(f8);
  const double psi_layers = compute_step_costs(f8).layer_params * 32;
  CHECK(r8.memory.fp8_cache_gib == doctest::Approx(2.0 * psi_layers / kGiB));
  // On B200 (non-TN fp8 GEMMs) no transpose is kept: 1 B per parameter.
  in.gpu = "b200";
  CHECK(evaluate(resolve_scenario(in)).memory.fp8_cache_gib == doctest::Approx(psi_layers / kGiB));
  // --no-grad-reduce-in-fp32 halves the gradient buffer: 4 → 2 B per parameter.
  in.gpu = "h100";
  in.train.precision = Precision::BF16;
  in.train.grad_reduce_in_fp32 = false;
  CHECK(evaluate(resolve_scenario(in)).memory.grads_gib == doctest::Approx(bf16.memory.grads_gib / 2));
}

TEST_CASE("fp8 primary weights, bf16 optimizer, and the fit verdict without the allocator's cache") {
  // llama2-7b dp8 zero1 fp8 on H100. --fp8-params (TE fp8 weights): each layer weight is 1 B instead of 2 B and the
  // separate cache shrinks to the Hopper transpose, 1 B instead of 2 B: −1 B of weights and −1 B of cache per layer
  // parameter Ψ_L (32 layers × layer_params); the embedding and LM head stay 16-bit.
  ScenarioInput in;
  in.model = "llama2-7b";
  in.plan = "dp8zero1";
  in.train.seq = 4096;
  in.train.gbs = 64;
  in.train.precision = Precision::FP8;
  const Scenario base_sc = resolve_scenario(in);
  const StepReport base = evaluate(base_sc);
  const double psi_layers = compute_step_costs(base_sc).layer_params * 32;
  in.train.fp8_params = true;
  const StepReport p8 = evaluate(resolve_scenario(in));
  CHECK(p8.memory.weights_gib == doctest::Approx(base.memory.weights_gib - psi_layers / kGiB));
  CHECK(p8.memory.fp8_cache_gib == doctest::Approx(psi_layers / kGiB));
  // B200 runs non-TN fp8 GEMMs: no transpose, no cache at all.
  in.gpu = "b200";
  CHECK(evaluate(resolve_scenario(in)).memory.fp8_cache_gib == 0);
  // --fp8-params without fp8 is an input error naming the flag.
  in.gpu = "h100";
  in.train.precision = Precision::BF16;
  CHECK_THROWS_WITH_AS(resolve_scenario(in), doctest::Contains("--fp8-params"), InputError);
  // --bf16-optimizer (Apex DistributedFusedAdam with dtype bf16): Adam's two moments in bf16 and no fp32 master,
  // 4 B instead of 12 B per parameter before sharding → a third of the optimizer state.
  in.train.fp8_params = false;
  const StepReport b16 = evaluate(resolve_scenario(in));
  in.train.bf16_optimizer = true;
  CHECK(evaluate(resolve_scenario(in)).memory.optimizer_gib == doctest::Approx(b16.memory.optimizer_gib / 3));
  // --adam-moments bf16 (Megatron-Core's precision-aware optimizer: fp32 master, bf16 exp_avg and exp_avg_sq):
  // 4 + 2 + 2 = 8 B instead of 4 + 4 + 4 = 12 B per parameter → two thirds of the optimizer state; weights and grads
  // unchanged. With --bf16-optimizer (which already holds bf16 moments) it is an input error naming both.
  CHECK_THROWS_WITH_AS(
      [&] {
        ScenarioInput both = in;
        both.train.bf16_moments = true;
        resolve_scenario(both);
      }(),
      doctest::Contains("--bf16-optimizer"), InputError);
  in.train.bf16_optimizer = false;
  in.train.bf16_moments = true;
  const StepReport pa = evaluate(resolve_scenario(in));
  CHECK(pa.memory.optimizer_gib == doctest::Approx(b16.memory.optimizer_gib * 8 / 12));
  CHECK(pa.memory.weights_gib == doctest::Approx(b16.memory.weights_gib));
  CHECK(pa.memory.grads_gib == doctest::Approx(b16.memory.grads_gib));
  in.train.bf16_moments = false;
  // The verdict: required = live tensors + CUDA context 0.5 GiB + one NCCL communicator (dp) 0.25 GiB, without the
  // caching allocator's 5 % (freed before an out-of-memory error); peak_gib keeps it.
  CHECK(b16.memory.required_gib == doctest::Approx(b16.memory.allocated_peak_gib + 0.75));
  CHECK(b16.memory.peak_gib == doctest::Approx(b16.memory.allocated_peak_gib * 1.05 + 0.75));
  CHECK(b16.memory.fits == (b16.memory.required_gib <= b16.memory.capacity_gib));
}
