// Rank layout (Megatron-Core order tp-cp-dp-pp) and process-group placement on nodes.
#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>

using namespace parsim;

TEST_CASE("coord_of / rank_of follow rank = tp_i + tp·(cp_i + cp·(dp_i + dp·pp_i))") {
  const Plan p = parse_plan("tp2cp2dp2pp2");
  // rank 13 = 1 + 2·(0 + 2·(1 + 2·1)) = 1 + 2·6 → tp 1, cp 0, dp 1, pp 1.
  const RankCoord c = coord_of(p, 13);
  CHECK(c.tp == 1);
  CHECK(c.cp == 0);
  CHECK(c.dp == 1);
  CHECK(c.pp == 1);
  CHECK(rank_of(p, c) == 13);
  // Round trip over a world with an odd degree.
  const Plan q = parse_plan("tp2cp2dp3pp2");
  for (int r = 0; r < q.world(); ++r) CHECK(rank_of(q, coord_of(q, r)) == r);
  CHECK(test::error_of([&] { coord_of(q, 24); }) == doctest::Contains("rank 24"));
}

TEST_CASE("group_ranks: each kind varies one coordinate; groups partition the world") {
  const Plan p = parse_plan("tp2cp2dp2pp2");
  // Rank 13 (tp1 cp0 dp1 pp1). TP: stride 1 → {12, 13}. CP: stride tp = 2 → {13, 15}. DP: stride tp·cp = 4 → {9, 13}.
  // PP: stride tp·cp·dp = 8 → {5, 13}. DP×CP: stride 2, 4 members → {9, 11, 13, 15}.
  CHECK(group_ranks(p, GroupKind::TP, 13) == std::vector<int>{12, 13});
  CHECK(group_ranks(p, GroupKind::CP, 13) == std::vector<int>{13, 15});
  CHECK(group_ranks(p, GroupKind::DP, 13) == std::vector<int>{9, 13});
  CHECK(group_ranks(p, GroupKind::PP, 13) == std::vector<int>{5, 13});
  CHECK(group_ranks(p, GroupKind::DPxCP, 13) == std::vector<int>{9, 11, 13, 15});
  // HSDP dp8hsdp4 (tp1): shard groups of 4 consecutive DP ranks, replicas across them.
  const Plan h = parse_plan("dp8hsdp4");
  CHECK(group_ranks(h, GroupKind::HSDPShard, 5) == std::vector<int>{4, 5, 6, 7});
  CHECK(group_ranks(h, GroupKind::HSDPReplica, 5) == std::vector<int>{1, 5});
  // Every kind partitions the world: each rank in exactly one group, and members differ only in their own coordinate.
  const Plan q = parse_plan("tp2cp3dp4pp2hsdp2");
  for (GroupKind k : {GroupKind::TP, GroupKind::CP, GroupKind::DP, GroupKind::PP, GroupKind::DPxCP,
                      GroupKind::HSDPShard, GroupKind::HSDPReplica}) {
    CAPTURE(to_string(k));
    std::vector<int> seen(static_cast<std::size_t>(q.world()), 0);
    std::set<std::vector<int>> groups;
    for (int r = 0; r < q.world(); ++r) {
      const auto g = group_ranks(q, k, r);
      CHECK(std::find(g.begin(), g.end(), r) != g.end());
      groups.insert(g);
    }
    for (const auto& g : groups)
      for (int r : g) ++seen[static_cast<std::size_t>(r)];
    for (int s : seen) CHECK(s == 1);
  }
  // Members of a DP group share tp, cp and pp coordinates.
  for (int r : group_ranks(q, GroupKind::DP, 29)) {
    CHECK(coord_of(q, r).tp == coord_of(q, 29).tp);
    CHECK(coord_of(q, r).cp == coord_of(q, 29).cp);
    CHECK(coord_of(q, r).pp == coord_of(q, 29).pp);
  }
}

namespace {
void check_shape(const GroupShape& g, int size, int per_node, int nodes, int concurrent) {
  CHECK(g.size == size);
  CHECK(g.per_node == per_node);
  CHECK(g.nodes == nodes);
  CHECK(g.concurrent_per_node == concurrent);
}
}  // namespace

