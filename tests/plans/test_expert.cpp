// Expert parallelism in the plan grammar: ep<N> and etp<N> (docs/cli.md "Additions"), Megatron-Core MoE parallel
// folding (Liu et al. 2025, arXiv 2504.14960): attention layers use tp×cp×dp×pp, expert layers etp×ep×edp×pp over the
// same GPUs with edp = tp·cp·dp/(etp·ep); the checks and the expert rank layout.
#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>

using namespace parsim;
using parsim::test::error_of;

TEST_CASE("ep and etp terms: parsed in any order, etp defaults to tp, canonical strings round-trip") {
  const Plan a = parse_plan("tp2pp1dp32ep8");
  CHECK(a.ep == 8);
  CHECK(a.etp == 0);
  CHECK(a.expert_tp() == 2);  // etp defaults to tp
  // ep does not multiply the world: 2·1·32·1 = 64 GPUs; expert layers: edp = tp·cp·dp/(etp·ep) = 64/(2·8) = 4.
  CHECK(a.world() == 64);
  CHECK(a.expert_dp() == 4);
  CHECK(a.degree(Axis::ep) == 8);
  CHECK(a.to_string() == "tp2pp1dp32ep8");

  const Plan b = parse_plan("pp16dp128ep64");
  CHECK(b.world() == 2048);
  // edp = 1·1·128/(1·64) = 2.
  CHECK(b.expert_dp() == 2);
  CHECK(b.to_string() == "tp1pp16dp128ep64");

  const Plan c = parse_plan("ETP1tp4dp16EP4");
  CHECK(c.expert_tp() == 1);
  // edp = 4·16/(1·4) = 16.
  CHECK(c.expert_dp() == 16);
  CHECK(c.to_string() == "tp4pp1dp16ep4etp1");
  CHECK(parse_plan(c.to_string()).expert_tp() == 1);
  // etp equal to tp is the default and is not written.
  CHECK(parse_plan("tp4dp16ep4etp4").to_string() == "tp4pp1dp16ep4");
  for (const char* s : {"tp2pp1dp32ep8", "tp1pp16dp128ep64", "tp4pp2dp8cp2ep4etp2vpp2zero1", "tp8pp1dp4ep2etp1"}) {
    CAPTURE(s);
    CHECK(parse_plan(s).to_string() == s);
  }
  // Every axis degree through the vocabulary.
  const Plan d = parse_plan("tp2cp2dp4pp3ep2");
  CHECK(d.degree(Axis::tp) == 2);
  CHECK(d.degree(Axis::cp) == 2);
  CHECK(d.degree(Axis::dp) == 4);
  CHECK(d.degree(Axis::pp) == 3);
}

TEST_CASE("expert parallelism is validated against the model with one-line errors") {
  using doctest::Contains;
  const Hardware hw = test::node_of(8);
  const TrainingConfig t = test::train(4096, 256);
  // Dense model: ep or etp > 1 are rejected.
  CHECK(error_of([&] { validate_plan(parse_plan("tp2dp32ep8"), test::llama2_7b(), hw, t); }) ==
        Contains("llama2-7b is a dense model without experts"));
  CHECK(error_of([&] { validate_plan(parse_plan("tp2dp32etp1"), test::llama2_7b(), hw, t); }) ==
        Contains("dense model"));
  CHECK(error_of([&] { validate_plan(parse_plan("tp2dp32"), test::llama2_7b(), hw, t); }) == "<no error>");
  // Mixtral's 8 experts: ep must divide 8 (valid 1, 2, 4, 8).
  const ModelSpec mx = test::mixtral_8x7b();
  CHECK(error_of([&] { validate_plan(parse_plan("tp1dp64ep16"), mx, hw, t); }) ==
        Contains("ep16 does not divide the 8 routed experts of mixtral-8x7b (valid ep: 1, 2, 4, 8)"));
  CHECK(error_of([&] { validate_plan(parse_plan("tp2dp32ep8"), mx, hw, t); }) == "<no error>");
  // ep·etp must divide tp·cp·dp: tp8 dp2 → 16 GPUs per stage; ep4 × etp8 = 32 does not divide 16.
  CHECK(error_of([&] { validate_plan(parse_plan("tp8dp2ep4"), mx, hw, t); }) ==
        Contains("ep4 × etp8 = 32 does not divide tp·cp·dp = 8·1·2 = 16"));
  // With etp1 it folds: 4·1 | 16 → edp = 4.
  CHECK(error_of([&] { validate_plan(parse_plan("tp8dp2ep4etp1"), mx, hw, t); }) == "<no error>");
  // DeepSeek-V3's 256 experts on pp16 dp128 ep64 (the contract's example).
  CHECK(error_of([&] { validate_plan(parse_plan("pp16dp128ep64"), test::deepseek_v3_like(), hw, t); }) == "<no error>");
}

