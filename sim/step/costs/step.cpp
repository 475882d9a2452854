// compute_step_costs(): the per-pass costs of one step composed from the pieces (layer.cpp, comm.cpp, edges.cpp), the
// parameters each rank holds and its data-parallel groups.
#include "sim/step/costs.hpp"
#include "sim/step/analysis.hpp"

#include <algorithm>
#include <utility>

namespace parsim {

StepCosts compute_step_costs(const Scenario& sc, const Hardware* megatron_hw, const CollectiveMemos* memos) {
  const ModelSpec& m = sc.model;
  const Plan& pl = sc.plan;
  const TrainingConfig& tr = sc.train;
  // Kernels of the software stack: the Megatron-Core / Transformer Engine stack has its own attention, fp8 casts and
  // sustained fraction (hardware/presets.cpp); collectives and memory bandwidth are the hardware's. The legacy
  // Megatron stack predates Transformer Engine (apex fused kernels, no fp8): the PyTorch-native kernel curves at the
  // Megatron program's sustained fraction (legacy_compute).
  const bool megatron = tr.stack == Stack::Megatron, legacy = tr.stack == Stack::MegatronLegacy;
  const bool derive = megatron && !megatron_hw;
  // (derived here for this plan alone: the Megatron view when the caller holds none, the legacy view always)
  const Hardware derived = derive ? megatron_compute(sc.hw) : legacy ? legacy_compute(sc.hw) : Hardware{};
  const Hardware& hw = legacy || derive ? derived : !megatron ? sc.hw : *megatron_hw;
  const int gpn = hw.node.gpus_per_node;
  // (a memo serves one hardware: none for a Megatron hardware derived here for this plan alone)
  CollectiveMemo* memo = !memos ? nullptr : !megatron ? memos->plain : derive ? nullptr : memos->megatron;
  const CostContext c{sc, hw, group_shape(pl, GroupKind::TP, gpn), group_shape(pl, GroupKind::CP, gpn),
                      tr.tp_comm_overlap, memo};
  StepCosts out;
  out.layers_per_chunk = layers_per_chunk(m.layers, pl.pp, pl.vpp, tr.split);
  out.placement = pipeline_placement(tr.schedule, pl.pp, pl.vpp);
  // Each distinct layer kind is costed once (DeepSeek-V3: dense and MoE FFN layers; GPT-OSS: full and sliding
  // attention); kind_prefix counts them so that any range of layers costs Σ count · cost.
  const auto kinds = m.layer_kind_counts();
  const int L = m.layers;
  out.kinds.reserve(kinds.size());
  if (kinds.size() > 1) out.kind_prefix.assign(kinds.size() * static_cast<std::size_t>(L + 1), 0);
  for (std::size_t j = 0; j < kinds.size(); ++j) {
    const LayerKind kind = kinds[j].first;
    LayerKindCosts k{kind, {}, layer_params_per_rank(m, kind, pl.tp, pl.ep, pl.expert_tp()), {}, {}};
    k.pass = layer_costs(c, kind, &k.fwd_parts, &k.bwd_parts);
    out.kinds.push_back(std::move(k));
    out.has_expert_params = out.has_expert_params || out.kinds.back().params.expert > 0;
    if (kinds.size() == 1) continue;
    int* row = out.kind_prefix.data() + j * static_cast<std::size_t>(L + 1);
    for (int i = 0; i < L; ++i) row[i + 1] = row[i] + (m.layer(i) == kind ? 1 : 0);
  }
  edge_costs(c, out.embed, out.head);
  // The slowest GPU sets a synchronous step: every rank waits for every other at least once per step (the gradient
  // reduction; TP/CP/PP far more often), so the simulated rank computes at the slowest of the world's GPUs
  // (hardware/compute_cost.cpp slowest_gpu_factor: chip-to-chip speed spread under power management; σ set from
  // Sinha et al. SC'22 in hardware/calibration.json, not fitted). add_mtp_costs below copies these slowed passes into
  // the MTP module and slows its own eh_proj GEMMs by the same factor.
  if (const double slow = slowest_gpu_factor(hw, pl.world()); slow != 1.0) {
    auto slow_down = [slow](PassCosts& p) {
      for (PassCost* q : {&p.fwd, &p.bwd, &p.bwd_input, &p.bwd_weight}) q->compute_s *= slow;
    };
    for (LayerKindCosts& k : out.kinds) {
      slow_down(k.pass);
      k.fwd_parts *= slow;
      k.bwd_parts *= slow;
    }
    slow_down(out.embed);
    slow_down(out.head);
  }
  out.host = host_model(sc);
  // The host's issue cost per kind: every kind's passes carry their own (range_cost sums the kinds' passes).
  for (LayerKindCosts& k : out.kinds) add_layer_host(c, out.host, k.pass, k.kind);
  out.layer = out.kinds.front().pass;
  add_edge_host(c, out.host, out.embed, out.head);
  if (m.mtp_layers > 0) {
    // The MTP module's layers: the main model's last layer kind (DeepSeek-V3), or a hybrid model's MTP pattern
    // (Nemotron 3 Super "*E": its attention and MoE kinds' passes and parameters added; validate_model requires every
    // MTP kind among the main layers, so each has its costs here). Megatron-Core's MultiTokenPredictionBlock sits on
    // the last stage: per module enorm, hnorm and the final norm (replicated), eh_proj (column-parallel 2h → h/t) and
    // its blocks split as the main stack's; with mtp_use_repeated_layer one module serves every depth.
    PassCosts module;
    RankParams one{};
    for (const LayerKind& k : m.mtp_module_kinds()) {
      const LayerKindCosts* found = nullptr;
      for (const LayerKindCosts& kc : out.kinds)
        if (kc.kind == k) found = &kc;
      if (found == nullptr) throw InputError("model '" + m.name + "': an MTP layer kind is not among its layers");
      module += found->pass;
      one += found->params;
    }
    add_mtp_costs(c, out.embed, module, out.head);
    const double h = static_cast<double>(m.hidden);
    one.dense += 2.0 * h * h / pl.tp + 3.0 * h * m.norm_tensors();
    const double modules = m.mtp_repeated ? 1.0 : static_cast<double>(m.mtp_layers);
    out.mtp_params = one.scaled(modules);
    out.has_expert_params = out.has_expert_params || out.mtp_params.expert > 0;
  }
  const P2PCost p2p = p2p_cost(c);
  out.p2p_s = p2p.time_s;
  out.p2p_bytes = p2p.bytes;
  out.p2p_nic_s = p2p.nic_s;
  // NIC share of the in-pass collectives whose group leaves the node (the engine's NIC sharing, sim/engine): TP at
  // one activation A (all-gather with SP, all-reduce without, costs/layer.cpp), the CP ring's K‖V step (2·(b·s/c)·
  // (kv_heads/t)·head_dim elements), the EP all-to-all of the rank's routed tokens (k × its tokens).
  auto nic_share = [&](Collective k, double bytes, const GroupShape& g) {
    if (g.size <= 1 || g.nodes <= 1 || !(bytes > 0)) return 0.0;
    const CollectiveCost cc = context_collective(c, k, bytes, g);
    return cc.time_s > 0 ? std::min(1.0, cc.nic_busy_s / cc.time_s) : 0.0;
  };
  {
    const double A = activation_bytes(sc);
    const double e = activation_element_bytes(tr.precision);
    const double tokens_local = static_cast<double>(tr.mbs * tr.seq) / pl.cp;
    out.nic_share[Axis::tp] = nic_share(tr.sp ? Collective::AllGather : Collective::AllReduce, A, c.tp_group);
    const double kv = 2.0 * tokens_local * std::max(1.0, static_cast<double>(m.kv_heads) / pl.tp) *
                      static_cast<double>(m.head_dim) * e;
    out.nic_share[Axis::cp] = nic_share(Collective::SendRecv, kv, c.cp_group);
    if (pl.ep > 1 && m.experts_per_token > 0) {
      const double width = static_cast<double>(m.expert_width()) / static_cast<double>(m.hidden);  // LatentMoE: ℓ/h
      const double sent = A / ((tr.sp || pl.tp == 1) ? pl.tp : 1) * m.experts_per_token * width;
      out.nic_share[Axis::ep] = nic_share(Collective::AllToAll, sent, group_shape(pl, GroupKind::EP, gpn));
    }
  }

  // ---- parameters and data-parallel groups ----------------------------------------------------------------
  out.layer_params = out.kinds.front().params.total();
  out.embed_params = embedding_params_per_tp_rank(m, pl.tp);
  out.head_params = lm_head_params_per_tp_rank(m, pl.tp);
  // Tied embeddings on a single stage share one matrix: the head then owns only the final norm. With pp > 1 Megatron
  // keeps a copy of the embedding on the last stage (and all-reduces its gradient between the two).
  if (m.tied_embeddings && pl.pp == 1) out.head_params = static_cast<double>(m.hidden);
  out.dp_group = group_shape(pl, GroupKind::DPxCP, gpn);
  // Two parameter copies (DualPipe): rank s holds virtual stage s and a copy of virtual stage pp − 1 − s, so each
  // copy's gradients are summed with its mirror's (the DualPipe repository's example adds the mirror rank's gradient
  // before the step) — one reduction over the DP×CP ranks of both stages. The mirror is (pp − 1 − 2s) stages away, at
  // least tp·cp·dp ranks: on another node unless the whole pipeline fits in one (the pairs farthest apart set the
  // time). The distributed optimizer shards over that doubled group.
  const int copies = schedule_traits(tr.schedule).parameter_copies;
  if (copies > 1 && pl.pp > 1) {
    GroupShape& g = out.dp_group;
    const bool one_node = pl.world() <= gpn;
    g.size *= copies;
    if (one_node) {
      g.per_node *= copies;
    } else {
      g.nodes *= copies;
      g.concurrent_per_node = gpn;  // every rank of a node reduces with its mirror at the step's end
    }
  }
  out.shard_group = out.dp_group;
  out.replica_group = GroupShape{};
  out.shard_degree = 1;
  const ShardingTraits& sh = sharding_traits(pl.sharding);
  if (sh.hierarchical) {
    out.shard_group = group_shape(pl, GroupKind::HSDPShard, gpn);
    out.replica_group = group_shape(pl, GroupKind::HSDPReplica, gpn);
    out.shard_degree = out.shard_group.size;
  } else if (sh.shards_optimizer) {
    out.shard_degree = out.dp_group.size;
  }
  // Expert parameters: reduced (and with a sharded optimizer, sharded) over the expert-DP group, Megatron-Core's
  // expert_data_parallel_group (distributed optimizer and DDP keep separate expert buffers).
  out.edp_group = group_shape(pl, GroupKind::EDP, gpn);
  out.expert_shard_degree = sh.shards_optimizer || sh.shards_params ? out.edp_group.size : 1;
  // AdamW step, memory-bound (Loshchilov & Hutter 2019 update): read fp32 master weight, m, v and fp32 gradient
  // (16 B), write master, m, v (12 B) and the 16-bit model copy (2 B), plus the gradient-norm read for clipping (4 B).
  // Moments in bf16 (--adam-moments bf16) read and write 2 + 2 B instead of 4 + 4: 26 B. With --bf16-optimizer the
  // bf16 model weights are the master (read and write 2 B, no separate copy) and the moments bf16: 20 B.
  const double moments = sc.train.bf16_moments || sc.train.bf16_optimizer ? 2.0 : 4.0;
  const double master_rw = sc.train.bf16_optimizer ? 2 * 2.0 : 2 * 4.0, model_copy = sc.train.bf16_optimizer ? 0.0 : 2.0;
  out.optimizer_bytes_per_param = 4 + master_rw + 2 * 2 * moments + model_copy + 4;
  add_step_host(sc, out);
  if (tr.cpu_offload_layers > 0) {
    std::vector<double> bytes(static_cast<std::size_t>(m.layers));
    for (int i = 0; i < m.layers; ++i) bytes[static_cast<std::size_t>(i)] = layer_activation_bytes(sc, m.layer(i));
    out.offload = offload_schedule(sc, out, bytes);
  }
  return out;
}

std::vector<LayerKindReport> layer_kind_reports(const Scenario& sc, const StepCosts& k) {
  std::vector<LayerKindReport> out;
  auto pass = [](const PassCost& c, const PassParts& parts) {
    LayerKindReport::Pass p;
    p.parts = parts;
    p.compute_s = c.compute_s;
    p.exposed_comm_s = c.exposed_comm_s();
    p.host_wait_s = c.host_wait_s;
    p.duration_s = c.duration_s();
    p.host_issue_s = c.host_s;
    p.kernels = c.kernels;
    return p;
  };
  for (std::size_t j = 0; j < k.kinds.size(); ++j) {
    const LayerKindCosts& kc = k.kinds[j];
    LayerKindReport r;
    r.attention = kc.kind.attention;
    r.ffn = kc.kind.ffn;
    r.layers = k.count(j, 0, sc.model.layers);  // the kind's layers, from the prefix counts the costs keep
    r.forward = pass(kc.pass.fwd, kc.fwd_parts);
    r.backward = pass(kc.pass.bwd, kc.bwd_parts);
    out.push_back(r);
  }
  return out;
}

}  // namespace parsim
