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
  // TE's userbuffer overlap (--tp-comm-overlap) exchanges chunks through CUDA IPC / multicast buffers mapped between
  // the GPUs of one NVLink domain (TransformerEngine common/comm_gemm_overlap/userbuffers, initialize_ub: every TP
  // rank maps its peers' buffers); a TP group that spans nodes cannot use it, so its traffic is never hidden.
  if (c.tp_overlap && c.tp_group.nodes <= 1) {
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
  // One activation forward / one gradient backward per micro-batch and boundary, b·(s/c)·h elements per TP rank
  // (Megatron-Core schedules.py get_tensor_shapes), ÷t when Megatron scatters it over the TP group:
  //  - with sequence parallelism the tensor between layers already is the rank's 1/t sequence shard;
  //  - the legacy stack's scatter-gather optimisation (Narayanan et al. 2021 §4.1; Megatron-LM
  //    --scatter-gather-tensors-in-pipeline, on by default from 72e4230bb5, 2021-02, until p2p_communication.py moved
  //    into Megatron-Core in 39b83c7953, 2023-01; DeepSpeed's pipeline engine partitions its sends over the model-
  //    parallel group the same way, pipe/engine.py is_pipe_partitioned): each TP rank sends 1/t of the replicated
  //    activation and the receiver all-gathers it over NVLink before use.
  // Megatron-Core without SP sends the whole tensor from every TP rank.
  const Plan& pl = c.sc.plan;
  const bool legacy = c.sc.train.stack == Stack::MegatronLegacy;
  const bool scattered = pl.tp > 1 && (c.sc.train.sp || legacy);
  const double bytes = activation_bytes(c.sc) / (scattered ? pl.tp : 1);
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
  double t = collective_time(c.hw, Collective::SendRecv, bytes, g).time_s;
  if (scattered && !c.sc.train.sp)  // scatter-gather: the receiver re-assembles the activation (gather_split_1d_tensor)
    t += group_collective_s(c, Collective::AllGather, activation_bytes(c.sc), c.tp_group);
  return {t, bytes};
}

}  // namespace parsim
