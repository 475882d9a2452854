// MoE layers in the step (issue 10): the token all-to-all's bytes and where the EP group sits, routed experts sharded
// by ep in the parameters and the weights in memory, routing imbalance and the capacity factor, the ep axis in the
// outputs, and models mixing dense and MoE layers (DeepSeek-V3's first_k_dense_replace). Expected values are derived
// in the comments from the model shapes (tests/data/models/*.config.json) and the formulas of sim/step/costs/.
#include "helpers.hpp"
#include "sim/step/costs.hpp"

#include <doctest/doctest.h>

using namespace parsim;
using namespace parsim::testing;

namespace {

const std::string kModels = std::string(PARSIM_TEST_DATA) + "/models/";

// Mixtral 8x7B (h 4096, 32 layers, 8 experts of 14336, top-2) on H100s, seq 4096, mbs 1, bf16, Megatron zero1.
Scenario mixtral(const std::string& plan, int gpus_per_node = 0, double imbalance = 1.0, double capacity = 0) {
  ScenarioInput in;
  in.model = kModels + "mixtral-8x7b-v0.1.config.json";
  in.plan = plan;
  in.gpus_per_node = gpus_per_node;
  in.train.seq = 4096;
  in.train.mbs = 1;
  in.train.gbs = 64;
  in.train.moe_imbalance = imbalance;
  in.train.moe_capacity_factor = capacity;
  return resolve_scenario(in);
}

// DeepSeek-V3 (model file `file`) on 256 B200s: plan tp1pp8dp32ep32 etp1 with the distributed optimizer, seq 4096,
// mbs 1, gbs 256 → 8 micro-batches, balanced routing.
ScenarioInput deepseek_v3(const std::string& file) {
  ScenarioInput in;
  in.model = kModels + file;
  in.plan = "tp1pp8dp32ep32etp1zero1";
  in.gpu = "b200";
  in.train.seq = 4096;
  in.train.mbs = 1;
  in.train.gbs = 256;
  in.train.moe_imbalance = 1.0;
  return in;
}

CostContext context(const Scenario& sc, const Hardware& hw) {
  const int gpn = sc.hw.node.gpus_per_node;
  return CostContext{sc, hw, group_shape(sc.plan, GroupKind::TP, gpn), group_shape(sc.plan, GroupKind::CP, gpn),
                     false};
}

}  // namespace

TEST_CASE("MoE: the token all-to-all carries k × tokens × h and costs more across nodes") {
  // tp1 cp1 mbs1 seq 4096: the router sees 4,096 tokens; top-2 → 8,192 (token, expert) pairs leave each rank per
  // dispatch, each h = 4,096 bf16 elements: 8,192 · 4,096 · 2 B = 67,108,864 B. The alltoall dispatcher sends them
  // forward (dispatch) and back (combine): a2a_fwd = 2 · alltoall(67,108,864 B over the EP group), the same backward.
  const Scenario in_node = mixtral("tp1pp1dp16ep8");
  const Hardware hw = megatron_compute(in_node.hw);
  const CostContext c = context(in_node, hw);
  const ExpertSplit x = expert_split(in_node);
  CHECK(x.ep == 8);
  CHECK(x.imbalance == 1.0);
  const LayerKind kind = in_node.model.layer(0);
  REQUIRE(kind.ffn == FfnKind::MoE);
  const LayerWork lw = layer_work(in_node.model, kind, 1, 4096, 1, 1, false, Precision::BF16, x);
  CHECK(lw.routed_tokens_sent == 8192.0);
  const GroupShape ep8 = group_shape(in_node.plan, GroupKind::EP, 8);
  CHECK(ep8.size == 8);
  CHECK(ep8.nodes == 1);  // tp1: the 8 EP ranks are adjacent, one 8-GPU node
  const MoeComm inside = moe_comm(c, lw, x);
  const double a2a_inside = group_collective_s(c, Collective::AllToAll, 67108864.0, ep8);
  CHECK(inside.a2a_fwd_s == doctest::Approx(2 * a2a_inside));
  CHECK(inside.a2a_bwd_s == doctest::Approx(2 * a2a_inside));

  // The same plan on 4-GPU nodes: the EP group spans 2 nodes and half of every rank's pairs cross the NICs.
  const Scenario across_nodes = mixtral("tp1pp1dp16ep8", 4);
  const Hardware hw4 = megatron_compute(across_nodes.hw);
  const CostContext c4 = context(across_nodes, hw4);
  const GroupShape ep8x2 = group_shape(across_nodes.plan, GroupKind::EP, 4);
  CHECK(ep8x2.nodes == 2);
  const MoeComm across = moe_comm(c4, lw, expert_split(across_nodes));
  CHECK(across.a2a_fwd_s > 2 * inside.a2a_fwd_s);  // NIC bandwidth is ≥ 2× below NVLink's on every preset

  // And in the step: the ep axis carries it, more across nodes.
  const StepReport r_in = evaluate(in_node), r_across = evaluate(across_nodes);
  CHECK(r_in.exposed_by_kind_s[Axis::ep] > 0);
  CHECK(r_across.exposed_by_kind_s[Axis::ep] > r_in.exposed_by_kind_s[Axis::ep]);
  CHECK(r_across.step_time_s > r_in.step_time_s);
}

