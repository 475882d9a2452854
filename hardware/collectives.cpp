// parsim hardware/collectives.cpp — α–β cost of NCCL/RCCL collectives on the node topology (domain notes §7).
//
// Notation: S bytes (all-reduce buffer, all-gather output, reduce-scatter input, message), n ranks = p per node × N
// nodes; αᵢ / αₑ the per-step latency of the intra-node fabric / the network; bandwidths are achievable (nominal ×
// calibrated efficiency), per GPU and per direction:
//   Bᵢ   intra ring bandwidth: NVSwitch → nominal × intra.efficiency (= measured 8-GPU ring busbw);
//        full mesh → ONE link's bandwidth (a ring hop uses one xGMI link)
//   Bₗ   one link (full mesh) — B_all = (p−1)·Bₗ when an algorithm drives all of a GPU's links at once
//   Bₑ   network: each GPU gets nics·nic/c of its node's NICs (c = max(concurrent_per_node, p) GPUs sharing them),
//        at most its own NICs (nics·nic/gpus_per_node) or one whole NIC, whichever is larger; × inter.efficiency
//   Bₙ   NVLS all-reduce algbw on p GPUs: nominal·p/(p+1) × nvls_efficiency (nccl-tests PR #239)
// Algorithms (time = latency + bandwidth term):
//   Ring (NCCL ring; AR, AG, RS, Broadcast). Bus bw B = Bᵢ inside a node; across nodes min(Bᵢ, p·Bₑ): every node has
//     one network edge per ring, spread over the p GPUs' NICs by NCCL's channels (domain notes §7: busbw ≈ g·B_net).
//     AR 2(n−1)/n·S/B, AG/RS (n−1)/n·S/B, Broadcast S/B. Latency per pass (n−1 steps, N−1 of them across the
//     network — NCCL tuning.cc counts nInterSteps the same way): (n−N)·αᵢ + (N−1)·αₑ; AR makes two passes.
//   Tree (NCCL double binary tree across nodes, chain inside; AR only), pipelined, so the slower part sets the pace:
//     max(intra, f·S/(p·Bₑ)). Intra: a chain GPU receives S from below and S from above (reduce up, broadcast down),
//     so 2S/Bᵢ through its NVSwitch port, or S/Bₗ on each of its two mesh links; NVLSTree (where NVLS is on) S/Bₙ.
//     Network: f = min(2, N/2) — per direction a node moves S with 2 nodes (each is the other's parent in one tree),
//     1.5 S with 3, 2 S once interior nodes have two children [D]; so 2-node tree busbw exceeds the NIC limit
//     (nccl-tests #196). Latency 2[(p−1)αᵢ + ⌈log₂N⌉αₑ] (chain) or nvls_latency + 2⌈log₂N⌉αₑ (NVLSTree).
//   Hierarchical two-level (AR, AG, RS): intra reduce-scatter, inter-node ring on S/p by every GPU over its own NIC
//     share, intra all-gather, one after the other: AR 2·(p−1)/p·S/B_in + 2(N−1)/N·(S/p)/Bₑ (domain notes §7);
//     B_in = Bᵢ on NVSwitch, B_all on a full mesh. AG/RS: one intra and one inter phase.
//   NVLS (AR only, NVSwitch with SHARP): nvls_latency + S/Bₙ; across nodes each GPU also all-reduces its S/p share
//     over the network, pipelined with the switch reduction: + 2(N−1)αₑ, max(S/Bₙ, 2(N−1)/N·(S/p)/Bₑ) [D].
//   Direct (inside one node: all-links reduce-scatter/all-gather, RCCL on the MI300X mesh; AllToAll; SendRecv):
//     AR 2αᵢ + 2(n−1)/n·S/B_all, AG/RS αᵢ + (n−1)/n·S/B_all. AllToAll: S/n to each peer, intra and network parts
//     concurrent: max((p−1)/n·S/Bᵢ [switch] or (S/n)/Bₗ [mesh], (n−p)/n·S/Bₑ) + αᵢ + αₑ (where used).
//     SendRecv: S/Bᵢ (switch) or S/Bₗ (mesh) + αᵢ inside a node, S/Bₑ + αₑ when the group spans nodes.
// Auto = what NCCL/RCCL would pick, the fastest of: AR on NVSwitch Ring, Tree (N > 1), NVLS (nvls and p ≥
// nvls_min_gpus, NCCL's rule); AR/AG/RS on a full mesh Direct inside a node (RCCL's multi-channel rings use all 7
// links — parsim represents that as Direct; a plain Ring gets one link per hop), and Ring/Tree/Hierarchical across
// nodes (Hierarchical stands for those all-link rings plus the network); AG/RS on NVSwitch Ring; Broadcast Ring;
// AllToAll and SendRecv Direct. An algorithm forced for a collective it does not implement falls back to Auto, and
// CollectiveCost::algo says what ran.
#include "hardware/hardware.hpp"
#include "sim/core/error.hpp"
#include "sim/core/text.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace parsim {

