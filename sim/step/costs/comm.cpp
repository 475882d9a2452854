// Communication inside a pass and between pipeline stages. Sources: Shoeybi et al. 2019 §3 (TP all-reduces),
// Korthikanti et al. 2022 §4.2.2 (sequence parallelism), Megatron-Core tensor_parallel/layers.py (SP backward
// re-gather), TransformerEngine's AttnFuncWithCPAndKVP2P (context-parallel ring), MCore schedules.py (p2p tensor),
// domain-notes §6.
#include "sim/step/costs.hpp"

#include <algorithm>

namespace parsim {

double group_collective_s(const CostContext& c, Collective k, double bytes, const GroupShape& g) {
  return g.size <= 1 ? 0.0 : collective_time(c.hw, k, bytes, g).time_s;
}

void add_tp_comm(const CostContext& c, PassCost& p, double total, double overlappable_s) {
  p.tp_s += total;
  if (c.tp_overlap) {
    // Userbuffer overlap splits each GEMM into chunks pipelined with the collective; the first chunk's
    // communication is never hidden (≈ 1/tp of it).
    double floor = total / std::max(2, c.sc.plan.tp);
    p.tp_exposed_s += std::max(floor, total - overlappable_s);
  } else {
    p.tp_exposed_s += total;
  }
}

double activation_bytes(const Scenario& sc) {
  const double tokens_local = static_cast<double>(sc.train.mbs * sc.train.seq) / sc.plan.cp;
  return tokens_local * static_cast<double>(sc.model.hidden) * activation_element_bytes(sc.train.precision);
}

std::pair<double, double> p2p_cost(const CostContext& c) {
  // One activation forward / one gradient backward per micro-batch and boundary (MCore schedules.py:
  // b·(s/c)·h elements, ÷t with SP).
  const Plan& pl = c.sc.plan;
  const double bytes = activation_bytes(c.sc) / (c.sc.train.sp ? pl.tp : 1);
  if (pl.pp <= 1) return {0.0, bytes};
  const int gpn = c.hw.node.gpus_per_node;
  const int stride = pl.tp * pl.cp * pl.dp;  // ranks between adjacent stages in the tp-cp-dp-pp layout
  GroupShape g;
  g.size = 2;
  if (stride % gpn == 0 || stride >= gpn) {
    g.per_node = 1;
    g.nodes = 2;
    g.concurrent_per_node = gpn;  // every GPU of the node sends to its peer stage at the same time
  } else {
    g.per_node = 2;
    g.nodes = 1;
    g.concurrent_per_node = gpn;
  }
  return {collective_time(c.hw, Collective::SendRecv, bytes, g).time_s, bytes};
}

PassCost PairOverlap::apply(const PassCost& c) const {
  PassCost p = c;
  p.compute_s *= compute_scale;
  p.tp_exposed_s *= keep_exposed;
  p.cp_exposed_s *= keep_exposed;
  p.ep_exposed_s *= keep_exposed;
  return p;
}

std::pair<PairOverlap, PairOverlap> overlap_pair(const PassCost& a, const PassCost& b, double slowdown) {
  // Exposed communication e and compute c of each pass. a's communication hides behind b's compute up to
  // h_a = min(e_a, c_b) (and b's behind a's); during the hidden time the communication kernels slow the partner's
  // compute by the factor (1 + slowdown), i.e. add slowdown·h to it.
  auto exposed = [](const PassCost& p) { return p.tp_exposed_s + p.cp_exposed_s + p.ep_exposed_s; };
  const double ea = exposed(a), eb = exposed(b);
  const double ha = std::min(ea, b.compute_s), hb = std::min(eb, a.compute_s);
  PairOverlap oa, ob;
  oa.keep_exposed = ea > 0 ? (ea - ha) / ea : 1.0;
  ob.keep_exposed = eb > 0 ? (eb - hb) / eb : 1.0;
  oa.compute_scale = a.compute_s > 0 ? 1.0 + slowdown * hb / a.compute_s : 1.0;
  ob.compute_scale = b.compute_s > 0 ? 1.0 + slowdown * ha / b.compute_s : 1.0;
  return {oa, ob};
}

}  // namespace parsim