TEST_CASE("MoE: routed experts are sharded by ep in the parameters and the weights in memory") {
  // Mixtral routed experts per layer: 8 experts × 3 matrices (gate, up, down) × 4,096 × 14,336 = 1,409,286,144.
  const StepCosts k1 = compute_step_costs(mixtral("tp1pp1dp16"));
  const StepCosts k8 = compute_step_costs(mixtral("tp1pp1dp16ep8"));
  REQUIRE(k1.kinds.size() == 1);
  CHECK(k1.kinds[0].params.expert == 1409286144.0);
  // ep8: one expert per rank, 1/8 of them; the dense part (attention, router, norms) is unchanged.
  CHECK(k8.kinds[0].params.expert == 1409286144.0 / 8);
  CHECK(k8.kinds[0].params.dense == k1.kinds[0].params.dense);
  // Expert-DP group: tp·cp·dp / (etp·ep) = 16 / 8 = 2 ranks hold each expert; without ep all 16 do.
  CHECK(k8.edp_group.size == 2);
  CHECK(k1.edp_group.size == 16);

  // Weights in memory scale with the parameters a rank holds: bytes per parameter from the ep1 report, times the ep8
  // rank's parameters (32 layers + embedding + head).
  const StepReport r1 = evaluate(mixtral("tp1pp1dp16"));
  const StepReport r8 = evaluate(mixtral("tp1pp1dp16ep8"));
  const double p1 = k1.range_params(0, 32).total() + k1.embed_params + k1.head_params;
  const double p8 = k8.range_params(0, 32).total() + k8.embed_params + k8.head_params;
  CHECK(p1 - p8 == doctest::Approx(32 * 1409286144.0 * 7 / 8));
  CHECK(r8.memory.weights_gib == doctest::Approx(r1.memory.weights_gib * p8 / p1).epsilon(1e-9));
  CHECK(r8.memory.grads_gib < r1.memory.grads_gib);
}