std::string to_string(Collective c) {
  switch (c) {
    case Collective::AllReduce: return "all_reduce";
    case Collective::AllGather: return "all_gather";
    case Collective::ReduceScatter: return "reduce_scatter";
    case Collective::AllToAll: return "all_to_all";
    case Collective::SendRecv: return "send_recv";
    case Collective::Broadcast: return "broadcast";
  }
  return "?";
}

std::string to_string(CollAlgo a) {
  switch (a) {
    case CollAlgo::Auto: return "auto";
    case CollAlgo::Ring: return "ring";
    case CollAlgo::Tree: return "tree";
    case CollAlgo::Hierarchical: return "hierarchical";
    case CollAlgo::NVLS: return "nvls";
    case CollAlgo::Direct: return "direct";
    case CollAlgo::NVLSTree: return "nvls_tree";
    case CollAlgo::CollNet: return "collnet";
    case CollAlgo::PAT: return "pat";
  }
  return "?";
}

std::string to_string(CollProtocol p) {
  switch (p) {
    case CollProtocol::LL: return "LL";
    case CollProtocol::LL128: return "LL128";
    case CollProtocol::Simple: return "Simple";
  }
  return "?";
}

double collective_nic_bytes(const Hardware&, Collective, double, const GroupShape&) { return 0; }

double bus_factor(Collective c, int n) {
  if (n < 1) throw InputError("collective group size must be ≥ 1, got " + std::to_string(n));
  switch (c) {
    case Collective::AllReduce: return 2.0 * (n - 1) / n;
    case Collective::AllGather:
    case Collective::ReduceScatter:
    case Collective::AllToAll: return static_cast<double>(n - 1) / n;
    default: return 1.0;
  }
}

namespace {

constexpr double kNone = std::numeric_limits<double>::infinity();  // "this algorithm does not apply"

struct Ctx {
  Collective c;
  double S;
  double n, p, N;
  bool mesh;
  double ai, ae;      // α intra / network per step
  double Bi, Bl, Ball, Be, Bn;
  bool nvls_hw, nvls_ok;
  double nvls_lat;
};

bool is(const Ctx& x, std::initializer_list<Collective> cs) { return std::find(cs.begin(), cs.end(), x.c) != cs.end(); }

double ring(const Ctx& x) {
  if (!is(x, {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::Broadcast})) return kNone;
  const double B = x.N == 1 ? x.Bi : x.p > 1 ? std::min(x.Bi, x.p * x.Be) : x.Be;
  const double pass = (x.n - x.N) * x.ai + (x.N - 1) * x.ae;
  switch (x.c) {
    case Collective::AllReduce: return 2 * pass + 2 * (x.n - 1) / x.n * x.S / B;
    case Collective::Broadcast: return pass + x.S / B;
    default: return pass + (x.n - 1) / x.n * x.S / B;
  }
}

double tree(const Ctx& x) {
  if (x.c != Collective::AllReduce) return kNone;
  const double inter_bw = x.N > 1 ? std::min(2.0, x.N / 2) * x.S / (x.p * x.Be) : 0;
  const double inter_lat = x.N > 1 ? 2 * std::ceil(std::log2(x.N)) * x.ae : 0;
  const double chain = x.p > 1 ? (x.mesh ? x.S / x.Bl : 2 * x.S / x.Bi) : 0.0;
  double t = 2 * (x.p - 1) * x.ai + inter_lat + std::max(chain, inter_bw);                   // chain inside
  if (x.nvls_ok) t = std::min(t, x.nvls_lat + inter_lat + std::max(x.S / x.Bn, inter_bw));     // NVLSTree
  return t;
}

double hierarchical(const Ctx& x) {
  if (!is(x, {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter})) return kNone;
  const double B_in = x.mesh ? x.Ball : x.Bi;
  const double intra_steps = x.p > 1 ? (x.mesh ? 1 : x.p - 1) : 0;
  const double intra = x.p > 1 ? (x.p - 1) / x.p * x.S / B_in : 0;
  const double shard = x.S / x.p;
  if (x.c == Collective::AllReduce)
    return 2 * intra_steps * x.ai + 2 * (x.N - 1) * x.ae + 2 * intra + 2 * (x.N - 1) / x.N * shard / x.Be;
  return intra_steps * x.ai + (x.N - 1) * x.ae + intra + (x.N - 1) / x.N * shard / x.Be;
}

double nvls(const Ctx& x) {
  if (x.c != Collective::AllReduce || !x.nvls_hw || x.p < 2) return kNone;
  if (x.N == 1) return x.nvls_lat + x.S / x.Bn;
  return x.nvls_lat + 2 * (x.N - 1) * x.ae + std::max(x.S / x.Bn, 2 * (x.N - 1) / x.N * (x.S / x.p) / x.Be);
}

double direct(const Ctx& x) {
  switch (x.c) {
    case Collective::AllReduce:
      return x.N == 1 ? 2 * x.ai + 2 * (x.n - 1) / x.n * x.S / x.Ball : kNone;
    case Collective::AllGather:
    case Collective::ReduceScatter:
      return x.N == 1 ? x.ai + (x.n - 1) / x.n * x.S / x.Ball : kNone;
    case Collective::AllToAll: {
      const double intra = x.p > 1 ? (x.mesh ? x.S / x.n / x.Bl : (x.p - 1) / x.n * x.S / x.Bi) : 0;
      const double inter = x.N > 1 ? (x.n - x.p) / x.n * x.S / x.Be : 0;
      return (x.p > 1 ? x.ai : 0) + (x.N > 1 ? x.ae : 0) + std::max(intra, inter);
    }
    case Collective::SendRecv:
      return x.N == 1 ? x.ai + x.S / (x.mesh ? x.Bl : x.Bi) : x.ae + x.S / x.Be;
    default: return kNone;
  }
}

double run(const Ctx& x, CollAlgo a) {
  switch (a) {
    case CollAlgo::Ring: return ring(x);
    case CollAlgo::Tree: return tree(x);
    case CollAlgo::Hierarchical: return hierarchical(x);
    case CollAlgo::NVLS: return nvls(x);
    case CollAlgo::Direct: return direct(x);
    default: break;
  }
  return kNone;
}

std::vector<CollAlgo> auto_candidates(const Ctx& x) {
  using A = CollAlgo;
  switch (x.c) {
    case Collective::AllReduce:
      if (x.mesh) return x.N == 1 ? std::vector<A>{A::Direct} : std::vector<A>{A::Ring, A::Tree, A::Hierarchical};
      {
        std::vector<A> v{A::Ring};
        if (x.N > 1) v.push_back(A::Tree);
        if (x.nvls_ok) v.push_back(A::NVLS);
        return v;
      }
    case Collective::AllGather:
    case Collective::ReduceScatter:
      if (x.mesh) return x.N == 1 ? std::vector<A>{A::Direct} : std::vector<A>{A::Ring, A::Hierarchical};
      return {A::Ring};
    case Collective::Broadcast: return {A::Ring};
    default: return {A::Direct};
  }
}

}  // namespace