TEST_CASE("expert layout: rank = etp_i + etp·(ep_i + ep·(edp_i + edp·pp_i)); EP and expert-DP groups") {
  // tp2 dp4 pp2 ep2 etp1 (16 GPUs): etp1, ep2, edp = 2·4/(1·2) = 4.
  const Plan p = parse_plan("tp2dp4pp2ep2etp1");
  // rank 13 = 0 + 1·(1 + 2·(2 + 4·1)) → etp 0, ep 1, edp 2, pp 1.
  const ExpertCoord c = expert_coord_of(p, 13);
  CHECK(c.etp == 0);
  CHECK(c.ep == 1);
  CHECK(c.edp == 2);
  CHECK(c.pp == 1);
  // EP group of rank 13: stride etp = 1, 2 members → {12, 13}; expert-DP: stride etp·ep = 2, 4 members → {9,11,13,15};
  // ETP: a group of one.
  CHECK(group_ranks(p, GroupKind::EP, 13) == std::vector<int>{12, 13});
  CHECK(group_ranks(p, GroupKind::EDP, 13) == std::vector<int>{9, 11, 13, 15});
  CHECK(group_ranks(p, GroupKind::ETP, 13) == std::vector<int>{13});
  // The expert pipeline coordinate is the attention one (same pp, same stage).
  for (int r = 0; r < p.world(); ++r) CHECK(expert_coord_of(p, r).pp == coord_of(p, r).pp);
  // With etp = tp the EP group spans the ranks tp apart: tp2 dp8 ep4 → stride 2, {1, 3, 5, 7} for rank 3.
  const Plan q = parse_plan("tp2dp8ep4");
  CHECK(group_ranks(q, GroupKind::EP, 3) == std::vector<int>{1, 3, 5, 7});
  CHECK(group_ranks(q, GroupKind::EDP, 3) == std::vector<int>{3, 11});
  // Expert groups partition the world, like the attention groups.
  const Plan w = parse_plan("tp2cp2dp6pp2ep3etp2");
  for (GroupKind k : {GroupKind::ETP, GroupKind::EP, GroupKind::EDP}) {
    CAPTURE(to_string(k));
    std::vector<int> seen(static_cast<std::size_t>(w.world()), 0);
    std::set<std::vector<int>> groups;
    for (int r = 0; r < w.world(); ++r) groups.insert(group_ranks(w, k, r));
    for (const auto& g : groups)
      for (int r : g) ++seen[static_cast<std::size_t>(r)];
    for (int s : seen) CHECK(s == 1);
  }
}

TEST_CASE("expert group placement on nodes (group_shape)") {
  // pp16 dp128 ep64 on 8-GPU nodes: EP stride etp = 1, 64 members = 64 consecutive ranks = 8 whole nodes, 8 per node,
  // every GPU's EP group leaves its node (8 share the NICs). Expert DP: stride 64, 2 members, one per node.
  const Plan p = parse_plan("pp16dp128ep64");
  const GroupShape ep = group_shape(p, GroupKind::EP, 8);
  CHECK(ep.size == 64);
  CHECK(ep.per_node == 8);
  CHECK(ep.nodes == 8);
  CHECK(ep.concurrent_per_node == 8);
  const GroupShape edp = group_shape(p, GroupKind::EDP, 8);
  CHECK(edp.size == 2);
  CHECK(edp.per_node == 1);
  CHECK(edp.nodes == 2);
  // tp2 dp32 ep8 (etp = tp = 2): EP stride 2, 8 members over ranks 0..14 = 2 nodes, 4 per node.
  const GroupShape e2 = group_shape(parse_plan("tp2pp1dp32ep8"), GroupKind::EP, 8);
  CHECK(e2.size == 8);
  CHECK(e2.per_node == 4);
  CHECK(e2.nodes == 2);
}
