// Communication inside a pass and between pipeline stages. Sources: Shoeybi et al. 2019 §3 (TP all-reduces),
// Korthikanti et al. 2022 §4.2.2 (sequence parallelism), Megatron-Core tensor_parallel/layers.py (SP backward
// re-gather), TransformerEngine's AttnFuncWithCPAndKVP2P (context-parallel ring), MCore schedules.py (p2p tensor),
// domain-notes §6.
#include "sim/step/costs.hpp"

#include <algorithm>

namespace parsim {

CollectiveCost context_collective(const CostContext& c, Collective k, double bytes, const GroupShape& g) {
  return c.collectives ? c.collectives->get(c.hw, k, bytes, g) : collective_time(c.hw, k, bytes, g);
}

double group_collective_s(const CostContext& c, Collective k, double bytes, const GroupShape& g) {
  return g.size <= 1 ? 0.0 : context_collective(c, k, bytes, g).time_s;
}

void add_tp_comm(const CostContext& c, PassCost& p, double total, double overlappable_s, TpPass pass) {
  p.tp_s += total;
  // TE's userbuffer overlap (--tp-comm-overlap) exchanges chunks through CUDA IPC / multicast buffers mapped between
  // the GPUs of one NVLink domain (TransformerEngine common/comm_gemm_overlap/userbuffers, initialize_ub: every TP
  // rank maps its peers' buffers); a TP group that spans nodes cannot use it, so its traffic is never hidden.
  // PyTorch's async TP (the PyTorch stack's --tp-comm-overlap: torch.compile's micro-pipeline TP pass over
  // SymmetricMemory, torchtitan --experimental.enable_async_tensor_parallel; intra-node only as well) speeds up the
  // forward: PyTorch reports up to ~29 % (Llama3 8B) and ~20 % (70B) forward speedup but only ~8 % end to end for both
  // (discuss.pytorch.org/t/distributed-w-torchtitan-introducing-async-tensor-parallelism-in-pytorch/209487, on the
  // Grand Teton H100s), and torchtitan's 2025 tables measure 8.5–9 % (bf16) and 9.8–16 % (fp8) end to end
  // (benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md, rows S47). Hiding the backward's TP traffic as well would
  // give about twice that: the backward passes keep their TP communication exposed; the forward and the recompute
  // that replays it (full recompute adds the forward's cost) are hidden as TE's are.
  const bool hides = pass == TpPass::Forward || c.sc.train.stack != Stack::PyTorch;
  if (c.tp_overlap && c.tp_group.nodes <= 1 && hides) {
    // Userbuffer overlap splits each GEMM into chunks pipelined with the collective; the first chunk's
    // communication is never hidden (≈ 1/tp of it).
    double floor = total / std::max(2, c.sc.plan.tp);
    p.tp_exposed_s += std::max(floor, total - overlappable_s);
  } else {
    p.tp_exposed_s += total;
  }
}

// Token dispatch of an MoE layer (Megatron-Core transformer/moe/token_dispatcher.py):
//   alltoall (MoEAlltoAllTokenDispatcher, the default here): the per-expert token counts are all-gathered over the
//     EP×ETP group (E int64 per rank, before a host sync); the permuted tokens — k·T_sp pairs of h elements, in the
//     16-bit activation type (Megatron-Core dispatches bf16 also under fp8 recipes) — go out in one all-to-all over
//     the EP group (NCCL's p2p path: NVLink peers and NIC peers at once, hardware/collectives.cpp), the busiest rank
//     receiving `imbalance` × the mean, so the exchange takes S·imbalance; with ETP > 1 the received tokens are
//     all-gathered over the ETP group (gather_from_sequence_parallel_region). The combine mirrors it: reduce-scatter
//     over ETP, all-to-all back. The backward runs the same collectives on the gradients (combine's backward is a
//     dispatch and vice versa); the count exchange is forward only.
//   allgather (MoEAllGatherTokenDispatcher): every token of the EP×ETP group is all-gathered on every rank (and its
//     routing probabilities and indices, k·(4 + 8) bytes per token), the experts' outputs reduce-scattered back;
//     backward the reverse.
//   flex (MoEFlexTokenDispatcher with DeepEP — DeepSeek-AI, github.com/deepseek-ai/DeepEP — or HybridEP): a token
//     crosses the network once per remote NODE holding one of its experts (RDMA to the same-rank GPU there) and
//     NVLink once per GPU holding one, instead of once per (token, expert) pair: with E experts over ep GPUs on N
//     nodes and k distinct experts per token drawn evenly, a given GPU holds none of them with probability
//     q(x) = C(E − E/x, k) / C(E, k) (x = ep; per node x = N), so a token reaches ep·(1 − q(ep)) GPUs and
//     N·(1 − q(N)) nodes — at most expert_groups_per_token nodes under DeepSeek's node-limited routing (one expert
//     group per node or more). Per rank and direction: T·h·e·(N − 1)·(1 − q(N)) bytes over its NIC share and
//     T·h·e·(ep − 1)·(1 − q(ep)) over NVLink, concurrently (DeepEP pipelines the RDMA and NVLink stages), each
//     priced as NCCL-path p2p traffic of that volume; the busiest rank × imbalance; the combine sends the same back.
//     No count exchange or host sync (the layout is computed on the GPU).
// Without SP on tp > 1 the TP peers already hold the same tokens: no ETP gather (the layer's TP all-reduce combines
// the expert slices, counted on the tp axis as for a dense FFN).
namespace {

// Probability that a group of E/x experts (one of x equal parts of the E experts) holds none of a token's k distinct
// experts: C(E − E/x, k) / C(E, k) = Π_{i<k} (E − E/x − i) / (E − i).
double misses_all(int experts, int parts, int k) {
  const double E = experts, held = static_cast<double>(experts) / parts;
  double q = 1;
  for (int i = 0; i < k; ++i) q *= std::max(0.0, E - held - i) / (E - i);
  return q;
}

double flex_exchange_s(const CostContext& c, const LayerWork& lw, const ExpertSplit& x) {
  const Scenario& sc = c.sc;
  const ModelSpec& m = sc.model;
  const GroupShape g = group_shape(sc.plan, GroupKind::EP, c.hw.node.gpus_per_node);
  const double tokens = lw.routed_tokens_sent / m.experts_per_token;
  const double bytes_per_token = static_cast<double>(m.expert_width()) * activation_element_bytes(sc.train.precision) *
                                 x.imbalance;
  const int k = m.experts_per_token, E = m.experts;
  double t = 0;
  if (g.nodes > 1) {
    double nodes = g.nodes * (1 - misses_all(E, g.nodes, k));
    if (m.expert_groups_per_token > 0) nodes = std::min(nodes, static_cast<double>(m.expert_groups_per_token));
    const double remote = nodes * (g.nodes - 1) / g.nodes;  // the token's own node is reached over NVLink
    const GroupShape across{g.nodes, 1, g.nodes, g.concurrent_per_node, 1.0};
    // An all-to-all of S sends S·(N − 1)/N to the other nodes: S = volume · N / (N − 1).
    t = group_collective_s(c, Collective::AllToAll, tokens * bytes_per_token * remote * g.nodes / (g.nodes - 1.0),
                           across);
  }
  if (g.per_node > 1) {
    const double gpus = (g.size - 1) * (1 - misses_all(E, g.size, k));  // other GPUs reached
    const GroupShape inside{g.per_node, g.per_node, 1, 1, 1.0};
    t = std::max(t, group_collective_s(c, Collective::AllToAll,
                                       tokens * bytes_per_token * gpus * g.per_node / (g.per_node - 1.0), inside));
  }
  return t;
}

}  // namespace

MoeComm moe_comm(const CostContext& c, const LayerWork& lw, const ExpertSplit& x) {
  MoeComm out;
  const Scenario& sc = c.sc;
  const Plan& pl = sc.plan;
  const ModelSpec& m = sc.model;
  const int gpn = c.hw.node.gpus_per_node;
  // A routed token is h wide, or ℓ with LatentMoE (the projection runs before the dispatch, moe_layer.py preprocess).
  const double e = activation_element_bytes(sc.train.precision), h = static_cast<double>(m.expert_width());
  const int etp = pl.expert_tp();
  const bool tokens_sharded = sc.train.sp || pl.tp == 1;
  if (sc.train.moe_dispatcher == MoeDispatcher::AllGather) {
    if (pl.ep * etp <= 1) return out;
    const GroupShape g = group_shape(pl, GroupKind::EPxETP, gpn);
    const double tokens_in = lw.routed_tokens_sent / m.experts_per_token;  // the rank's tokens (SP shard)
    const double gathered = tokens_in * g.size;
    const double bytes = gathered * h * e;
    const double routing = gathered * m.experts_per_token * (4.0 + 8.0);
    const double ag = group_collective_s(c, Collective::AllGather, bytes, g);
    const double rs = group_collective_s(c, Collective::ReduceScatter, bytes, g);
    out.fwd_s = ag + rs + group_collective_s(c, Collective::AllGather, routing, g);
    out.bwd_s = ag + rs;
    return out;
  }
  if (pl.ep > 1 && sc.train.moe_dispatcher == MoeDispatcher::Flex) {
    const double x1 = flex_exchange_s(c, lw, x);
    out.a2a_fwd_s = out.a2a_bwd_s = 2 * x1;
    out.fwd_s = out.bwd_s = 2 * x1;
  } else if (pl.ep > 1) {
    const GroupShape g = group_shape(pl, GroupKind::EP, gpn);
    const double a2a = group_collective_s(c, Collective::AllToAll, lw.routed_tokens_sent * h * e * x.imbalance, g);
    const GroupShape counts_group = group_shape(pl, GroupKind::EPxETP, gpn);
    const double counts = group_collective_s(c, Collective::AllGather, 8.0 * m.experts * counts_group.size,
                                             counts_group);
    out.a2a_fwd_s = out.a2a_bwd_s = 2 * a2a;
    out.fwd_s = counts + 2 * a2a;
    out.bwd_s = 2 * a2a;
  }
  if (etp > 1 && tokens_sharded) {
    const GroupShape g = group_shape(pl, GroupKind::ETP, gpn);
    const double bytes = lw.routed_tokens_received * h * e;
    const double ag_rs = group_collective_s(c, Collective::AllGather, bytes, g) +
                         group_collective_s(c, Collective::ReduceScatter, bytes, g);
    out.fwd_s += ag_rs;
    out.bwd_s += ag_rs;
  }
  return out;
}

void add_ep_comm(const CostContext& c, PassCost& p, double total, double hideable, double shared_s,
                 double other_pass_s) {
  if (total <= 0) return;
  p.ep_s += total;
  const TrainingConfig& t = c.sc.train;
  double hidden = t.moe_shared_expert_overlap ? std::min(hideable, shared_s) : 0.0;
  // Megatron-Core's batch-level EP overlap (--overlap-moe-expert-parallel-comm, MCore 0.14): the token exchanges of
  // one micro-batch's layer run while another micro-batch's layer computes in the other direction (the merged
  // forward/backward of the 1F1B steady state); what the other pass's compute cannot cover stays exposed. While
  // hidden, the exchange's kernels hold SMs the partner's compute would use (HybridEP/DeepEP run on a fixed SM
  // budget — Megatron-Bridge's GPT-OSS recipe sets moe_hybridep_num_sms = 16 of 148 —, NCCL on one CTA per
  // channel): the partner's compute is slower by comm_compute_slowdown × the hidden time, as for the F&B pairs of
  // overlap_pair below (charged to this pass: every pass of the steady state has a partner). The passes a stage runs
  // alone — combined_1f1b.py: "The forward step for the first microbatch is executed alone, no a2a overlapping", and
  // the last backward — expose the hidden part again (PassCost::ep_overlap_s, lower/pipeline.cpp).
  if (t.moe_a2a_overlap) {
    const double before = hidden;
    hidden = std::max(hidden, std::min(hideable, other_pass_s));
    const double behind_partner = hidden - before;
    p.ep_overlap_s += behind_partner;
    p.compute_s += c.hw.gpu.compute.comm_compute_slowdown * behind_partner;
  }
  p.ep_exposed_s += total - hidden;
}

double activation_bytes(const Scenario& sc) {
  const double tokens_local = static_cast<double>(sc.train.mbs * sc.train.seq) / sc.plan.cp;
  return tokens_local * static_cast<double>(sc.model.hidden) * activation_element_bytes(sc.train.precision);
}

P2PCost p2p_cost(const CostContext& c) {
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
  if (pl.pp <= 1) return {0.0, bytes, 0.0};
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
  const CollectiveCost send = context_collective(c, Collective::SendRecv, bytes, g);
  double t = send.time_s;
  if (scattered && !c.sc.train.sp)  // scatter-gather: the receiver re-assembles the activation (gather_split_1d_tensor)
    t += group_collective_s(c, Collective::AllGather, activation_bytes(c.sc), c.tp_group);
  return {t, bytes, g.nodes > 1 ? send.nic_busy_s : 0.0};
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
  const double ea = a.exposed_comm_s(), eb = b.exposed_comm_s();
  const double ha = std::min(ea, b.compute_s), hb = std::min(eb, a.compute_s);
  PairOverlap oa, ob;
  oa.keep_exposed = ea > 0 ? (ea - ha) / ea : 1.0;
  ob.keep_exposed = eb > 0 ? (eb - hb) / eb : 1.0;
  oa.compute_scale = a.compute_s > 0 ? 1.0 + slowdown * hb / a.compute_s : 1.0;
  ob.compute_scale = b.compute_s > 0 ? 1.0 + slowdown * ha / b.compute_s : 1.0;
  return {oa, ob};
}

}  // namespace parsim