TEST_CASE("MoE: routing imbalance slows the busiest rank; a capacity factor caps it") {
  // --moe-imbalance is the busiest EP rank's load over the mean; the capacity factor drops tokens beyond
  // factor × the mean share (Megatron-Core --moe-expert-capacity-factor), so the busiest rank carries
  // min(imbalance, max(1, factor)); a single EP rank has no imbalance between ranks.
  CHECK(expert_split(mixtral("tp1pp1dp16ep8", 0, 1.5)).imbalance == 1.5);
  CHECK(expert_split(mixtral("tp1pp1dp16ep8", 0, 1.5, 1.2)).imbalance == 1.2);
  CHECK(expert_split(mixtral("tp1pp1dp16ep8", 0, 1.5, 0.5)).imbalance == 1.0);
  CHECK(expert_split(mixtral("tp1pp1dp16", 0, 1.5)).imbalance == 1.0);
  // The busiest rank receives imbalance × the mean pairs: 1.5 × 8,192 = 12,288 (and the all-to-all, paced by the
  // busiest receiver, moves 1.5 × the balanced bytes: costs/comm.cpp).
  const Scenario balanced = mixtral("tp1pp1dp16ep8"), skewed = mixtral("tp1pp1dp16ep8", 0, 1.5);
  const LayerKind kind = balanced.model.layer(0);
  const LayerWork lb = layer_work(balanced.model, kind, 1, 4096, 1, 1, false, Precision::BF16, expert_split(balanced));
  const LayerWork ls = layer_work(skewed.model, kind, 1, 4096, 1, 1, false, Precision::BF16, expert_split(skewed));
  CHECK(lb.routed_tokens_received == doctest::Approx(8192.0));
  CHECK(ls.routed_tokens_received == doctest::Approx(12288.0));
  CHECK(evaluate(skewed).step_time_s > evaluate(balanced).step_time_s);
}

TEST_CASE("MoE: a dense model has no ep communication") {
  const StepReport r = evaluate(scenario("llama2-7b", "tp2pp1dp4", "h100", 16, 1, 4096));
  CHECK(r.exposed_by_kind_s[Axis::ep] == 0.0);
  for (const StageMetrics& s : r.stages) CHECK(s.comm_by_kind_s[Axis::ep] == 0.0);
}

TEST_CASE("MoE: DeepSeek-V3 mixes dense and MoE layers (first_k_dense_replace 3) and simulates") {
  // deepseek-ai/DeepSeek-V3 config.json: 61 layers, the first 3 dense (FFN 18,432), 58 with 256 routed experts
  // (top-8) and 1 shared expert, all with MLA. Plan tp1pp8dp32ep32 etp1 on 256 B200s, gbs 256 → 8 micro-batches.
  ScenarioInput in = deepseek_v3("deepseek-v3.config.json");
  in.train.precision = Precision::FP8;
  in.train.moe_dispatcher = MoeDispatcher::Flex;
  const Scenario sc = resolve_scenario(in);
  const StepCosts k = compute_step_costs(sc);
  REQUIRE(k.kinds.size() == 2);
  CHECK(k.kinds[0].kind.ffn == FfnKind::Dense);
  CHECK(k.kinds[1].kind.ffn == FfnKind::MoE);
  CHECK(k.count(0, 0, 61) == 3);
  CHECK(k.count(1, 0, 61) == 58);
  CHECK(k.count(0, 3, 61) == 0);
  // A range costs Σ count · cost(kind): layers [0, 8) = 3 dense + 5 MoE.
  const PassCost fwd = k.range_cost(PassKind::Forward, 0, 8);
  PassCost expect = k.kinds[0].pass[PassKind::Forward].scaled(3);
  expect += k.kinds[1].pass[PassKind::Forward].scaled(5);
  CHECK(fwd.duration_s() == doctest::Approx(expect.duration_s()));
  CHECK(k.kinds[0].pass[PassKind::Forward].ep_s == 0.0);
  CHECK(k.kinds[1].pass[PassKind::Forward].ep_s > 0.0);

  const StepReport r = evaluate(sc);
  CHECK(r.step_time_s > 0);
  CHECK(r.exposed_by_kind_s[Axis::ep] > 0);
  // Stage 0 holds the 3 dense layers (and the embedding): less EP traffic than a middle stage of MoE layers only.
  REQUIRE(r.stages.size() == 8);
  CHECK(r.stages[0].comm_by_kind_s[Axis::ep] < r.stages[3].comm_by_kind_s[Axis::ep]);
}

