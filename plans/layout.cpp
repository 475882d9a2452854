// parsim plans/ — rank layout and process groups.
//
// Megatron-Core's default order "tp-cp-ep-dp-pp" (megatron/core/parallel_state.py, RankGenerator):
// tp varies fastest, then cp, then dp, then pp, so a TP group is tp consecutive ranks and consecutive ranks fill a node
// (torchrun's node-major rank assignment). rank = tp_i + tp·(cp_i + cp·(dp_i + dp·pp_i)).
// Expert layers (MoE parallel folding, Liu et al. 2025 arXiv 2504.14960): Megatron-Core builds a second generator over
// the same ranks with tp = etp, cp = 1, ep, dp = edp = tp·cp·dp/(etp·ep) and the same pp, in the same order, so
// rank = etp_i + etp·(ep_i + ep·(edp_i + edp·pp_i)): an EP group is ep ranks spaced etp apart, an expert-DP group edp
// ranks spaced etp·ep apart.
//
// Every process group of this layout is an arithmetic progression of ranks: base + j·stride, j = 0..size−1, because
// each group varies one "digit" (or two adjacent digits, DP×CP) of the mixed-radix rank.
#include "plans/plan.hpp"

#include "sim/core/error.hpp"

#include <algorithm>

namespace parsim {

namespace {

struct Progression {
  int stride = 1;
  int size = 1;
};

int hsdp_n(const Plan& p) {
  return sharding_traits(p.sharding).hierarchical && p.hsdp_group > 0 ? p.hsdp_group : p.dp;
}

Progression progression(const Plan& p, GroupKind kind) {
  switch (kind) {
    case GroupKind::TP: return {1, p.tp};
    case GroupKind::CP: return {p.tp, p.cp};
    case GroupKind::DP: return {p.tp * p.cp, p.dp};
    case GroupKind::PP: return {p.tp * p.cp * p.dp, p.pp};
    case GroupKind::DPxCP: return {p.tp, p.cp * p.dp};  // cp and dp are adjacent digits
    case GroupKind::HSDPShard: return {p.tp * p.cp, hsdp_n(p)};  // dp_i mod N varies
    case GroupKind::HSDPReplica: return {p.tp * p.cp * hsdp_n(p), p.dp / hsdp_n(p)};  // dp_i div N varies
    case GroupKind::ETP: return {1, p.expert_tp()};
    case GroupKind::EP: return {p.expert_tp(), p.ep};
    case GroupKind::EDP: return {p.expert_tp() * p.ep, p.expert_dp()};
    case GroupKind::EPxETP: return {1, p.expert_tp() * p.ep};  // etp and ep are adjacent digits
  }
  return {};
}

void check_rank(const Plan& p, int rank) {
  if (rank < 0 || rank >= p.world())
    throw InputError("rank " + std::to_string(rank) + " is outside the plan's world of " + std::to_string(p.world()) +
                     " GPUs (valid: 0.." + std::to_string(p.world() - 1) + ")");
}

}  // namespace

std::string to_string(GroupKind k) {
  switch (k) {
    case GroupKind::TP: return "tp";
    case GroupKind::CP: return "cp";
    case GroupKind::DP: return "dp";
    case GroupKind::PP: return "pp";
    case GroupKind::DPxCP: return "dpxcp";
    case GroupKind::HSDPShard: return "hsdp-shard";
    case GroupKind::HSDPReplica: return "hsdp-replica";
    case GroupKind::ETP: return "etp";
    case GroupKind::EP: return "ep";
    case GroupKind::EDP: return "edp";
    case GroupKind::EPxETP: return "epxetp";
  }
  return "?";
}

RankCoord coord_of(const Plan& p, int rank) {
  check_rank(p, rank);
  RankCoord c;
  c.tp = rank % p.tp;
  rank /= p.tp;
  c.cp = rank % p.cp;
  rank /= p.cp;
  c.dp = rank % p.dp;
  c.pp = rank / p.dp;
  return c;
}

int rank_of(const Plan& p, const RankCoord& c) {
  if (c.tp < 0 || c.tp >= p.tp || c.cp < 0 || c.cp >= p.cp || c.dp < 0 || c.dp >= p.dp || c.pp < 0 || c.pp >= p.pp)
    throw InputError("coordinate (tp " + std::to_string(c.tp) + ", cp " + std::to_string(c.cp) + ", dp " +
                     std::to_string(c.dp) + ", pp " + std::to_string(c.pp) + ") is outside plan " + p.to_string());
  return c.tp + p.tp * (c.cp + p.cp * (c.dp + p.dp * c.pp));
}

ExpertCoord expert_coord_of(const Plan& p, int rank) {
  check_rank(p, rank);
  ExpertCoord c;
  const int etp = p.expert_tp(), edp = p.expert_dp();
  c.etp = rank % etp;
  rank /= etp;
  c.ep = rank % p.ep;
  rank /= p.ep;
  c.edp = rank % edp;
  c.pp = rank / edp;
  return c;
}

std::vector<int> group_ranks(const Plan& p, GroupKind kind, int rank) {
  check_rank(p, rank);
  const Progression g = progression(p, kind);
  const int base = rank - (rank / g.stride) % g.size * g.stride;
  std::vector<int> out(static_cast<std::size_t>(g.size));
  for (int j = 0; j < g.size; ++j) out[static_cast<std::size_t>(j)] = base + j * g.stride;
  return out;
}

GroupShape group_shape(const Plan& p, GroupKind kind, int gpus_per_node) {
  require(gpus_per_node > 0, "gpus_per_node must be a positive integer, got " + std::to_string(gpus_per_node));
  const Progression g = progression(p, kind);
  const int G = gpus_per_node;
  const int n = g.size, S = g.stride;
  if (n == 1) return {1, 1, 1, 1};
  const long span = static_cast<long>(S) * n;  // a group lies in the aligned block [k·span, (k+1)·span)
  // Exact cases, identical for every group of this kind:
  if (G % span == 0) return {n, n, 1, 1};                               // block inside one node: NVLink only
  if (S % G == 0) return {n, 1, n, G};                                  // one member per node
  if (G % S == 0 && span % G == 0) return {n, G / S, static_cast<int>(span / G), G};  // G/S members on each node
  // Groups that straddle node boundaries unevenly: scan every group (O(world)), report the one on most nodes.
  const int world = p.world();
  const int node_count = (world + G - 1) / G;
  std::vector<int> leaving(static_cast<std::size_t>(node_count), 0);
  GroupShape worst{n, n, 1, 1};
  for (int base = 0; base < world; ++base) {
    if ((base / S) % n != 0) continue;  // not the first member of its group
    int nodes = 0, last_node = -1;
    for (int j = 0; j < n; ++j) {
      const int node = (base + j * S) / G;  // ranks increase with j, so nodes are visited in order
      if (node != last_node) ++nodes, last_node = node;
    }
    if (nodes > 1)
      for (int j = 0; j < n; ++j) ++leaving[static_cast<std::size_t>((base + j * S) / G)];
    worst.nodes = std::max(worst.nodes, nodes);
  }
  // The worst group spans `nodes` nodes unevenly (e.g. a DP group of 16 ranks spaced 8 apart on 72-GPU NVL72 racks:
  // 9 + 7, or 2 + 9 + 5). Such groups are legal — their traffic just crosses the scale-out network — but the
  // collective model prices groups of per_node × nodes ranks. Priced as the nearest such shape that is not cheaper: the
  // fewest nodes ≥ the spanned count that divide the group evenly (16 over 3 nodes → 4 × 4; a prime size → one rank
  // per node), i.e. at least as many network crossings as the real group.
  if (worst.nodes > 1) {
    int k = worst.nodes;
    while (n % k != 0) ++k;
    worst = {n, n / k, k, 1};
  }
  worst.concurrent_per_node = std::min(G, std::max(1, *std::max_element(leaving.begin(), leaving.end())));
  return worst;
}

}  // namespace parsim