CollectiveCost collective_time(const Hardware& hw, Collective c, double bytes, const GroupShape& g, CollAlgo algo) {
  if (!(bytes >= 0) || !std::isfinite(bytes))
    throw InputError(to_string(c) + ": message size must be a finite number of bytes ≥ 0, got " + fmt_num(bytes));
  const auto& nd = hw.node;
  if (g.size < 1 || g.per_node < 1 || g.nodes < 1 || g.per_node * g.nodes != g.size || g.per_node > nd.gpus_per_node ||
      g.concurrent_per_node < 1 || g.concurrent_per_node > nd.gpus_per_node)
    throw InputError(to_string(c) + ": group shape size " + std::to_string(g.size) + " = per_node " +
                     std::to_string(g.per_node) + " × nodes " + std::to_string(g.nodes) + ", concurrent_per_node " +
                     std::to_string(g.concurrent_per_node) + " is not valid on " + std::to_string(nd.gpus_per_node) +
                     "-GPU nodes (need size = per_node × nodes, 1 ≤ per_node, concurrent_per_node ≤ gpus_per_node)");
  if (g.size == 1) return {0.0, algo == CollAlgo::Auto ? CollAlgo::Ring : algo, CollProtocol::Simple, 0, 0, 0, 0};

  Ctx x{};
  x.c = c;
  x.S = bytes;
  x.n = g.size, x.p = g.per_node, x.N = g.nodes;
  x.mesh = nd.intra().topology == IntraTopology::FullMesh;
  x.ai = nd.intra().latency_s, x.ae = nd.scale_out() ? nd.inter().latency_s : 0;
  const double intra_eff = nd.intra().bw_Bps_unidir * nd.intra().efficiency;
  x.Bl = x.mesh ? intra_eff / nd.intra().links_per_gpu : intra_eff;
  x.Bi = x.mesh ? x.Bl : intra_eff;
  x.Ball = x.mesh ? (x.p - 1) * x.Bl : intra_eff;
  x.Be = nd.scale_out() ? nic_share_Bps(nd, std::max(g.concurrent_per_node, g.per_node)) * nd.inter().efficiency : 1e-30;
  x.nvls_hw = nd.intra().nvls && !x.mesh;
  x.nvls_ok = x.nvls_hw && g.per_node >= nd.intra().nvls_min_gpus;
  x.Bn = nd.intra().bw_Bps_unidir * x.p / (x.p + 1) * nd.intra().nvls_efficiency;
  x.nvls_lat = 25e-6;

  if (algo != CollAlgo::Auto) {
    const double t = run(x, algo);
    if (t < kNone) return {t, algo, CollProtocol::Simple, 0, 0, 0, 0};
  }
  CollectiveCost best{kNone, CollAlgo::Ring, CollProtocol::Simple, 0, 0, 0, 0};
  for (CollAlgo a : auto_candidates(x)) {
    const double t = run(x, a);
    if (t < best.time_s) best = {t, a, CollProtocol::Simple, 0, 0, 0, 0};
  }
  return best;
}

}  // namespace parsim