TEST_CASE("MoE host: every layer kind carries its issue cost; an MoE layer issues the router and dispatcher") {
  // Mixtral 8x7B and Mistral 7B share the attention half (h 4096, 32 heads, 8 KV heads, RoPE, SwiGLU, no biases), so
  // on the same plan (tp1, bf16, Megatron-Core + TE, H100) their layers' forward host costs differ only by the FFN
  // half (sim/step/costs/host.cpp moe_inventory, alltoall dispatcher, ep8 → 1 local expert, no fp8):
  //   MoE forward  = norm 8 + router linear 13.5 + 12 ops · 8                           = 117.5 µs
  //                + preprocess 8 · 8 + permute/a2a/sort 4 · 8 + combine 3 · 8           = 120 µs   (+ 3 collectives)
  //                + 2 GroupedLinear 2 · 36 + 2 GEMMs · 1 expert · kCublas 4 + 2 ops · 8 = 96 µs
  //                + MoE-layer Python 50 + the token counts' sync 20                     = 70 µs    → 403.5 µs
  //   dense MLP    = LayerNormLinear 40 + Linear 36                                      = 76 µs
  //   difference   = (403.5 − 76) µs · factor + 3 collectives · 25 µs · factor          = 402.5 µs · factor.
  const Scenario moe = mixtral("tp1pp1dp16ep8");
  ScenarioInput din;
  din.model = kModels + "mistral-7b-v0.1.config.json";
  din.plan = "tp1pp1dp16";
  din.train.seq = 4096;
  din.train.mbs = 1;
  din.train.gbs = 64;
  const Scenario dense = resolve_scenario(din);
  const StepCosts km = compute_step_costs(moe), kd = compute_step_costs(dense);
  REQUIRE(km.host.factor == doctest::Approx(kd.host.factor));
  const double diff = km.layer[PassKind::Forward].host_s - kd.layer[PassKind::Forward].host_s;
  CHECK(diff == doctest::Approx(402.5e-6 * km.host.factor));
  // The dense layer never waits on a sync; the MoE layer's forward waits once per layer: the sync round trip and the
  // relaunch (20 + 8 µs at the reference host) plus what the host needs beyond the GPU's time for the forward.
  CHECK(kd.layer[PassKind::Forward].host_wait_s == 0.0);
  const PassCost& f = km.layer[PassKind::Forward];
  const double gpu = f.duration_s() - f.host_wait_s;
  CHECK(f.host_wait_s == doctest::Approx(km.host.sync_s + km.host.op_s + std::max(0.0, f.host_s - gpu)));
  CHECK(f.host_wait_s >= doctest::Approx(28e-6 * km.host.factor));  // equality when the GPU covers the host
  CHECK(km.layer[PassKind::Backward].host_wait_s == 0.0);  // the split sizes are kept: no sync backward

  // A model of several layer kinds (DeepSeek-V3: 3 dense + 58 MoE layers) costs each kind's host issue; the dense
  // kind has no sync, the MoE kind has one per forward.
  ScenarioInput in = deepseek_v3("deepseek-v3.config.json");
  const StepCosts k = compute_step_costs(resolve_scenario(in));
  REQUIRE(k.kinds.size() == 2);
  for (const LayerKindCosts& kc : k.kinds) {
    CHECK(kc.pass[PassKind::Forward].host_s > 0);
    CHECK(kc.pass[PassKind::Backward].host_s > 0);
  }
  CHECK(k.kinds[0].pass[PassKind::Forward].host_wait_s == 0.0);
  CHECK(k.kinds[1].pass[PassKind::Forward].host_wait_s > 0.0);
  CHECK(k.kinds[1].pass[PassKind::Forward].host_s > k.kinds[0].pass[PassKind::Forward].host_s);
}