TEST_CASE("group_shape: placement on nodes and NIC sharing") {
  // tp8 on an 8-GPU node: ranks 0..7, one node, no NIC traffic (concurrent reported as 1).
  check_shape(group_shape(parse_plan("tp8dp4"), GroupKind::TP, 8), 8, 8, 1, 1);
  // dp4 with tp8: DP stride 8 = one member per node, 4 nodes; all 8 GPUs of a node are in some DP group that leaves
  // the node → 8 share its NICs.
  check_shape(group_shape(parse_plan("tp8dp4"), GroupKind::DP, 8), 4, 1, 4, 8);
  // tp8 on 4-GPU nodes: ranks 0..7 = 2 nodes × 4; every GPU's TP group leaves its node.
  check_shape(group_shape(parse_plan("tp8dp2"), GroupKind::TP, 4), 8, 4, 2, 4);
  // tp2 dp32 on 8-GPU nodes: DP stride 2, ranks 0,2,…,62 → 4 per node over 64/8 = 8 nodes.
  check_shape(group_shape(parse_plan("tp2dp32"), GroupKind::DP, 8), 32, 4, 8, 8);
  // PP with tp8: stride 8 → one stage per node.
  check_shape(group_shape(parse_plan("tp8pp4"), GroupKind::PP, 8), 4, 1, 4, 8);
  // A group of one costs nothing and sits on one node.
  check_shape(group_shape(parse_plan("dp8"), GroupKind::TP, 8), 1, 1, 1, 1);
  // World smaller than a node: dp4 on an 8-GPU node.
  check_shape(group_shape(parse_plan("dp4"), GroupKind::DP, 8), 4, 4, 1, 1);
  // HSDP one node per shard group: dp16hsdp8 → shard = ranks 0..7 (1 node), replica = {r, r+8} (2 nodes).
  check_shape(group_shape(parse_plan("dp16hsdp8"), GroupKind::HSDPShard, 8), 8, 8, 1, 1);
  check_shape(group_shape(parse_plan("dp16hsdp8"), GroupKind::HSDPReplica, 8), 2, 1, 2, 8);
  // Not HSDP: the shard group is the whole DP group and the replica group has one rank.
  check_shape(group_shape(parse_plan("dp16fsdp"), GroupKind::HSDPShard, 8), 16, 8, 2, 8);
  check_shape(group_shape(parse_plan("dp16fsdp"), GroupKind::HSDPReplica, 8), 1, 1, 1, 1);
  // DP×CP with tp4 cp2 dp4 on 8-GPU nodes: stride 4, 8 members over ranks 0..28 → 2 per node, 4 nodes.
  check_shape(group_shape(parse_plan("tp4cp2dp4"), GroupKind::DPxCP, 8), 8, 2, 4, 8);
}

TEST_CASE("group_shape: uneven straddling reports the worst group") {
  // tp2 dp3 pp4 on 8-GPU nodes (24 GPUs, 3 nodes). DP groups: stride 2, 3 members; group {0,2,4} stays in node 0, but
  // {6,8,10} has rank 6 on node 0 and 8,10 on node 1 → worst group spans 2 nodes unevenly (1 + 2). The collective
  // model prices groups of per_node × nodes ranks, so the shape is the nearest even one that is not cheaper: the
  // fewest nodes ≥ 2 dividing 3 → 3 nodes × 1 rank (3 = 1 × 3, at least as many network crossings as 1 + 2).
  // GPUs whose DP group leaves their node: node 0: 6, 7 (2); node 1: 8–15 (groups {6,8,10},{7,9,11},{12,14,16},
  // {13,15,17}) = 8; node 2: 16, 17 (2) → busiest node 8.
  check_shape(group_shape(parse_plan("tp2dp3pp4"), GroupKind::DP, 8), 3, 1, 3, 8);
  // Uneven straddling on 72-GPU NVL72 "nodes": tp8 dp16 → DP stride 8, ranks 0,8,…,120; the group of tp rank 0 has
  // 9 members on node 0 (0..64) and 7 on node 1 → 2 nodes, 16 = 8 × 2. Always per_node × nodes = size, the shape the
  // collective model accepts (hardware/collectives.cpp rejects any other). Every one of the 8 DP groups leaves node 0,
  // so all 72 GPUs of node 0 share its NICs.
  const GroupShape nvl = group_shape(parse_plan("tp8dp16"), GroupKind::DP, 72);
  CHECK(nvl.per_node * nvl.nodes == nvl.size);
  check_shape(nvl, 16, 8, 2, 72);
}