TEST_CASE("MoE: DeepSeek-V3's multi-token-prediction module runs on the last virtual stage") {
  // deepseek_v3_parsim.json: mtp_layers 1. One module adds to the head's forward: the shifted-token embedding (the
  // embedding's forward), eh_proj [T × 2h]·[2h × h] = GEMM m 4,096, n 7,168, k 14,336 (bf16: the output side stays in
  // 16 bit under fp8 recipes), one layer of the last kind (MoE) and the LM head + loss again.
  ScenarioInput in = deepseek_v3("deepseek_v3_parsim.json");
  in.train.precision = Precision::FP8;
  Scenario with = resolve_scenario(in);
  REQUIRE(with.model.mtp_layers == 1);
  Scenario without = with;
  without.model.mtp_layers = 0;
  const StepCosts kw = compute_step_costs(with), k0 = compute_step_costs(without);
  const Hardware hw = megatron_compute(with.hw);
  const double eh = gemm_time_s(hw, 4096, 7168, 14336, Precision::BF16);
  const PassCost& last = k0.kind_of(60).pass[PassKind::Forward];
  REQUIRE(k0.kind_of(60).kind.ffn == FfnKind::MoE);
  const double expect = k0.head[PassKind::Forward].duration_s() * 2 + k0.embed[PassKind::Forward].duration_s() +
                        last.duration_s() + eh;
  CHECK(kw.head[PassKind::Forward].duration_s() == doctest::Approx(expect));
  CHECK(kw.head[PassKind::Forward].host_s > k0.head[PassKind::Forward].host_s);
  // Nothing else moves: the layers and the embedding are the same.
  CHECK(kw.layer[PassKind::Forward].duration_s() == doctest::Approx(k0.layer[PassKind::Forward].duration_s()));
  CHECK(kw.embed[PassKind::Forward].duration_s() == doctest::Approx(k0.embed[PassKind::Forward].duration_s()));
}

TEST_CASE("MoE: the alltoall dispatcher sorts the received chunks by local expert and back; flex does not") {
  // Megatron-Core MoEAlltoAllTokenDispatcher (token_dispatcher.py, moe_utils.sort_chunks_by_idxs): with ep > 1 and more
  // than one local expert, the received pairs (grouped by source rank) are sorted by local expert before the grouped
  // GEMM and sorted back before the combine — a read and a write of every received pair's h-vector each:
  // 2 sorts · 2 · R · h · e. Mixtral tp1 ep4 (2 local experts), mbs 1, seq 4096, bf16, balanced: R = 2 · 4,096 =
  // 8,192 pairs, h = 4,096, e = 2 B → 4 · 8,192 · 4,096 · 2 = 268,435,456 B more forward than flex (2 kernels more),
  // twice that backward (4 kernels more). With one local expert (ep8) there is nothing to sort.
  auto with = [](const std::string& plan, MoeDispatcher d) {
    ScenarioInput in;
    in.model = kModels + "mixtral-8x7b-v0.1.config.json";
    in.plan = plan;
    in.train.seq = 4096;
    in.train.mbs = 1;
    in.train.gbs = 64;
    in.train.moe_imbalance = 1.0;
    in.train.moe_dispatcher = d;
    return resolve_scenario(in);
  };
  const Scenario a2a = with("tp1pp1dp16ep4", MoeDispatcher::AllToAll), flex = with("tp1pp1dp16ep4", MoeDispatcher::Flex);
  const Hardware hw = megatron_compute(a2a.hw);
  const LayerKind kind = a2a.model.layer(0);
  const PassCosts pa = layer_costs(context(a2a, hw), kind), pf = layer_costs(context(flex, hw), kind);
  const double bytes = 4.0 * 8192 * 4096 * 2;
  CHECK(bytes == 268435456.0);
  CHECK(pa.fwd.compute_s - pf.fwd.compute_s == doctest::Approx(memory_bound_time_s(hw, bytes, 2)));
  CHECK(pa.bwd.compute_s - pf.bwd.compute_s == doctest::Approx(memory_bound_time_s(hw, 2 * bytes, 4)));
  const Scenario a2a8 = with("tp1pp1dp16ep8", MoeDispatcher::AllToAll), flex8 = with("tp1pp1dp16ep8", MoeDispatcher::Flex);
  CHECK(layer_costs(context(a2a8, hw), kind).fwd.compute_s ==
        doctest::Approx(layer_costs(context(flex8, hw), kind).fwd.compute_s));
}
